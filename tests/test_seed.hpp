#pragma once
// The seed policy of every randomized test: a fixed default, so that CI runs the same data every
// time, or the value of GPUKIT_TEST_SEED (decimal or 0x-prefixed hex) to replay a failure or to
// explore other data. Every failure inside a test that holds a TestSeed names the seed and the
// command-line variable that replays it.

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <source_location>
#include <string>

namespace gpukit::testing {

/// The seed of randomized tests where GPUKIT_TEST_SEED is not set.
inline constexpr std::uint64_t kDefaultTestSeed = 5489;

/// The seed GPUKIT_TEST_SEED's `value` names: nullopt when it is not a whole number below 2^64
/// (decimal, or hex after 0x). `value` is the variable's value.
inline std::optional<std::uint64_t> parse_test_seed(const char* value) {
  if (value == nullptr || value[0] < '0' || value[0] > '9') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  const unsigned long long seed = std::strtoull(value, &end, 0);
  if (errno != 0 || end == value || *end != '\0') return std::nullopt;
  return static_cast<std::uint64_t>(seed);
}

/// GPUKIT_TEST_SEED when set, otherwise kDefaultTestSeed. A malformed value fails the calling test
/// (a typo must not silently run the default data) and gives the default.
inline std::uint64_t test_seed() {
  const char* value = std::getenv("GPUKIT_TEST_SEED");
  if (value == nullptr || value[0] == '\0') return kDefaultTestSeed;
  if (const auto seed = parse_test_seed(value)) return *seed;
  ADD_FAILURE() << "GPUKIT_TEST_SEED=" << value << " is not a whole number (decimal or 0x hex)";
  return kDefaultTestSeed;
}

/// The seed of one test, held for the test's scope: while it lives, every failure message names it
/// ("GPUKIT_TEST_SEED=... replays this"). Derive every random input of the test from value().
class TestSeed {
 public:
  explicit TestSeed(std::source_location where = std::source_location::current())
      : value_(test_seed()),
        trace_(where.file_name(), static_cast<int>(where.line()),
               "GPUKIT_TEST_SEED=" + std::to_string(value_) + " replays this") {}
  std::uint64_t value() const { return value_; }

 private:
  std::uint64_t value_;
  ::testing::ScopedTrace trace_;
};

}  // namespace gpukit::testing
