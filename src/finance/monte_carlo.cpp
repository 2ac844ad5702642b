// Monte Carlo option pricing: validation, each row's path parameters, the dispatch to the CPU
// backend (cpu/monte_carlo_kernels.cpp) or the CUDA kernels (cuda/monte_carlo_kernels.cu), the
// estimators and bump-and-reprice Greeks.

#include "gpukit/finance/monte_carlo.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_american.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_sobol.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
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

}  // namespace

double antithetic_variance_reduction(const Moments<double>& m) {
  // The 2n single payoffs a = m + d, b = m - d have pooled variance Var(m) + E[d^2]; the plain
  // estimator of 2n paths has variance Var(a) / 2n, the antithetic one Var(m) / n.
  const double n = m.count;
  const double single = (m.m2_x + m.m2_d) / n + m.mean_d * m.mean_d;
  return variance_ratio(single, 2.0 * m.m2_x / n);
}

// An exercise style the enumeration does not name (a cast, not the CSV reader) is refused; the
// early-exercise rows themselves are routed to the Longstaff-Schwartz engine before this is read.
void check_exercise_style(const MonteCarloBookView& book, std::int64_t i) {
  if (book.exercise == nullptr) return;
  if (static_cast<unsigned>(book.exercise[i]) > static_cast<unsigned>(ExerciseStyle::american)) {
    throw InvalidInput(fmt::format("monte carlo: option {}: unknown exercise style {}", i,
                                   static_cast<unsigned>(book.exercise[i])));
  }
}

// A heston row's parameters: finite, v0, theta and sigma_v >= 0, kappa > 0 (the QE scheme's
// moments divide by it), |rho| <= 1; the CSV reader's rules (io/option_book.hpp).
void check_heston_parameters(const OptionInputs& in, std::int64_t i) {
  const auto refuse = [i](const char* name, double value, const char* rule) {
    throw InvalidInput(fmt::format("monte carlo: option {}: {} {}, got {}", i, name, rule, value));
  };
  for (const auto& [name, value] :
       {std::pair{"v0", in.v0}, std::pair{"theta", in.theta}, std::pair{"sigma_v", in.sigma_v}}) {
    if (!(value >= 0) || !std::isfinite(value)) refuse(name, value, "must be finite and >= 0");
  }
  if (!(in.kappa > 0) || !std::isfinite(in.kappa))
    refuse("kappa", in.kappa, "must be finite and > 0");
  if (!(std::fabs(in.rho) <= 1)) refuse("rho", in.rho, "must be in [-1, 1]");
}

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
  if (book.average != nullptr) in.average = book.average[i];
  if (static_cast<unsigned>(in.average) > static_cast<unsigned>(AverageType::geometric)) {
    throw InvalidInput(fmt::format("monte carlo: option {}: unknown average {}", i,
                                   static_cast<unsigned>(in.average)));
  }
  if (in.average != AverageType::none && in.barrier_type != BarrierType::none) {
    throw InvalidInput(fmt::format("monte carlo: option {}: an Asian option takes no barrier", i));
  }
  check_exercise_style(book, i);
  in.early_exercise = is_early_exercise(book, i);
  if (book.model != nullptr) in.model = book.model[i];
  if (static_cast<unsigned>(in.model) > static_cast<unsigned>(AssetModel::heston)) {
    throw InvalidInput(fmt::format("monte carlo: option {}: unknown model {}", i,
                                   static_cast<unsigned>(in.model)));
  }
  if (in.model == AssetModel::heston) {
    in.v0 = rounded<Real>(value_of(book.v0, i));
    in.kappa = rounded<Real>(value_of(book.kappa, i));
    in.theta = rounded<Real>(value_of(book.theta, i));
    in.sigma_v = rounded<Real>(value_of(book.sigma_v, i));
    in.rho = rounded<Real>(value_of(book.rho, i));
    check_heston_parameters(in, i);
  }
  return in;
}

bool knocked_at_start(const OptionInputs& in) {
  if (in.barrier_type == BarrierType::none) return false;
  return is_down(in.barrier_type) ? in.spot <= in.barrier : in.spot >= in.barrier;
}

// Andersen's constants of a heston row's step (monte_carlo_path_params.hpp), in double.
template <class Real>
HestonStep<Real> heston_step_params(const OptionInputs& in) {
  const double dt = in.maturity / in.steps;
  const double decay = std::exp(-in.kappa * dt);
  const double sigma2 = in.sigma_v * in.sigma_v;
  const double one_minus_decay = -std::expm1(-in.kappa * dt);
  HestonStep<Real> h;
  h.v0 = static_cast<Real>(in.v0);
  h.theta = static_cast<Real>(in.theta);
  h.decay = static_cast<Real>(decay);
  h.variance_c1 = static_cast<Real>(sigma2 * decay * one_minus_decay / in.kappa);
  h.variance_c2 =
      static_cast<Real>(in.theta * sigma2 * one_minus_decay * one_minus_decay / (2 * in.kappa));
  h.carry_dt = static_cast<Real>((in.rate - in.dividend) * dt);
  double k0 = 0, k1 = -0.25 * dt, k2 = -0.25 * dt, k3 = 0.5 * dt, k4 = 0.5 * dt;
  if (in.sigma_v > 0) {
    // gamma1 = gamma2 = 1/2. With sigma_v = 0 the variance is deterministic and the spot's
    // normal carries all of it (rho plays no part): the values above.
    const double rho_over_sigma = in.rho / in.sigma_v;
    const double tilt = 0.5 * dt * (in.kappa * rho_over_sigma - 0.5);
    k0 = -rho_over_sigma * in.kappa * in.theta * dt;
    k1 = tilt - rho_over_sigma;
    k2 = tilt + rho_over_sigma;
    k3 = k4 = 0.5 * dt * (1 - in.rho * in.rho);
  }
  h.k0 = static_cast<Real>(k0);
  h.k1 = static_cast<Real>(k1);
  h.k2 = static_cast<Real>(k2);
  h.k3 = static_cast<Real>(k3);
  h.k4 = static_cast<Real>(k4);
  h.a = static_cast<Real>(k2 + 0.5 * k4);
  h.half_k3 = static_cast<Real>(0.5 * k3);
  return h;
}
template HestonStep<float> heston_step_params<float>(const OptionInputs&);
template HestonStep<double> heston_step_params<double>(const OptionInputs&);

template <class Real>
PathParams<Real> path_params(const OptionInputs& in, std::uint64_t stream_key,
                             BarrierMonitoring monitoring) {
  const double dt = in.maturity / in.steps;
  const double sigma = in.volatility;
  PathParams<Real> p;
  p.strike_over_spot = static_cast<Real>(in.strike / in.spot);
  p.drift_dt = static_cast<Real>((in.rate - in.dividend - 0.5 * sigma * sigma) * dt);
  p.vol_sqrt_dt = static_cast<Real>(sigma * std::sqrt(dt));
  p.inv_steps = static_cast<Real>(1.0 / in.steps);
  p.steps = in.steps;
  p.average = static_cast<std::uint8_t>(in.average);
  p.option_index = static_cast<std::uint32_t>(stream_key);
  p.stream_high = static_cast<std::uint32_t>(stream_key >> 32);
  p.is_put = in.is_put ? 1 : 0;
  p.barrier = static_cast<std::uint8_t>(in.barrier_type);
  if (in.model == AssetModel::heston) p.heston_step = heston_step_params<Real>(in);
  p.heston = in.model == AssetModel::heston ? 1 : 0;
  p.sample = static_cast<std::uint8_t>(in.sample);
  if (in.sample == PathSample::vega) {
    const double vega_drift = in.rate - in.dividend + 0.5 * sigma * sigma;
    // The log-underlying's time: T, or a geometric average's mean fixing time T (n+1) / (2n).
    const double time = in.average == AverageType::geometric
                            ? in.maturity * (in.steps + 1.0) / (2.0 * in.steps)
                            : in.maturity;
    p.vega_drift_dt = static_cast<Real>(vega_drift * dt);
    p.vega_offset = static_cast<Real>(vega_drift * time);
    p.inv_vol = sigma > 0 ? static_cast<Real>(1 / sigma) : Real(0);
  }
  if (in.barrier_type != BarrierType::none) {
    p.log_barrier = static_cast<Real>(std::log(in.barrier / in.spot));
    const double variance_dt = sigma * sigma * dt;
    p.bridge_scale = variance_dt > 0 ? static_cast<Real>(-2.0 / variance_dt)
                                     : -std::numeric_limits<Real>::infinity();
    p.knocked_at_start = knocked_at_start(in) ? 1 : 0;
    p.continuous = monitoring == BarrierMonitoring::continuous ? 1 : 0;
  }
  return p;
}

double geometric_asian_expected_payoff(const OptionInputs& in) {
  // ln G = (1/n) sum ln S_{t_i} is normal: mean (r - q - sigma^2/2) T (n+1)/(2n) and variance
  // sigma^2 T (n+1)(2n+1)/(6 n^2) relative to ln S0 (sum_{i,j} min(t_i, t_j) = dt n(n+1)(2n+1)/6).
  const double n = in.steps, sigma = in.volatility;
  const double mean =
      (in.rate - in.dividend - 0.5 * sigma * sigma) * in.maturity * (n + 1) / (2 * n);
  const double variance = sigma * sigma * in.maturity * (n + 1) * (2 * n + 1) / (6 * n * n);
  const double strike = in.strike / in.spot;
  const double sign = in.is_put ? -1.0 : 1.0;
  if (!(variance > 0)) return std::max(sign * (std::exp(mean) - strike), 0.0);
  const double forward = std::exp(mean + 0.5 * variance);  // E[G / S0]
  if (!(strike > 0)) return in.is_put ? 0.0 : forward;
  const double sd = std::sqrt(variance);
  const double d1 = (mean - std::log(strike) + variance) / sd, d2 = d1 - sd;
  const auto normal_cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  return sign * (forward * normal_cdf(sign * d1) - strike * normal_cdf(sign * d2));
}

Estimate estimate(const Moments<double>& m, const OptionInputs& in, bool antithetic, bool control) {
  const double n = m.count;
  const double scale = in.spot * std::exp(-in.rate * in.maturity);  // spot units, discounted
  double mean = m.mean_x;
  double variance = n > 1 ? m.m2_x / (n - 1) : 0.0;
  Estimate e;
  if (antithetic) e.vrf_antithetic = antithetic_variance_reduction(m);
  if (control) {
    // The control's mean: E[S_T / S0], or on an arithmetic Asian row the geometric Asian's.
    const double expected =
        in.average == AverageType::arithmetic && in.model == AssetModel::black_scholes
            ? geometric_asian_expected_payoff(in)
            : std::exp((in.rate - in.dividend) * in.maturity);
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

void check_european_exercise(const MonteCarloBookView& book, std::string_view what) {
  if (book.exercise == nullptr) return;
  for (std::int64_t i = 0; i < book.count; ++i) {
    if (book.exercise[i] != ExerciseStyle::european) {
      throw InvalidInput(fmt::format(
          "monte carlo: option {}: {} prices european exercise only (this row's is {})", i, what,
          book.exercise[i] == ExerciseStyle::bermudan ? "bermudan" : "american"));
    }
  }
}

void check_book_and_options(const MonteCarloBookView& book, const MonteCarloOptions& options) {
  if (book.count < 0) throw InvalidInput("monte carlo: negative option count");
  if (book.stream == nullptr &&
      book.count > std::int64_t{0xFFFFFFFF} - options.first_option_index) {
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
  if (options.paths > kMonteCarloMaxPaths) {
    throw InvalidInput(fmt::format("monte carlo: at most 2^34 = {} paths per option, got {}",
                                   kMonteCarloMaxPaths, options.paths));
  }
  check_sobol_options(options);
}

namespace {

void check_heston_options(const OptionInputs& in, std::int64_t i,
                          const MonteCarloOptions& options) {
  if (in.model != AssetModel::heston) return;
  if (in.barrier_type != BarrierType::none && options.monitoring == BarrierMonitoring::continuous) {
    throw InvalidInput(fmt::format(
        "monte carlo: option {}: a heston barrier row is monitored on its dates only (the "
        "Brownian-bridge correction of continuous monitoring needs a constant volatility)",
        i));
  }
}

}  // namespace

template <class Real>
void check_rows(const MonteCarloBookView& book, std::int64_t first, std::int64_t count,
                const MonteCarloOptions& options) {
  for (std::int64_t i = first; i < first + count; ++i) {
    if (is_early_exercise(book, i)) continue;  // the engine's own checks (american_plan)
    const OptionInputs in = option_inputs<Real>(book, i);
    check_heston_options(in, i, options);
    if (options.sampler == MonteCarloSampler::sobol) check_sobol_row(in, i);
  }
}

template <class Real>
std::vector<OptionInputs> book_inputs(const MonteCarloBookView& book) {
  std::vector<OptionInputs> inputs(static_cast<std::size_t>(book.count));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    inputs[i] = option_inputs<Real>(book, std::int64_t(i));
  }
  return inputs;
}

template <class Real>
std::vector<PathParams<Real>> book_path_params(const MonteCarloBookView& book,
                                               const std::vector<OptionInputs>& rows,
                                               const MonteCarloOptions& options) {
  std::vector<PathParams<Real>> params(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::uint64_t stream =
        book.stream != nullptr ? book.stream[i] : std::uint64_t{options.first_option_index} + i;
    check_heston_options(rows[i], static_cast<std::int64_t>(i), options);
    params[i] = path_params<Real>(rows[i], stream, options.monitoring);
  }
  return params;
}

MonteCarloBookResult book_result(const std::vector<Estimate>& base,
                                 const MonteCarloOptions& options) {
  const std::size_t n = base.size();
  const std::int64_t samples = samples_per_option(options);
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
  return r;
}

GreekMethod greek_method(AssetModel model, BarrierType barrier, MonteCarloSampler sampler) {
  // A barrier's payoff jumps at the barrier: no pathwise derivative; the Sobol kernels form
  // payoffs only.
  if (barrier != BarrierType::none || sampler != MonteCarloSampler::philox) {
    return GreekMethod::differences;
  }
  return model == AssetModel::heston ? GreekMethod::pathwise_delta : GreekMethod::pathwise;
}

GreekMethod greek_method(const OptionInputs& in, const MonteCarloOptions& options) {
  // The early-exercise engine bumps and reprices (its payoff's exercise rule is refitted).
  if (in.early_exercise) return GreekMethod::differences;
  return greek_method(in.model, in.barrier_type, options.sampler);
}

int greek_books(GreekMethod method) { return method == GreekMethod::pathwise_delta ? 5 : 4; }

namespace {

// A row's book beyond its method's: the cheapest path (one step, no barrier, no average, a
// deterministic path), whose result is not read.
OptionInputs idle(const OptionInputs& in) {
  OptionInputs r = in;
  r.model = AssetModel::black_scholes, r.average = AverageType::none;
  r.barrier_type = BarrierType::none, r.steps = 1, r.volatility = 0;
  r.sample = PathSample::price;
  return r;
}

// The Greek books of row i (into books[1 ..]) for its method, and its bumps.
void fill_greek_books(const OptionInputs& in, GreekMethod method, std::size_t i, Scenarios& s) {
  const double h = 0.01 * in.spot;
  s.spot_step[i] = h;
  OptionInputs up = in, down = in;
  up.spot = in.spot + h, down.spot = in.spot - h;
  // The volatility bump: of sigma, or of sqrt(v0) on a heston row.
  const bool heston = in.model == AssetModel::heston;
  const double vol = heston ? std::sqrt(in.v0) : in.volatility;
  const double vol_step = std::max(0.01 * vol, 1e-4);
  s.vol_up[i] = vol + vol_step, s.vol_down[i] = std::max(0.0, vol - vol_step);
  OptionInputs vol_up = in, vol_down = in;
  if (heston) {
    vol_up.v0 = s.vol_up[i] * s.vol_up[i], vol_down.v0 = s.vol_down[i] * s.vol_down[i];
  } else {
    vol_up.volatility = s.vol_up[i], vol_down.volatility = s.vol_down[i];
  }
  std::vector<OptionInputs> books;  // the row's Greek books, in GreekMethod's order
  if (method == GreekMethod::differences) {
    books = {up, down, vol_up, vol_down};
  } else {
    up.sample = down.sample = PathSample::delta;
    OptionInputs delta = in;
    delta.sample = PathSample::delta;
    if (method == GreekMethod::pathwise) {
      OptionInputs vega = in;
      vega.sample = PathSample::vega;
      books = {up, down, vega, delta};
    } else {
      books = {up, down, vol_up, vol_down, delta};
    }
  }
  if (books.size() >= s.rows.size()) {
    throw InvalidInput("monte carlo: internal error: fewer books than a row's Greeks need");
  }
  for (std::size_t b = 1; b < s.rows.size(); ++b) {
    s.rows[b][i] = b <= books.size() ? books[b - 1] : idle(in);
  }
}

Scenarios scenarios_with(const std::vector<OptionInputs>& inputs, int books,
                         const std::function<GreekMethod(const OptionInputs&)>& method_of) {
  Scenarios s;
  s.rows.assign(static_cast<std::size_t>(std::max(books, 1)), inputs);
  if (books <= 1) return s;
  const std::size_t n = inputs.size();
  s.method.resize(n), s.spot_step.resize(n), s.vol_up.resize(n), s.vol_down.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.method[i] = method_of(inputs[i]);
    fill_greek_books(inputs[i], s.method[i], i, s);
  }
  return s;
}

}  // namespace

Scenarios scenarios(const std::vector<OptionInputs>& inputs, const MonteCarloOptions& options,
                    int books) {
  // Central differences with common random numbers: each book reuses option i's Philox numbers,
  // so the difference of two prices (or pathwise deltas) carries little of their sampling noise.
  return scenarios_with(inputs, options.greeks ? books : 1,
                        [&](const OptionInputs& in) { return greek_method(in, options); });
}

Scenarios difference_scenarios(const std::vector<OptionInputs>& inputs, bool greeks) {
  return scenarios_with(inputs, greeks ? 5 : 1,
                        [](const OptionInputs&) { return GreekMethod::differences; });
}

MonteCarloBookResult result_from_moments(const Scenarios& scenarios,
                                         const std::vector<std::vector<Moments<double>>>& moments,
                                         const MonteCarloOptions& options) {
  std::vector<std::vector<Estimate>> estimates(scenarios.rows.size());
  for (std::size_t s = 0; s < scenarios.rows.size(); ++s) {
    const std::vector<OptionInputs>& rows = scenarios.rows[s];
    estimates[s].resize(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
      estimates[s][i] =
          estimate(moments[s][i], rows[i], options.antithetic, options.control_variate);
    }
  }
  return result_from_estimates(scenarios, estimates, options);
}

MonteCarloBookResult result_from_estimates(const Scenarios& scenarios,
                                           const std::vector<std::vector<Estimate>>& estimates,
                                           const MonteCarloOptions& options) {
  MonteCarloBookResult r = book_result(estimates[0], options);
  if (scenarios.rows.size() > 1) {
    const std::size_t n = scenarios.rows[0].size();
    r.delta.resize(n), r.gamma.resize(n), r.vega.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto price = [&](std::size_t book) { return estimates[book][i].price; };
      // A pathwise delta book's estimate is S e^{-rT} times the mean sample: the delta times S.
      const auto delta = [&](std::size_t book) {
        return estimates[book][i].price / scenarios.rows[book][i].spot;
      };
      const double h = scenarios.spot_step[i];
      const double vol_step = scenarios.vol_up[i] - scenarios.vol_down[i];
      switch (scenarios.method[i]) {
        case GreekMethod::differences:
          r.delta[i] = (price(1) - price(2)) / (2 * h);
          r.gamma[i] = (price(1) - 2 * price(0) + price(2)) / (h * h);
          r.vega[i] = (price(3) - price(4)) / vol_step;
          break;
        case GreekMethod::pathwise:
          r.delta[i] = delta(4);
          r.gamma[i] = (delta(1) - delta(2)) / (2 * h);
          r.vega[i] = price(3);
          break;
        case GreekMethod::pathwise_delta:
          r.delta[i] = delta(5);
          r.gamma[i] = (delta(1) - delta(2)) / (2 * h);
          r.vega[i] = (price(3) - price(4)) / vol_step;
          break;
      }
    }
  }
  return r;
}

#define GPUKIT_MC_INSTANTIATE(Real)                                                           \
  template OptionInputs option_inputs<Real>(const MonteCarloBookView&, std::int64_t);         \
  template void check_rows<Real>(const MonteCarloBookView&, std::int64_t, std::int64_t,       \
                                 const MonteCarloOptions&);                                   \
  template std::vector<OptionInputs> book_inputs<Real>(const MonteCarloBookView&);            \
  template std::vector<PathParams<Real>> book_path_params<Real>(                              \
      const MonteCarloBookView&, const std::vector<OptionInputs>&, const MonteCarloOptions&); \
  template PathParams<Real> path_params<Real>(const OptionInputs&, std::uint64_t,             \
                                              BarrierMonitoring);
GPUKIT_MC_INSTANTIATE(float)
GPUKIT_MC_INSTANTIATE(double)
#undef GPUKIT_MC_INSTANTIATE

}  // namespace mc

namespace {

using mc::Moments;
using mc::OptionInputs;
using mc::PathParams;

// Where a pricing's device work runs: the context's device on a stream of its own (the host-data
// API), or the current device on the caller's stream (price_monte_carlo_book_on_device).
struct DeviceQueue {
  bool callers_stream = false;
  StreamHandle stream = nullptr;  // read only with callers_stream
};

template <class Real>
std::vector<Moments<double>> moments_on(const Context& context,
                                        const std::vector<PathParams<Real>>& params,
                                        std::int64_t samples, const MonteCarloOptions& options,
                                        const mc::WorkDone& work_done, const DeviceQueue& queue) {
  if (context.backend == Backend::cpu || params.empty()) {
    const std::int64_t chunk =
        work_done ? mc::cpu_progress_chunk_tiles<Real>(params, context.effective_cpu_threads())
                  : kMonteCarloCpuChunkTiles;
    return mc::cpu_moments(params, samples, options.seed, options.antithetic,
                           options.control_variate, context.cpu_threads, chunk, work_done);
  }
#if GPUKIT_HAVE_CUDA
  std::optional<cuda::Stream> own_stream;
  if (!queue.callers_stream) {
    cuda::set_device(context.cuda_device);
    own_stream.emplace();
  }
  const StreamHandle stream = queue.callers_stream ? queue.stream : own_stream->handle();
  // The book in parts of at most kMonteCarloDevicePartRows rows, so the device holds a bounded
  // number of rows; the launcher bounds the tile workspace (monte_carlo_launchers.hpp).
  const auto rows = static_cast<std::int64_t>(params.size());
  const std::int64_t part_rows = std::min(rows, kMonteCarloDevicePartRows);
  cuda::DeviceBuffer<PathParams<Real>> device_params(static_cast<std::size_t>(part_rows));
  cuda::DeviceBuffer<Moments<double>> device_moments(static_cast<std::size_t>(part_rows));
  mc::DeviceRun largest{
      part_rows,          samples, options.seed, options.antithetic, options.control_variate,
      mc::PathKind::mixed};
  cuda::DeviceBuffer<unsigned char> workspace(
      static_cast<std::size_t>(mc::workspace_bytes(largest)));
  std::vector<Moments<double>> result(params.size());
  for (std::int64_t first = 0; first < rows; first += part_rows) {
    const std::int64_t count = std::min(part_rows, rows - first);
    const std::span<const PathParams<Real>> part(params.data() + first,
                                                 static_cast<std::size_t>(count));
    const mc::DeviceRun run = mc::part_run(part, samples, options);
    const mc::TilesDone tiles_done = mc::tile_progress(part, work_done);
    device_params.copy_from_host(part);
    mc::launch_monte_carlo<Real>(device_params.data(), run, device_moments.data(), workspace.data(),
                                 stream, {}, tiles_done);
    cuda::synchronize_stream(stream);
    device_moments.copy_to_host(
        std::span<Moments<double>>(result.data() + first, static_cast<std::size_t>(count)));
  }
  return result;
#else
  (void)work_done, (void)queue;
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

template <class Real>
MonteCarloBookResult price_in(const Context& context, const MonteCarloBookView& book,
                              const MonteCarloOptions& options, const DeviceQueue& queue) {
  const std::int64_t samples = mc::samples_per_option(options);
  const std::vector<OptionInputs> inputs = mc::book_inputs<Real>(book);

  const mc::Scenarios scenarios =
      mc::scenarios(inputs, options, monte_carlo_scenarios(book, options));

  // Progress in path-steps, the tiles' padding included (what the backends report).
  double work_total = 0, work_so_far = 0;
  for (const std::vector<OptionInputs>& rows : scenarios.rows) {
    for (const OptionInputs& row : rows) {
      work_total += mc::padded_samples_per_row(options) * row.steps;
    }
  }
  mc::WorkDone work_done;
  if (options.progress) {
    work_done = [&](double path_steps) {
      work_so_far += path_steps;
      options.progress(work_total > 0 ? std::min(1.0, work_so_far / work_total) : 1.0);
    };
  }

  std::vector<std::vector<Moments<double>>> moments;
  std::vector<std::vector<mc::Estimate>> sobol_estimates;
  for (const std::vector<OptionInputs>& rows : scenarios.rows) {
    const std::vector<PathParams<Real>> params = mc::book_path_params<Real>(book, rows, options);
    if (options.sampler == MonteCarloSampler::sobol) {
      sobol_estimates.push_back(
          mc::sobol_estimates_on<Real>(context, rows, params, options, work_done,
                                       queue.callers_stream ? &queue.stream : nullptr));
      continue;
    }
    moments.push_back(moments_on(context, params, samples, options, work_done, queue));
  }
  if (options.sampler == MonteCarloSampler::sobol) {
    return mc::result_from_estimates(scenarios, sobol_estimates, options);
  }
  return mc::result_from_moments(scenarios, moments, options);
}

}  // namespace

std::uint64_t monte_carlo_stream_key(std::string_view id) {
  std::uint64_t hash = 0xcbf29ce484222325ull;  // FNV-1a 64's offset basis
  for (const char c : id) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;  // FNV's 64-bit prime
  }
  return hash;
}

MonteCarloStreamKeys monte_carlo_stream_keys(
    std::int64_t rows, const std::function<std::string_view(std::int64_t row)>& id_of_row) {
  MonteCarloStreamKeys result;
  result.keys.reserve(static_cast<std::size_t>(std::max<std::int64_t>(rows, 0)));
  // The table views the caller's bytes (alive until the call returns): no copy per row.
  std::unordered_map<std::string_view, std::int64_t> rows_of;
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::string_view id = id_of_row(row);
    result.keys.push_back(monte_carlo_stream_key(id));
    ++rows_of[id];
  }
  for (const auto& [id, count] : rows_of) {
    if (count > 1) ++result.repeated_ids, result.rows_with_repeated_ids += count;
  }
  return result;
}

std::vector<std::int64_t> monte_carlo_rows_breached_at_start(const MonteCarloBookView& book,
                                                             Precision precision) {
  std::vector<std::int64_t> rows;
  if (book.barrier_type == nullptr) return rows;
  for (std::int64_t i = 0; i < book.count; ++i) {
    if (book.barrier_type[i] == BarrierType::none) continue;
    const OptionInputs in = precision == Precision::float32 ? mc::option_inputs<float>(book, i)
                                                            : mc::option_inputs<double>(book, i);
    if (mc::knocked_at_start(in)) rows.push_back(i);
  }
  return rows;
}

std::string monte_carlo_breached_at_start_note(const MonteCarloBookView& book, std::int64_t row) {
  constexpr std::array<std::string_view, 5> kNames = {"none", "down-out", "down-in", "up-out",
                                                      "up-in"};
  const BarrierType type = book.barrier_type[row];
  const bool knock_in = type == BarrierType::down_in || type == BarrierType::up_in;
  return fmt::format(
      "the {} barrier {} is breached at the start (spot {}): the option is priced as {}",
      kNames[static_cast<std::size_t>(type)], book.barrier[row], book.spot[row],
      knock_in ? "knocked in (the vanilla option)" : "knocked out (price 0)");
}

std::vector<std::int64_t> monte_carlo_rows_without_paying_path(const MonteCarloBookView& book,
                                                               const MonteCarloOptions& options,
                                                               const MonteCarloBookResult& result) {
  const std::vector<std::int64_t> breached =
      monte_carlo_rows_breached_at_start(book, options.precision);
  std::vector<std::int64_t> rows;
  for (std::int64_t i = 0; i < book.count; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // Every sample's payoff 0 gives a mean and a spread of exactly 0 (with the control variate
    // too: its coefficient is then 0). Rows whose paths are not random (no volatility or no time)
    // and knock-outs breached at the start are 0 for a reason of their own.
    if (result.price[k] != 0 || result.std_error[k] != 0) continue;
    double volatility =
        book.volatility.values != nullptr ? book.volatility.values[i] : book.volatility.scalar;
    if (book.model != nullptr && book.model[i] == AssetModel::heston) {
      // A heston row's paths are random where it has variance: v0 or theta > 0.
      volatility =
          std::max(book.v0.values != nullptr ? book.v0.values[i] : book.v0.scalar,
                   book.theta.values != nullptr ? book.theta.values[i] : book.theta.scalar);
    }
    if (!(volatility > 0 && book.maturity[i] > 0)) continue;
    if (std::binary_search(breached.begin(), breached.end(), i)) continue;
    rows.push_back(i);
  }
  return rows;
}

std::string monte_carlo_no_paying_path_note(std::span<const std::string> locations,
                                            std::int64_t rows_without, std::int64_t rows,
                                            const MonteCarloOptions& options) {
  constexpr std::size_t kShown = 5;
  std::string where;
  for (std::size_t i = 0; i < locations.size() && i < kShown; ++i) {
    where += (i == 0 ? "" : ", ") + locations[i];
  }
  if (rows_without > static_cast<std::int64_t>(std::min(locations.size(), kShown)))
    where += ", ...";
  // The rule of three: no success in n independent trials bounds the probability of one below
  // 3/n with 95% confidence (an antithetic pair is one trial).
  const double trials = static_cast<double>(mc::samples_per_option(options));
  return fmt::format(
      "{} of {} options had no paying path among their {} paths ({}): their price, std_error "
      "and ci are 0, which is no confidence interval; it says that a path pays with a "
      "probability below {:.2g} (95% confidence), so the price is small but not known to be 0; "
      "more paths resolve it",
      rows_without, rows, options.paths, where, 3.0 / trials);
}

MonteCarloOptions monte_carlo_options(const MonteCarloRequest& request) {
  MonteCarloOptions options;
  options.paths = request.paths;
  options.seed = request.seed;
  options.monitoring = request.monitoring;
  options.antithetic = request.antithetic;
  options.control_variate = request.control_variate;
  options.greeks = request.greeks;
  options.variance_reduction_factors = request.antithetic || request.control_variate;
  options.precision = request.precision;
  options.sampler = request.sampler;
  options.replicates = request.replicates;
  return options;
}

double monte_carlo_path_steps(const MonteCarloBookView& book, const MonteCarloOptions& options) {
  double path_steps = 0;
  for (std::int64_t i = 0; i < book.count; ++i) {
    const std::uint32_t steps = book.steps != nullptr ? book.steps[i] : 1;
    // An early-exercise row's regression pass too (american_work counts both passes).
    path_steps += mc::is_early_exercise(book, i) && steps <= kAmericanMaxDates
                      ? mc::american_work(options.paths, steps)
                      : double(options.paths) * steps;
  }
  return path_steps * monte_carlo_scenarios(book, options);  // with Greeks, their books
}

MonteCarloBookResult price_monte_carlo_book(const Context& context, const MonteCarloBookView& book,
                                            const MonteCarloOptions& options) {
  mc::check_book_and_options(book, options);
  // Rows with early exercise go to the Longstaff-Schwartz engine (monte_carlo_american.hpp).
  if (mc::has_early_exercise(book))
    return mc::price_book_with_early_exercise(context, book, options);
  return options.precision == Precision::float32 ? price_in<float>(context, book, options, {})
                                                 : price_in<double>(context, book, options, {});
}

namespace {

void check_device_outputs(const MonteCarloDeviceOutputs& out, const MonteCarloOptions& options) {
  if ((out.delta != nullptr || out.gamma != nullptr || out.vega != nullptr) && !options.greeks) {
    throw InvalidInput("monte carlo: delta, gamma and vega are computed only with options.greeks");
  }
  if (out.vrf_antithetic != nullptr &&
      !(options.variance_reduction_factors && options.antithetic)) {
    throw InvalidInput(
        "monte carlo: vrf_antithetic is computed only with options.variance_reduction_factors and "
        "options.antithetic");
  }
  if (out.vrf_control != nullptr &&
      !(options.variance_reduction_factors && options.control_variate)) {
    throw InvalidInput(
        "monte carlo: vrf_control is computed only with options.variance_reduction_factors and "
        "options.control_variate");
  }
}

#if GPUKIT_HAVE_CUDA

// A host copy of a book in device memory: each array the view names, read on `stream` (the
// caller waits for the stream before reading `view`); a null array stays null.
struct HostCopyOfDeviceBook {
  std::vector<std::uint8_t> is_put;
  std::vector<double> spot, strike, maturity, rate, volatility, dividend, barrier;
  std::vector<BarrierType> barrier_type;
  std::vector<std::uint32_t> steps;
  std::vector<std::uint64_t> stream_keys;
  std::vector<AverageType> average;
  std::vector<ExerciseStyle> exercise;
  std::vector<AssetModel> model;
  std::vector<double> v0, kappa, theta, sigma_v, rho;
  MonteCarloBookView view;

  HostCopyOfDeviceBook(const MonteCarloBookView& device_book, StreamHandle stream)
      : view(device_book) {
    const auto n = static_cast<std::size_t>(device_book.count);
    auto read = [&]<class T>(const T* device, std::vector<T>& host) -> const T* {
      if (device == nullptr || n == 0) return device;
      host.resize(n);
      cuda::copy_to_host_async(host.data(), device, n * sizeof(T), stream);
      return host.data();
    };
    view.is_put = read(device_book.is_put, is_put);
    view.spot = read(device_book.spot, spot);
    view.strike = read(device_book.strike, strike);
    view.maturity = read(device_book.maturity, maturity);
    view.rate.values = read(device_book.rate.values, rate);
    view.volatility.values = read(device_book.volatility.values, volatility);
    view.dividend.values = read(device_book.dividend.values, dividend);
    view.barrier_type = read(device_book.barrier_type, barrier_type);
    view.barrier = read(device_book.barrier, barrier);
    view.steps = read(device_book.steps, steps);
    view.stream = read(device_book.stream, stream_keys);
    view.average = read(device_book.average, average);
    view.exercise = read(device_book.exercise, exercise);
    view.model = read(device_book.model, model);
    view.v0.values = read(device_book.v0.values, v0);
    view.kappa.values = read(device_book.kappa.values, kappa);
    view.theta.values = read(device_book.theta.values, theta);
    view.sigma_v.values = read(device_book.sigma_v.values, sigma_v);
    view.rho.values = read(device_book.rho.values, rho);
  }
};

#endif

}  // namespace

void price_monte_carlo_book_on_device(const MonteCarloBookView& device_book,
                                      const MonteCarloDeviceOutputs& device_outputs,
                                      StreamHandle stream, const MonteCarloOptions& options) {
  mc::check_book_and_options(device_book, options);  // reads no array
  check_device_outputs(device_outputs, options);
  if (device_book.exercise != nullptr) {
    throw InvalidInput(
        "monte carlo: early exercise (OptionBookView::exercise) is priced by "
        "price_monte_carlo_book only; leave exercise null on a device book");
  }
#if GPUKIT_HAVE_CUDA
  // The rows are prepared and the estimates formed by the host code of price_monte_carlo_book
  // (glibc log, sqrt and exp), so the results are its bits; only the parameters cross the bus.
  const HostCopyOfDeviceBook host(device_book, stream);
  cuda::synchronize_stream(stream);
  const DeviceQueue queue{true, stream};
  const MonteCarloBookResult r = options.precision == Precision::float32
                                     ? price_in<float>(Context::cuda(), host.view, options, queue)
                                     : price_in<double>(Context::cuda(), host.view, options, queue);
  const auto write = [&](double* device, const std::vector<double>& values) {
    if (device != nullptr && !values.empty()) {
      cuda::copy_to_device_async(device, values.data(), values.size() * sizeof(double), stream);
    }
  };
  write(device_outputs.price, r.price);
  write(device_outputs.std_error, r.std_error);
  write(device_outputs.ci_low, r.ci_low);
  write(device_outputs.ci_high, r.ci_high);
  write(device_outputs.paths, r.paths);
  write(device_outputs.delta, r.delta);
  write(device_outputs.gamma, r.gamma);
  write(device_outputs.vega, r.vega);
  write(device_outputs.vrf_antithetic, r.vrf_antithetic);
  write(device_outputs.vrf_control, r.vrf_control);
  cuda::synchronize_stream(stream);  // the host vectors die on return
#else
  (void)stream;
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

}  // namespace gpukit::finance
