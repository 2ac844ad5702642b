// The CLI's OpenMP wait policy (README "Threads"): passive unless the user chose one. libgomp
// reads it when it loads, before main (apps/gpukit/openmp_defaults.cpp says how the CLI answers);
// what libgomp took is observed through its own report (OMP_DISPLAY_ENV=verbose prints its settings
// on stderr when it loads: GOMP_SPINCOUNT 0 is passive waiting, 300000 its default of spinning a
// few milliseconds, 30000000000 active).

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "cli_test_support.hpp"

namespace gpukit::cli_testing {
namespace {

// Sets (or, with nullptr, removes) environment variables for one test, then restores them.
class Environment {
 public:
  void set(const char* name, const char* value) {
    const char* old = std::getenv(name);
    saved_.push_back({name, old != nullptr ? std::optional<std::string>(old) : std::nullopt});
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~Environment() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// The spin counts libgomp reported, one per time it was loaded.
std::vector<std::string> reported_spin_counts(const std::string& err) {
  static const std::regex spin("GOMP_SPINCOUNT = '([0-9]+)'");
  std::vector<std::string> counts;
  for (std::sregex_iterator it(err.begin(), err.end(), spin), end; it != end; ++it) {
    counts.push_back((*it)[1]);
  }
  return counts;
}

TEST(WaitPolicy, PassiveWhenTheUserChoseNone) {
  Environment env;
  env.set("OMP_WAIT_POLICY", nullptr);
  env.set("GOMP_SPINCOUNT", nullptr);
  env.set("OMP_DISPLAY_ENV", "verbose");
  const Result r = run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(reported_spin_counts(r.err), std::vector<std::string>{"0"}) << r.err;
  EXPECT_NE(r.out.find("gpukit"), std::string::npos);
}

TEST(WaitPolicy, TheUsersChoiceStands) {
  Environment env;
  env.set("OMP_DISPLAY_ENV", "verbose");
  env.set("GOMP_SPINCOUNT", nullptr);
  env.set("OMP_WAIT_POLICY", "active");
  Result r = run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(reported_spin_counts(r.err), std::vector<std::string>{"30000000000"}) << r.err;
  env.set("OMP_WAIT_POLICY", nullptr);
  env.set("GOMP_SPINCOUNT", "1000");
  r = run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(reported_spin_counts(r.err), std::vector<std::string>{"1000"}) << r.err;
}

}  // namespace
}  // namespace gpukit::cli_testing
