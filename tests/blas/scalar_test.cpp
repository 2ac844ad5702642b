// The scalar rule of gemm and axpy (gpukit/blas/scalar.hpp): what each element type accepts, how
// it rounds, and the boundaries of its range, from decimal text and from a double.

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "gpukit/blas/scalar.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas {
namespace {

// The message of the InvalidInput that `f` throws ("" when it throws none).
template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(ScalarRule, DecimalTextIsRoundedOnceIntoTheElementType) {
  // 2.7 read as a float is 2.7f; through double it could differ in the last bit for some texts,
  // and 0.1f == (float)0.1 anyway: what matters is that each equals from_chars into the type.
  EXPECT_EQ(parse_scalar<float>("--alpha", "2.7"), 2.7f);
  EXPECT_EQ(parse_scalar<double>("--alpha", "2.7"), 2.7);
  EXPECT_EQ(parse_scalar<float>("--alpha", "+.5"), 0.5f);
  EXPECT_EQ(parse_scalar<double>("--alpha", "-1e-3"), -1e-3);
  EXPECT_TRUE(std::signbit(parse_scalar<float>("--alpha", "-0")));
  EXPECT_EQ(parse_scalar<float>("--beta", "0"), 0.0f);
  // 1.00000005960464477539 is the midpoint between 1 and the next float, 1 + 2^-23, plus a digit
  // beyond double's precision: rounding through double would land on the midpoint and round to
  // even (1); read directly it is above the midpoint and rounds up.
  EXPECT_EQ(parse_scalar<float>("--alpha", "1.000000059604644775390625001"), 1.0f + 0x1p-23f);
}

TEST(ScalarRule, TheLargestAndSmallestMagnitudesOfEachTypeAreAccepted) {
  EXPECT_EQ(parse_scalar<float>("--alpha", "3.4028235e38"), std::numeric_limits<float>::max());
  EXPECT_EQ(parse_scalar<float>("--alpha", "1e-45"), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(parse_scalar<double>("--alpha", "1.7976931348623157e308"),
            std::numeric_limits<double>::max());
  EXPECT_EQ(parse_scalar<double>("--alpha", "5e-324"), std::numeric_limits<double>::denorm_min());
  EXPECT_EQ(scalar_from_double<float>("alpha", 3.4028235e38), std::numeric_limits<float>::max());
  // Just below the midpoint between float's largest and 2^128 still rounds to the largest.
  EXPECT_EQ(scalar_from_double<float>("alpha", std::nextafter(0x1.ffffffp+127, 0.0)),
            std::numeric_limits<float>::max());
  EXPECT_EQ(scalar_from_double<float>("alpha", 1e-45), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(scalar_from_double<double>("alpha", 1e300), 1e300);
}

TEST(ScalarRule, NanInfinitiesAndTextThatIsNoNumberAreRefusedNamingTheScalar) {
  for (const char* text : {"nan", "-nan", "inf", "-inf", "infinity", "NaN"}) {
    EXPECT_EQ(refusal([&] { parse_scalar<double>("--alpha", text); }),
              std::string("--alpha must be finite, got '") + text + "'");
    EXPECT_EQ(refusal([&] { parse_scalar<float>("--beta", text); }),
              std::string("--beta must be finite, got '") + text + "'");
  }
  for (const char* text : {"two", "", "1,5", "0x10", "1e", "--1", "+-1", "1 ", " 1", "1e5x"}) {
    EXPECT_EQ(refusal([&] { parse_scalar<double>("--alpha", text); }),
              std::string("--alpha must be a number, got '") + text + "'");
  }
  EXPECT_EQ(refusal([] { scalar_from_double<double>("beta", std::nan("")); }),
            "beta must be finite, got nan");
  EXPECT_EQ(
      refusal([] { scalar_from_double<float>("alpha", -std::numeric_limits<double>::infinity()); }),
      "alpha must be finite, got -inf");
}

TEST(ScalarRule, NumbersBeyondTheElementTypesRangeAreRefused) {
  EXPECT_EQ(refusal([] { parse_scalar<float>("--alpha", "1e39"); }),
            "--alpha must fit float32 (magnitude at most 3.4028235e+38), got '1e39'");
  // The midpoint between float's largest and 2^128, 2^128 - 2^103, rounds (to even) to Inf; one
  // less rounds to the largest.
  EXPECT_NE(
      refusal([] { parse_scalar<float>("--alpha", "-340282356779733661637539395458142568448"); }),
      "");
  EXPECT_EQ(parse_scalar<float>("--alpha", "340282356779733661637539395458142568447"),
            std::numeric_limits<float>::max());
  EXPECT_EQ(refusal([] { parse_scalar<double>("--beta", "1e400"); }),
            "--beta must fit float64 (magnitude at most 1.7976931348623157e+308), got '1e400'");
  EXPECT_EQ(refusal([] { scalar_from_double<float>("alpha", 1e39); }),
            "alpha must fit float32 (magnitude at most 3.4028235e+38), got 1e+39");
  EXPECT_NE(refusal([] { scalar_from_double<float>("alpha", -0x1.ffffffp+127); }), "");
}

TEST(ScalarRule, NonZeroNumbersThatWouldRoundToZeroAreRefused) {
  EXPECT_EQ(refusal([] { parse_scalar<float>("--alpha", "1e-50"); }),
            "--alpha must not round to 0 in float32 (magnitude at least 1e-45), got '1e-50'");
  EXPECT_EQ(refusal([] { parse_scalar<float>("--alpha", "-7e-46"); }),
            "--alpha must not round to 0 in float32 (magnitude at least 1e-45), got '-7e-46'");
  EXPECT_EQ(refusal([] { parse_scalar<double>("--alpha", "1e-400"); }),
            "--alpha must not round to 0 in float64 (magnitude at least 5e-324), got '1e-400'");
  EXPECT_EQ(refusal([] { scalar_from_double<float>("beta", 1e-50); }),
            "beta must not round to 0 in float32 (magnitude at least 1e-45), got 1e-50");
  // Zero itself, however written, is zero.
  EXPECT_EQ(parse_scalar<float>("--alpha", "0.000e-99999"), 0.0f);
  EXPECT_EQ(scalar_from_double<float>("alpha", 0.0), 0.0f);
}

}  // namespace
}  // namespace gpukit::blas
