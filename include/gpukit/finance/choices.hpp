#pragma once
// The words `gpukit bs`, `gpukit mc`, `gpukit iv` and Python's pricing functions take for
// finance's choices (the normal CDF, the precision, the barrier monitoring, the Monte Carlo
// sampler, the implied volatility model), read once here: each front door names
// the argument in its own words ("cdf" in Python, "--cdf" on the command line) and gets the same
// rule and message.

#include <span>
#include <string_view>

#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance {

/// The normal CDF's words, in order: "erfc" (NormalCdf::erfc), "hull" (hull_polynomial),
/// "hull-fast" (hull_polynomial_fast_math).
std::span<const std::string_view> normal_cdf_names();
/// The NormalCdf `word` names; InvalidInput "{argument} must be erfc, hull or hull-fast, got
/// '{word}'" otherwise.
NormalCdf parse_normal_cdf(std::string_view argument, std::string_view word);

/// The precision's words, in order: "double" (Precision::float64), "float" (float32).
std::span<const std::string_view> precision_names();
/// The Precision `word` names; InvalidInput "{argument} must be double or float, got '{word}'"
/// otherwise.
Precision parse_precision(std::string_view argument, std::string_view word);

/// The barrier monitoring's words, in order: "discrete", "continuous".
std::span<const std::string_view> barrier_monitoring_names();
/// The BarrierMonitoring `word` names; InvalidInput "{argument} must be discrete or continuous,
/// got '{word}'" otherwise.
BarrierMonitoring parse_barrier_monitoring(std::string_view argument, std::string_view word);

/// The Monte Carlo samplers' words, in order: "philox" (MonteCarloSampler::philox), "sobol".
std::span<const std::string_view> monte_carlo_sampler_names();
/// The MonteCarloSampler `word` names; InvalidInput "{argument} must be philox or sobol, got
/// '{word}'" otherwise.
MonteCarloSampler parse_monte_carlo_sampler(std::string_view argument, std::string_view word);

/// The implied volatility models' words, in order: "black-scholes" (VolatilityModel::
/// black_scholes), "black76", "bachelier".
std::span<const std::string_view> volatility_model_names();
/// The VolatilityModel `word` names; InvalidInput "{argument} must be black-scholes, black76 or
/// bachelier, got '{word}'" otherwise.
VolatilityModel parse_volatility_model(std::string_view argument, std::string_view word);
/// The word of `model` (the inverse of parse_volatility_model).
std::string_view volatility_model_name(VolatilityModel model);

}  // namespace gpukit::finance
