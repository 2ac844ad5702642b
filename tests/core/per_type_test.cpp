// PerType, the one table of per-element-type functions every registry holds: the table
// PerType::of builds gives each type its own function, a default table is all null, and the
// instantiation macro makes every listed type's function (this file links them).

#include "gpukit/core/per_type.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <typeinfo>

namespace gpukit {
namespace {

template <class T>
using Describe = std::string(T value);

// A launcher family declared by the function type, as the launchers headers declare theirs.
template <class T>
Describe<T> describe;

template <class T>
std::string describe(T value) {
  return std::string(typeid(T).name()) + ":" + std::to_string(value);
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, Describe, describe)

// A family with a second template argument after the type, as the seed reduction kernels'.
template <class T, int kScale>
Describe<T> describe_scaled;

template <class T, int kScale>
std::string describe_scaled(T value) {
  return describe<T>(static_cast<T>(value * kScale));
}
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, Describe, describe_scaled, 3)

using Describers = PerType<Describe, PrimitiveTypes>;
constexpr Describers kDescribers = Describers::of([]<class T> { return &describe<T>; });
// A table holds the types of its list and no other (get<T>() of another does not compile).
static_assert(Describers::holds<std::uint32_t> && !Describers::holds<std::int16_t>);
static_assert(!PerType<Describe, RealTypes>::holds<std::int32_t>);

TEST(PerType, EachTypeGetsItsOwnFunction) {
  EXPECT_EQ(kDescribers.get<std::int32_t>(), &describe<std::int32_t>);
  EXPECT_EQ(kDescribers.get<std::int64_t>(), &describe<std::int64_t>);
  EXPECT_EQ(kDescribers.get<std::uint32_t>(), &describe<std::uint32_t>);
  EXPECT_EQ(kDescribers.get<float>(), &describe<float>);
  EXPECT_EQ(kDescribers.get<double>(), &describe<double>);
  EXPECT_EQ(kDescribers.get<std::int64_t>()(-7), std::string(typeid(std::int64_t).name()) + ":-7");
  EXPECT_EQ(kDescribers.get<std::uint32_t>()(7u), std::string(typeid(std::uint32_t).name()) + ":7");
}

TEST(PerType, TemplateArgumentsAfterTheTypeAreInstantiatedToo) {
  constexpr auto scaled =
      PerType<Describe, RealTypes>::of([]<class T> { return &describe_scaled<T, 3>; });
  EXPECT_EQ(scaled.get<double>()(2.5), describe<double>(7.5));
  EXPECT_EQ(scaled.get<float>()(2.0f), describe<float>(6.0f));
}

TEST(PerType, ADefaultTableHoldsNoFunction) {
  constexpr PerType<Describe, RealTypes> empty;
  EXPECT_EQ(empty.get<float>(), nullptr);
  EXPECT_EQ(empty.get<double>(), nullptr);
}

}  // namespace
}  // namespace gpukit
