// Monte Carlo option pricing: validation, the CPU backend (OpenMP over tiles), the CUDA dispatch,
// the estimators and bump-and-reprice Greeks.

#include "gpukit/finance/monte_carlo.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "finance/monte_carlo_internal.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::finance {

namespace mc {

namespace {

double value_of(const PerOption<double>& p, std::int64_t i) {
  return p.values != nullptr ? p.values[i] : p.scalar;
}

template <class Real>
double rounded(double value) {
  return static_cast<double>(static_cast<Real>(value));
}

bool is_down(BarrierType type) {
  return type == BarrierType::down_out || type == BarrierType::down_in;
}

// 0 / 0 (both estimators exact) reads as no reduction.
double variance_ratio(double reference, double reduced) {
  if (reduced > 0) return reference / reduced;
  return reference > 0 ? std::numeric_limits<double>::infinity() : 1.0;
}

template <bool kAntithetic, bool kControl, class Real>
void cpu_moments_in(const std::vector<PathParams<Real>>& params, std::int64_t samples,
                    std::uint64_t seed, int threads, std::vector<Moments<double>>& result) {
  using M = Mode<kAntithetic, kControl>;
  const auto options = static_cast<std::int64_t>(params.size());
  const std::int64_t tiles = tiles_for(samples);
  std::vector<Moments<double>> tile_moments(static_cast<std::size_t>(options * tiles));
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(seed));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t t = 0; t < options * tiles; ++t) {
    const std::int64_t option = t / tiles, tile = t % tiles;
    Moments<Real> lanes[kLanes];
    for (int lane = 0; lane < kLanes; ++lane) {
      lanes[lane] = lane_moments<false, M>(params[static_cast<std::size_t>(option)], keys, samples,
                                           tile, lane);
    }
    // The warp's shuffle-down tree: lane l absorbs lane l + offset.
    for (int offset = kLanes / 2; offset > 0; offset /= 2) {
      for (int lane = 0; lane < offset; ++lane)
        lanes[lane] = merge<M>(lanes[lane], lanes[lane + offset]);
    }
    tile_moments[static_cast<std::size_t>(t)] = convert<double>(lanes[0]);
  }
  result.assign(static_cast<std::size_t>(options), {});
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t option = 0; option < options; ++option) {
    Moments<double>* tiles_of = tile_moments.data() + option * tiles;
    for (std::int64_t stride = 1; stride < tiles; stride *= 2) {
      for (std::int64_t k = 0; 2 * stride * k < tiles; ++k)
        merge_tile_pair<M>(tiles_of, tiles, stride, k);
    }
    result[static_cast<std::size_t>(option)] = tiles_of[0];
  }
}

}  // namespace

template <class Real>
OptionInputs option_inputs(const MonteCarloBookView& book, std::int64_t i) {
  OptionInputs in;
  in.is_put = book.is_put[i] != 0;
  in.spot = rounded<Real>(book.spot[i]);
  in.strike = rounded<Real>(book.strike[i]);
  in.maturity = rounded<Real>(book.maturity[i]);
  in.rate = rounded<Real>(value_of(book.rate, i));
  in.volatility = rounded<Real>(value_of(book.volatility, i));
  in.dividend = rounded<Real>(value_of(book.dividend, i));
  if (book.barrier_type != nullptr) in.barrier_type = book.barrier_type[i];
  if (in.barrier_type != BarrierType::none) {
    if (book.barrier == nullptr || !(book.barrier[i] > 0) || !std::isfinite(book.barrier[i])) {
      throw InvalidInput(fmt::format("monte carlo: option {}: the barrier must be > 0", i));
    }
    in.barrier = rounded<Real>(book.barrier[i]);
  }
  if (book.steps != nullptr) in.steps = book.steps[i];
  if (in.steps < 1 || in.steps > kMonteCarloMaxSteps) {
    throw InvalidInput(fmt::format("monte carlo: option {}: steps must be in [1, {}], got {}", i,
                                   kMonteCarloMaxSteps, in.steps));
  }
  return in;
}

template <class Real>
PathParams<Real> path_params(const OptionInputs& in, std::uint32_t option_index,
                             BarrierMonitoring monitoring) {
  const double dt = in.maturity / in.steps;
  const double sigma = in.volatility;
  PathParams<Real> p;
  p.strike_over_spot = static_cast<Real>(in.strike / in.spot);
  p.drift_dt = static_cast<Real>((in.rate - in.dividend - 0.5 * sigma * sigma) * dt);
  p.vol_sqrt_dt = static_cast<Real>(sigma * std::sqrt(dt));
  p.steps = in.steps;
  p.option_index = option_index;
  p.is_put = in.is_put ? 1 : 0;
  p.barrier = static_cast<std::uint8_t>(in.barrier_type);
  if (in.barrier_type != BarrierType::none) {
    p.log_barrier = static_cast<Real>(std::log(in.barrier / in.spot));
    const double variance_dt = sigma * sigma * dt;
    p.bridge_scale = variance_dt > 0 ? static_cast<Real>(-2.0 / variance_dt)
                                     : -std::numeric_limits<Real>::infinity();
    p.knocked_at_start = is_down(in.barrier_type) ? in.spot <= in.barrier : in.spot >= in.barrier;
    p.continuous = monitoring == BarrierMonitoring::continuous ? 1 : 0;
  }
  return p;
}

template <class Real>
std::vector<Moments<double>> cpu_moments(const std::vector<PathParams<Real>>& params,
                                         std::int64_t samples, std::uint64_t seed, bool antithetic,
                                         bool control, int threads) {
  const int t = threads > 0 ? threads : Context::cpu().effective_cpu_threads();
  std::vector<Moments<double>> result;
  if (antithetic && control) cpu_moments_in<true, true>(params, samples, seed, t, result);
  if (antithetic && !control) cpu_moments_in<true, false>(params, samples, seed, t, result);
  if (!antithetic && control) cpu_moments_in<false, true>(params, samples, seed, t, result);
  if (!antithetic && !control) cpu_moments_in<false, false>(params, samples, seed, t, result);
  return result;
}

Estimate estimate(const Moments<double>& m, const OptionInputs& in, bool antithetic, bool control) {
  const double n = m.count;
  const double scale = in.spot * std::exp(-in.rate * in.maturity);  // spot units, discounted
  double mean = m.mean_x;
  double variance = n > 1 ? m.m2_x / (n - 1) : 0.0;
  Estimate e;
  if (antithetic) {
    // The 2n single payoffs a = m + d, b = m - d have pooled variance Var(m) + E[d^2]; the plain
    // estimator of 2n paths has variance Var(a) / 2n, the antithetic one Var(m) / n.
    const double single = (m.m2_x + m.m2_d) / n + m.mean_d * m.mean_d;
    e.vrf_antithetic = variance_ratio(single, 2.0 * m.m2_x / n);
  }
  if (control) {
    const double expected = std::exp((in.rate - in.dividend) * in.maturity);  // E[S_T / S0]
    if (m.m2_c > 0) {
      const double beta = m.co_xc / m.m2_c;
      mean -= beta * (m.mean_c - expected);
      const double residual = std::max(0.0, m.m2_x - beta * m.co_xc);
      e.vrf_control = variance_ratio(m.m2_x, residual);
      variance = n > 1 ? residual / (n - 1) : 0.0;
    } else {
      e.vrf_control = 1.0;
    }
  }
  e.price = scale * mean;
  e.std_error = scale * std::sqrt(variance / n);
  return e;
}

#define GPUKIT_MC_INSTANTIATE(Real)                                                   \
  template OptionInputs option_inputs<Real>(const MonteCarloBookView&, std::int64_t); \
  template PathParams<Real> path_params<Real>(const OptionInputs&, std::uint32_t,     \
                                              BarrierMonitoring);                     \
  template std::vector<Moments<double>> cpu_moments<Real>(                            \
      const std::vector<PathParams<Real>>&, std::int64_t, std::uint64_t, bool, bool, int);
GPUKIT_MC_INSTANTIATE(float)
GPUKIT_MC_INSTANTIATE(double)
#undef GPUKIT_MC_INSTANTIATE

}  // namespace mc

namespace {

using mc::Moments;
using mc::OptionInputs;
using mc::PathParams;

template <class Real>
std::vector<Moments<double>> moments_on(const Context& context,
                                        const std::vector<PathParams<Real>>& params,
                                        std::int64_t samples, const MonteCarloOptions& options) {
  if (context.backend == Backend::cpu || params.empty()) {
    return mc::cpu_moments(params, samples, options.seed, options.antithetic,
                           options.control_variate, context.cpu_threads);
  }
#if GPUKIT_HAVE_CUDA
  cuda::set_device(context.cuda_device);
  const mc::DeviceRun run{static_cast<std::int64_t>(params.size()),
                          samples,
                          options.seed,
                          options.antithetic,
                          options.control_variate,
                          mc::common_path_kind(params.data(), params.size())};
  cuda::DeviceBuffer<PathParams<Real>> device_params(params.size());
  device_params.copy_from_host(params);
  cuda::DeviceBuffer<Moments<double>> device_moments(params.size());
  cuda::DeviceBuffer<unsigned char> workspace(static_cast<std::size_t>(mc::workspace_bytes(run)));
  cuda::Stream stream;
  mc::launch_monte_carlo<Real>(device_params.data(), run, device_moments.data(), workspace.data(),
                               stream.handle());
  stream.synchronize();
  std::vector<Moments<double>> result(params.size());
  device_moments.copy_to_host(result);
  return result;
#else
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

template <class Real>
MonteCarloBookResult price_in(const Context& context, const MonteCarloBookView& book,
                              const MonteCarloOptions& options) {
  const auto n = static_cast<std::size_t>(book.count);
  const std::int64_t samples = options.antithetic ? options.paths / 2 : options.paths;
  std::vector<OptionInputs> inputs(n);
  for (std::size_t i = 0; i < n; ++i) inputs[i] = mc::option_inputs<Real>(book, std::int64_t(i));

  auto price_scenario = [&](const std::vector<OptionInputs>& scenario) {
    std::vector<PathParams<Real>> params(n);
    for (std::size_t i = 0; i < n; ++i) {
      params[i] = mc::path_params<Real>(scenario[i],
                                        options.first_option_index + static_cast<std::uint32_t>(i),
                                        options.monitoring);
    }
    const std::vector<Moments<double>> moments = moments_on(context, params, samples, options);
    std::vector<mc::Estimate> estimates(n);
    for (std::size_t i = 0; i < n; ++i) {
      estimates[i] =
          mc::estimate(moments[i], scenario[i], options.antithetic, options.control_variate);
    }
    return estimates;
  };

  const std::vector<mc::Estimate> base = price_scenario(inputs);
  MonteCarloBookResult r;
  r.price.resize(n), r.std_error.resize(n), r.ci_low.resize(n), r.ci_high.resize(n);
  r.paths.assign(n, static_cast<double>(options.antithetic ? 2 * samples : samples));
  for (std::size_t i = 0; i < n; ++i) {
    r.price[i] = base[i].price;
    r.std_error[i] = base[i].std_error;
    r.ci_low[i] = base[i].price - 1.96 * base[i].std_error;
    r.ci_high[i] = base[i].price + 1.96 * base[i].std_error;
  }
  if (options.variance_reduction_factors) {
    if (options.antithetic) {
      r.vrf_antithetic.resize(n);
      for (std::size_t i = 0; i < n; ++i) r.vrf_antithetic[i] = base[i].vrf_antithetic;
    }
    if (options.control_variate) {
      r.vrf_control.resize(n);
      for (std::size_t i = 0; i < n; ++i) r.vrf_control[i] = base[i].vrf_control;
    }
  }
  if (options.greeks) {
    // Central differences with common random numbers: each bumped book reuses option i's Philox
    // numbers, so the difference of two prices carries little of their sampling noise.
    std::vector<OptionInputs> up = inputs, down = inputs;
    std::vector<double> spot_step(n), vol_up(n), vol_down(n);
    for (std::size_t i = 0; i < n; ++i) {
      spot_step[i] = 0.01 * inputs[i].spot;
      up[i].spot = inputs[i].spot + spot_step[i];
      down[i].spot = inputs[i].spot - spot_step[i];
    }
    const std::vector<mc::Estimate> spot_up = price_scenario(up), spot_down = price_scenario(down);
    up = inputs, down = inputs;
    for (std::size_t i = 0; i < n; ++i) {
      const double h = std::max(0.01 * inputs[i].volatility, 1e-4);
      up[i].volatility = inputs[i].volatility + h;
      down[i].volatility = std::max(0.0, inputs[i].volatility - h);
      vol_up[i] = up[i].volatility;
      vol_down[i] = down[i].volatility;
    }
    const std::vector<mc::Estimate> sigma_up = price_scenario(up),
                                    sigma_down = price_scenario(down);
    r.delta.resize(n), r.vega.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      r.delta[i] = (spot_up[i].price - spot_down[i].price) / (2 * spot_step[i]);
      r.vega[i] = (sigma_up[i].price - sigma_down[i].price) / (vol_up[i] - vol_down[i]);
    }
  }
  return r;
}

}  // namespace

MonteCarloBookResult price_monte_carlo_book(const Context& context, const MonteCarloBookView& book,
                                            const MonteCarloOptions& options) {
  if (book.count < 0) throw InvalidInput("monte carlo: negative option count");
  if (book.count > std::int64_t{0xFFFFFFFF} - options.first_option_index) {
    throw InvalidInput(
        "monte carlo: at most 2^32 - 1 options per book, first_option_index included (the Philox "
        "option index; 0xFFFFFFFF is reserved)");
  }
  if (options.paths < 2) {
    throw InvalidInput(fmt::format("monte carlo: paths must be >= 2, got {}", options.paths));
  }
  if (options.antithetic && options.paths % 2 != 0) {
    throw InvalidInput(fmt::format(
        "monte carlo: paths must be even with antithetic variates (pairs), got {}", options.paths));
  }
  if (options.paths > (std::int64_t{1} << 50)) {
    throw InvalidInput(fmt::format("monte carlo: at most 2^50 paths, got {}", options.paths));
  }
  return options.precision == Precision::float32 ? price_in<float>(context, book, options)
                                                 : price_in<double>(context, book, options);
}

}  // namespace gpukit::finance
