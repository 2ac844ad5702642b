// Every registered CUDA kernel variant, launched on device data, against the double CPU
// reference: both precisions, every CND, awkward sizes, per-option parameters and sides (calls and
// puts mixed in every vector) and book-wide ones (a book of puts), Greeks, and misaligned views.
// Outputs are poisoned (NaN) before every run and every element is checked. The public API on every
// backend (the CUDA host path included): black_scholes_test.cpp.

#include <gtest/gtest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <vector>

#include "black_scholes_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using testing::Book;

constexpr int kOutputs = 6;  // price, delta, gamma, vega, theta, rho
constexpr std::size_t kSizes[] = {0, 1, 31, 32, 33, 1023, 1025, (std::size_t{1} << 20) + 3};

// Per option: calls and puts mixed, in a pattern that puts both in every vector of the kernels.
std::vector<std::uint8_t> mixed_sides(std::size_t n) {
  std::vector<std::uint8_t> is_put(n);
  for (std::size_t i = 0; i < n; ++i) is_put[i] = static_cast<std::uint8_t>((i * 5) % 3 == 1);
  return is_put;
}

// CPU double reference: all six outputs for the (rounded) inputs the device sees, on the sides it
// sees (per option: mixed_sides; book-wide: every option a put).
template <class Real>
std::vector<std::vector<double>> reference(const Book& b, NormalCdf cdf, bool per_option) {
  const std::size_t n = b.size();
  auto round = [](const std::vector<double>& v) {
    std::vector<double> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = static_cast<Real>(v[i]);
    return r;
  };
  const auto s = round(b.spot), x = round(b.strike), t = round(b.maturity), r = round(b.rate),
             v = round(b.volatility), q = round(b.dividend);
  std::vector<std::vector<double>> out(kOutputs, std::vector<double>(n));
  const std::vector<std::uint8_t> sides = mixed_sides(n);
  BlackScholesInputs<double> in{static_cast<std::int64_t>(n),
                                s.data(),
                                x.data(),
                                t.data(),
                                {r.data()},
                                {v.data()},
                                {q.data()},
                                {sides.data()}};
  if (!per_option) {
    in.rate = {nullptr, static_cast<Real>(0.02)};
    in.volatility = {nullptr, static_cast<Real>(0.30)};
    in.dividend = {nullptr, 0};
    in.is_put = {nullptr, 1};
  }
  BlackScholesOutputs<double> o{out[0].data(), out[1].data(), out[2].data(),
                                out[3].data(), out[4].data(), out[5].data()};
  BlackScholesOptions options;
  options.cdf = cdf;
  price_black_scholes(Context::cpu(), in, o, options);
  return out;
}

// Device copies of a book in precision Real, placed `offset` elements past an aligned start so
// the vector variants can be given misaligned views (the sides too).
template <class Real>
struct DeviceBook {
  std::size_t n, offset;
  cuda::DeviceBuffer<Real> storage;  // 6 inputs + 6 outputs
  cuda::DeviceBuffer<std::uint8_t> sides;
  DeviceBook(const Book& b, std::size_t offset_elements)
      : n(b.size()),
        offset(offset_elements),
        storage(12 * (b.size() + offset_elements) + 1),
        sides(b.size() + offset_elements + 1) {
    const std::vector<double>* fields[] = {&b.spot, &b.strike,     &b.maturity,
                                           &b.rate, &b.volatility, &b.dividend};
    for (int f = 0; f < 6; ++f) {
      std::vector<Real> v(fields[f]->begin(), fields[f]->end());
      cuda::copy_to_device(array(f), v.data(), n * sizeof(Real));
    }
    cuda::copy_to_device(sides.data() + offset, mixed_sides(n).data(), n);
  }
  Real* array(int k) { return storage.data() + k * (n + offset) + offset; }
  BlackScholesInputs<Real> inputs(bool per_option) {
    BlackScholesInputs<Real> in{static_cast<std::int64_t>(n),
                                array(0),
                                array(1),
                                array(2),
                                {array(3)},
                                {array(4)},
                                {array(5)},
                                {sides.data() + offset}};
    if (!per_option) {
      in.rate = {nullptr, Real(0.02)}, in.volatility = {nullptr, Real(0.30)}, in.dividend = {};
      in.is_put = {nullptr, 1};
    }
    return in;
  }
  BlackScholesOutputs<Real> outputs(bool greeks) {
    BlackScholesOutputs<Real> o{array(6)};
    if (greeks) {
      o.delta = array(7), o.gamma = array(8), o.vega = array(9), o.theta = array(10);
      o.rho = array(11);
    }
    return o;
  }
  void poison() {
    cuda::fill_bytes_async(array(6), 0xFF, kOutputs * (n + offset) * sizeof(Real), nullptr);
  }
  std::vector<Real> download(int output) {
    std::vector<Real> v(n);
    cuda::copy_to_host(v.data(), array(6 + output), n * sizeof(Real));
    return v;
  }
};

// Greeks are checked with the same relative-to-scale bound, scaled by each Greek's own size.
template <class Real>
void expect_matches(const Book& b, const std::vector<std::vector<double>>& ref,
                    const std::vector<std::vector<Real>>& got, bool per_option, NormalCdf cdf,
                    const std::string& what) {
  const double eps = std::numeric_limits<Real>::epsilon();
  for (std::size_t k = 0; k < got.size(); ++k) {
    for (std::size_t i = 0; i < b.size(); ++i) {
      const double r = per_option ? b.rate[i] : 0.02, q = per_option ? b.dividend[i] : 0.0;
      // The reference uses the same CND, so only rounding separates the two: the erfc bound.
      // (The CPU reference of the fast mode uses accurate functions: add the intrinsics' error.)
      double tol = testing::price_tolerance<Real>(b.spot[i], b.strike[i], b.maturity[i], r, q,
                                                  NormalCdf::erfc);
      const double scale = b.spot[i] + b.strike[i];
      tol += testing::fast_math_error<Real>(cdf) * scale;
      // Greeks: a few dozen roundings of terms no larger than the Greek plus one unit (theta and
      // rho are sums of terms of the price's size, hence the absolute floor).
      if (k >= 1)
        tol = (256 * eps + 4 * testing::fast_math_error<Real>(cdf)) * (1 + std::abs(ref[k][i]));
      const double g = static_cast<double>(got[k][i]);
      ASSERT_TRUE(std::abs(g - ref[k][i]) <= tol)
          << what << " output " << k << " option " << i << ": got " << g << ", reference "
          << ref[k][i] << ", tolerance " << tol;
    }
  }
}

enum class BookKind { seed_like, extreme };

template <class Real>
void check_every_variant(std::size_t offset, BookKind kind = BookKind::seed_like) {
  const std::vector<std::size_t> sizes =
      kind == BookKind::seed_like ? std::vector<std::size_t>(std::begin(kSizes), std::end(kSizes))
                                  : std::vector<std::size_t>{1025, (std::size_t{1} << 16) + 1};
  const gpukit::testing::TestSeed test_seed;
  for (std::size_t n : sizes) {
    const std::uint64_t seed = test_seed.value() + 7919 * n + offset;
    const Book b = kind == BookKind::seed_like ? testing::seed_like_book(n, seed)
                                               : testing::extreme_book(n, seed);
    DeviceBook<Real> d(b, offset);
    for (NormalCdf cdf :
         {NormalCdf::erfc, NormalCdf::hull_polynomial, NormalCdf::hull_polynomial_fast_math}) {
      for (bool per_option : {true, false}) {
        const auto ref = reference<Real>(b, cdf, per_option);
        // Greeks take price_option in every variant; the seed-like books check them.
        for (bool greeks : {false, kind == BookKind::seed_like}) {
          for (const BlackScholesVariant& v : black_scholes_variants()) {
            d.poison();
            v.launch(d.inputs(per_option), d.outputs(greeks), cdf, nullptr);
            cuda::synchronize_device();
            std::vector<std::vector<Real>> got;
            for (int k = 0; k < (greeks ? kOutputs : 1); ++k) got.push_back(d.download(k));
            expect_matches<Real>(
                b, ref, got, per_option, cdf,
                ::testing::PrintToString(v.info.name) +
                    (kind == BookKind::extreme ? " extreme book" : "") + " n=" + std::to_string(n) +
                    " seed=" + std::to_string(seed) + " offset=" + std::to_string(offset) +
                    (per_option ? " per-option, calls and puts" : " book-wide, puts") + " cdf " +
                    std::to_string(static_cast<int>(cdf)) + (greeks ? " greeks" : ""));
            if (::testing::Test::HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(BlackScholesGpu, RegistryIsNonEmptyAndHasTheSeedFirst) {
  GPUKIT_REQUIRE_GPU();
  ASSERT_FALSE(black_scholes_variants().empty());
  EXPECT_EQ(black_scholes_variants().front().info.name, "seed");
  EXPECT_NO_THROW(default_black_scholes_variant());
  EXPECT_THROW(find_black_scholes_variant("no-such-variant"), InvalidInput);
}

TEST(BlackScholesGpu, EveryVariantFloatMatchesTheReference) {
  GPUKIT_REQUIRE_GPU();
  check_every_variant<float>(0);
}

TEST(BlackScholesGpu, EveryVariantDoubleMatchesTheReference) {
  GPUKIT_REQUIRE_GPU();
  check_every_variant<double>(0);
}

// Deep in and out of the money, 1-day to 30-year maturities, volatilities 0.01-3: both tails of
// both CNDs, calls and puts, in every variant (the lean-math variants' arithmetic included).
TEST(BlackScholesGpu, EveryVariantMatchesTheReferenceOnExtremeBooks) {
  GPUKIT_REQUIRE_GPU();
  check_every_variant<float>(0, BookKind::extreme);
  check_every_variant<double>(0, BookKind::extreme);
  check_every_variant<float>(1, BookKind::extreme);
}

TEST(BlackScholesGpu, MisalignedViewsFallBackAndStayCorrect) {
  GPUKIT_REQUIRE_GPU();
  check_every_variant<float>(1);
  check_every_variant<double>(1);
}

}  // namespace
}  // namespace gpukit::finance
