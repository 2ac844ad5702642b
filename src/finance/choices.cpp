#include "gpukit/finance/choices.hpp"

#include <array>
#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::finance {

namespace {

constexpr std::array<std::string_view, 3> kNormalCdfNames = {"erfc", "hull", "hull-fast"};
constexpr std::array<std::string_view, 2> kPrecisionNames = {"double", "float"};
constexpr std::array<std::string_view, 2> kMonitoringNames = {"discrete", "continuous"};
constexpr std::array<std::string_view, 2> kSamplerNames = {"philox", "sobol"};
constexpr std::array<std::string_view, 3> kVolatilityModelNames = {"black-scholes", "black76",
                                                                   "bachelier"};
constexpr VolatilityModel kVolatilityModels[] = {
    VolatilityModel::black_scholes, VolatilityModel::black76, VolatilityModel::bachelier};

// The index of `word` among `names`; InvalidInput "{argument} must be a, b or c, got '{word}'".
template <std::size_t N>
std::size_t index_of(const std::array<std::string_view, N>& names, std::string_view argument,
                     std::string_view word) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == word) return i;
  }
  std::string choices;
  for (std::size_t i = 0; i < N; ++i) {
    choices += i == 0 ? "" : i + 1 == N ? " or " : ", ";
    choices += names[i];
  }
  throw InvalidInput(fmt::format("{} must be {}, got '{}'", argument, choices, word));
}

}  // namespace

std::span<const std::string_view> normal_cdf_names() { return kNormalCdfNames; }

NormalCdf parse_normal_cdf(std::string_view argument, std::string_view word) {
  constexpr NormalCdf kCdfs[] = {NormalCdf::erfc, NormalCdf::hull_polynomial,
                                 NormalCdf::hull_polynomial_fast_math};
  return kCdfs[index_of(kNormalCdfNames, argument, word)];
}

std::span<const std::string_view> precision_names() { return kPrecisionNames; }

Precision parse_precision(std::string_view argument, std::string_view word) {
  constexpr Precision kPrecisions[] = {Precision::float64, Precision::float32};
  return kPrecisions[index_of(kPrecisionNames, argument, word)];
}

std::span<const std::string_view> barrier_monitoring_names() { return kMonitoringNames; }

BarrierMonitoring parse_barrier_monitoring(std::string_view argument, std::string_view word) {
  constexpr BarrierMonitoring kMonitorings[] = {BarrierMonitoring::discrete,
                                                BarrierMonitoring::continuous};
  return kMonitorings[index_of(kMonitoringNames, argument, word)];
}

std::span<const std::string_view> monte_carlo_sampler_names() { return kSamplerNames; }

MonteCarloSampler parse_monte_carlo_sampler(std::string_view argument, std::string_view word) {
  constexpr MonteCarloSampler kSamplers[] = {MonteCarloSampler::philox, MonteCarloSampler::sobol};
  return kSamplers[index_of(kSamplerNames, argument, word)];
}

std::span<const std::string_view> volatility_model_names() { return kVolatilityModelNames; }

VolatilityModel parse_volatility_model(std::string_view argument, std::string_view word) {
  return kVolatilityModels[index_of(kVolatilityModelNames, argument, word)];
}

std::string_view volatility_model_name(VolatilityModel model) {
  for (std::size_t i = 0; i < kVolatilityModelNames.size(); ++i) {
    if (kVolatilityModels[i] == model) return kVolatilityModelNames[i];
  }
  return "unknown";
}

}  // namespace gpukit::finance
