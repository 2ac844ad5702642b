// The words `gpukit bs`, `gpukit mc`, `gpukit iv` and Python take for finance's choices
// (choices.hpp), read once in the library: each word gives its value, the lists are the words in
// the documented order, a bad word is InvalidInput naming the argument in the caller's words, and
// the Monte Carlo options both front doors price with (monte_carlo_options).

#include "gpukit/finance/choices.hpp"

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "refusal_test_support.hpp"

namespace gpukit::finance {
namespace {

using gpukit::testing::refusal;

std::vector<std::string_view> words(std::span<const std::string_view> names) {
  return {names.begin(), names.end()};
}

TEST(FinanceChoices, EachCdfWordNamesItsFunction) {
  EXPECT_EQ(words(normal_cdf_names()),
            (std::vector<std::string_view>{"erfc", "hull", "hull-fast"}));
  EXPECT_EQ(parse_normal_cdf("--cdf", "erfc"), NormalCdf::erfc);
  EXPECT_EQ(parse_normal_cdf("--cdf", "hull"), NormalCdf::hull_polynomial);
  EXPECT_EQ(parse_normal_cdf("--cdf", "hull-fast"), NormalCdf::hull_polynomial_fast_math);
  EXPECT_EQ(refusal([] { parse_normal_cdf("cdf", "bogus"); }),
            "cdf must be erfc, hull or hull-fast, got 'bogus'");
  EXPECT_EQ(refusal([] { parse_normal_cdf("--cdf", "Hull"); }),
            "--cdf must be erfc, hull or hull-fast, got 'Hull'");
}

TEST(FinanceChoices, EachPrecisionWordNamesItsPrecision) {
  EXPECT_EQ(words(precision_names()), (std::vector<std::string_view>{"double", "float"}));
  EXPECT_EQ(parse_precision("--precision", "double"), Precision::float64);
  EXPECT_EQ(parse_precision("--precision", "float"), Precision::float32);
  EXPECT_EQ(refusal([] { parse_precision("precision", "half"); }),
            "precision must be double or float, got 'half'");
  EXPECT_EQ(refusal([] { parse_precision("--precision", ""); }),
            "--precision must be double or float, got ''");
}

TEST(FinanceChoices, EachVolatilityModelWordNamesItsModel) {
  EXPECT_EQ(words(volatility_model_names()),
            (std::vector<std::string_view>{"black-scholes", "black76", "bachelier"}));
  EXPECT_EQ(parse_volatility_model("--model", "black-scholes"), VolatilityModel::black_scholes);
  EXPECT_EQ(parse_volatility_model("--model", "black76"), VolatilityModel::black76);
  EXPECT_EQ(parse_volatility_model("--model", "bachelier"), VolatilityModel::bachelier);
  for (const std::string_view word : volatility_model_names()) {
    EXPECT_EQ(volatility_model_name(parse_volatility_model("model", word)), word);
  }
  EXPECT_EQ(refusal([] { parse_volatility_model("model", "normal"); }),
            "model must be black-scholes, black76 or bachelier, got 'normal'");
  EXPECT_EQ(refusal([] { parse_volatility_model("--model", "black_scholes"); }),
            "--model must be black-scholes, black76 or bachelier, got 'black_scholes'");
}

TEST(FinanceChoices, EachMonitoringWordNamesItsMonitoring) {
  EXPECT_EQ(words(barrier_monitoring_names()),
            (std::vector<std::string_view>{"discrete", "continuous"}));
  EXPECT_EQ(parse_barrier_monitoring("--monitoring", "discrete"), BarrierMonitoring::discrete);
  EXPECT_EQ(parse_barrier_monitoring("--monitoring", "continuous"), BarrierMonitoring::continuous);
  EXPECT_EQ(refusal([] { parse_barrier_monitoring("monitoring", "daily"); }),
            "monitoring must be discrete or continuous, got 'daily'");
}

TEST(FinanceChoices, MonteCarloOptionsCarryTheRequestAndItsVarianceReductionFactors) {
  const MonteCarloOptions plain = monte_carlo_options({});
  EXPECT_EQ(plain.paths, MonteCarloRequest{}.paths);
  EXPECT_EQ(plain.seed, MonteCarloRequest{}.seed);
  EXPECT_EQ(plain.monitoring, BarrierMonitoring::discrete);
  EXPECT_FALSE(plain.antithetic || plain.control_variate || plain.greeks);
  EXPECT_FALSE(plain.variance_reduction_factors);
  EXPECT_EQ(plain.precision, Precision::float64);
  EXPECT_EQ(plain.first_option_index, 0u);
  EXPECT_FALSE(plain.progress);

  const MonteCarloOptions asked = monte_carlo_options({.paths = 4096,
                                                       .seed = 7,
                                                       .monitoring = BarrierMonitoring::continuous,
                                                       .antithetic = true,
                                                       .control_variate = false,
                                                       .greeks = true,
                                                       .precision = Precision::float32});
  EXPECT_EQ(asked.paths, 4096);
  EXPECT_EQ(asked.seed, 7u);
  EXPECT_EQ(asked.monitoring, BarrierMonitoring::continuous);
  EXPECT_TRUE(asked.antithetic);
  EXPECT_FALSE(asked.control_variate);
  EXPECT_TRUE(asked.greeks);
  EXPECT_EQ(asked.precision, Precision::float32);
  // The factors are reported whenever a variance reduction is on, for either technique.
  EXPECT_TRUE(asked.variance_reduction_factors);
  EXPECT_TRUE(monte_carlo_options({.control_variate = true}).variance_reduction_factors);
}

}  // namespace
}  // namespace gpukit::finance
