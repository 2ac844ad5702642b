// The seed policy of the randomized tests (test_seed.hpp): what GPUKIT_TEST_SEED may hold, and
// that a failure inside a test holding a TestSeed names the seed that replays it.

#include "test_seed.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace {

using gpukit::testing::parse_test_seed;
using gpukit::testing::TestSeed;

TEST(TestSeed, ParsesDecimalAndHexAndRefusesTheRest) {
  EXPECT_EQ(parse_test_seed("0"), 0u);
  EXPECT_EQ(parse_test_seed("12345"), 12345u);
  EXPECT_EQ(parse_test_seed("0x5eed"), 0x5eedu);
  EXPECT_EQ(parse_test_seed("18446744073709551615"), 18446744073709551615u);
  EXPECT_EQ(parse_test_seed(nullptr), std::nullopt);
  EXPECT_EQ(parse_test_seed(""), std::nullopt);
  EXPECT_EQ(parse_test_seed("-1"), std::nullopt);  // strtoull would wrap it to 2^64 - 1
  EXPECT_EQ(parse_test_seed(" 7"), std::nullopt);
  EXPECT_EQ(parse_test_seed("7x"), std::nullopt);
  EXPECT_EQ(parse_test_seed("18446744073709551616"), std::nullopt);  // 2^64
}

// Sets GPUKIT_TEST_SEED for one scope and restores what was there.
class ScopedSeedVariable {
 public:
  explicit ScopedSeedVariable(const char* value) {
    if (const char* old = std::getenv("GPUKIT_TEST_SEED")) saved_ = old, had_ = true;
    if (value) {
      setenv("GPUKIT_TEST_SEED", value, 1);
    } else {
      unsetenv("GPUKIT_TEST_SEED");
    }
  }
  ~ScopedSeedVariable() {
    if (had_) {
      setenv("GPUKIT_TEST_SEED", saved_.c_str(), 1);
    } else {
      unsetenv("GPUKIT_TEST_SEED");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(TestSeed, TheVariableOverridesTheFixedDefault) {
  {
    ScopedSeedVariable unset(nullptr);
    EXPECT_EQ(TestSeed().value(), gpukit::testing::kDefaultTestSeed);
  }
  ScopedSeedVariable set("424242");
  EXPECT_EQ(TestSeed().value(), 424242u);
}

void fail_while_holding_a_seed() {
  ScopedSeedVariable set("0x10");
  const TestSeed seed;
  ADD_FAILURE() << "some check failed";
}

TEST(TestSeed, AFailureNamesTheSeedThatReplaysIt) {
  EXPECT_NONFATAL_FAILURE(fail_while_holding_a_seed(), "GPUKIT_TEST_SEED=16 replays this");
}

void malformed_seed() {
  ScopedSeedVariable set("seven");
  EXPECT_EQ(TestSeed().value(), gpukit::testing::kDefaultTestSeed);
}

TEST(TestSeed, AMalformedValueFailsTheTest) {
  EXPECT_NONFATAL_FAILURE(malformed_seed(), "GPUKIT_TEST_SEED=seven is not a whole number");
}

}  // namespace
