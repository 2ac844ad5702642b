// The operation concepts (gpukit/primitives/operation.hpp) at compile time: every operation the
// library dispatches to, for reductions and scans alike, satisfies them, and types that miss a
// part of the shape do not. A failing assertion fails the build of this test.

#include "gpukit/primitives/operation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <string>
#include <vector>

#include "primitives/reduce_dispatch.hpp"
#include "primitives/reduce_ops.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives {
namespace {

// Every reduce operation the dispatch can pick for T (with_canonical_op and with_ladder_op
// instantiate f for each of them) and every scan operation (with_scan_op, exact and wrapping
// sums): all stateless, so one op shape serves both algorithms. The assertions fire when the
// function is instantiated (in the test below), at compile time.
template <class T>
bool library_ops_satisfy_the_concepts() {
  const auto check = [](auto op) {
    static_assert(Operation<decltype(op)>);
    static_assert(StatelessOperation<decltype(op)>);
    return 0;
  };
  (void)detail::with_canonical_op<T>(ReduceOp::sum, false, 0, check);
  (void)detail::with_canonical_op<T>(ReduceOp::sum, true, 0, check);
  (void)detail::with_ladder_op<T>(ReduceOp::sum, check);
  (void)detail::with_scan_op<T, true>(ScanOp::sum, check);
  (void)detail::with_scan_op<T, false>(ScanOp::sum, check);
  return true;
}
static_assert(StatelessOperation<detail::CompensatedSumOp<double>>);

// A stateful operation (its identity a member value) serves the scans, not the reduce engine.
struct OffsetMax {
  using Input = int;
  using Acc = int;
  int floor;
  Acc identity() const { return floor; }
  Acc load(Input x) const { return x; }
  Acc operator()(Acc a, Acc b) const { return a < b ? b : a; }
};
static_assert(Operation<OffsetMax>);
static_assert(!StatelessOperation<OffsetMax>);

// Wrong shapes.
struct NoIdentity {
  using Input = int;
  using Acc = int;
  static Acc load(Input x) { return x; }
  Acc operator()(Acc a, Acc b) const { return a + b; }
};
struct NoLoad {
  using Input = int;
  using Acc = int;
  static Acc identity() { return 0; }
  Acc operator()(Acc a, Acc b) const { return a + b; }
};
struct CombineGivesAnotherType {
  using Input = int;
  using Acc = long long;
  static Acc identity() { return 0; }
  static Acc load(Input x) { return x; }
  double operator()(Acc a, Acc b) const { return double(a) + double(b); }
};
struct NoAccType {
  using Input = int;
  static int identity() { return 0; }
  static int load(Input x) { return x; }
  int operator()(int a, int b) const { return a + b; }
};
struct NotTriviallyCopyableAcc {
  using Input = int;
  using Acc = std::vector<int>;
  static Acc identity() { return {}; }
  static Acc load(Input x) { return {x}; }
  Acc operator()(Acc a, const Acc& b) const {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
};
static_assert(!Operation<int>);
static_assert(!Operation<std::string>);
static_assert(!Operation<NoIdentity>);
static_assert(!Operation<NoLoad>);
static_assert(!Operation<CombineGivesAnotherType>);
static_assert(!Operation<NoAccType>);
static_assert(!Operation<NotTriviallyCopyableAcc>);
static_assert(!StatelessOperation<NoIdentity>);

// The static assertions run when this file compiles; the test instantiates the library's
// operations for every element type of the API.
TEST(OperationConcept, LibraryOperationsSatisfyIt) {
  EXPECT_TRUE(library_ops_satisfy_the_concepts<std::int32_t>());
  EXPECT_TRUE(library_ops_satisfy_the_concepts<std::uint32_t>());
  EXPECT_TRUE(library_ops_satisfy_the_concepts<std::int64_t>());
  EXPECT_TRUE(library_ops_satisfy_the_concepts<float>());
  EXPECT_TRUE(library_ops_satisfy_the_concepts<double>());
}

// MinOp and MaxOp on floats, written branch-free for the CPU's vectors, against their rules
// written here as cases: a NaN in either operand gives the canonical quiet NaN; -0 is below +0;
// otherwise the smaller (larger) value. Every ordered pair of special and ordinary values, bit
// for bit.
template <class T>
void expect_min_max_rules() {
  using Limits = std::numeric_limits<T>;
  const T values[] = {-Limits::infinity(), -Limits::max(), T(-1.5), -Limits::min(),
                      -Limits::denorm_min(), T(-0.0), T(0.0), Limits::denorm_min(),
                      Limits::min(), T(1.5), Limits::max(), Limits::infinity(),
                      Limits::quiet_NaN(), -Limits::quiet_NaN()};
  const auto bits = [](T x) {
    using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
    return std::bit_cast<Bits>(x);
  };
  for (const T a : values) {
    for (const T b : values) {
      T want_min, want_max;
      if (std::isnan(a) || std::isnan(b)) {
        want_min = want_max = Limits::quiet_NaN();
      } else if (a == b) {  // equal values, or the two zeros
        want_min = std::signbit(a) ? a : b;
        want_max = std::signbit(a) ? b : a;
      } else {
        want_min = std::min(a, b);
        want_max = std::max(a, b);
      }
      EXPECT_EQ(bits(detail::MinOp<T>{}(a, b)), bits(want_min)) << "min(" << a << ", " << b << ")";
      EXPECT_EQ(bits(detail::MaxOp<T>{}(a, b)), bits(want_max)) << "max(" << a << ", " << b << ")";
    }
  }
}

TEST(ReduceOps, MinAndMaxFollowTheirRulesOnEveryPairOfSpecialValues) {
  expect_min_max_rules<float>();
  expect_min_max_rules<double>();
}

}  // namespace
}  // namespace gpukit::primitives
