// The early-exercise engine's host side: each row's plan (validation, constants in double rounded
// once to the computing precision), the dispatch to the CPU backend
// (cpu/monte_carlo_american_kernels.cpp) or the CUDA kernels
// (cuda/monte_carlo_american_kernels.cu), and the routing of a book's rows: European rows to the
// European engine, early-exercise rows here, results merged in row order.

#include "finance/monte_carlo_american.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "finance/monte_carlo_internal.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/monte_carlo_american.hpp"

namespace gpukit::finance::mc {

namespace {

[[noreturn]] void refuse_row(std::int64_t i, const std::string& why) {
  throw InvalidInput(fmt::format("monte carlo: option {}: {}", i, why));
}

std::uint64_t stream_key(const MonteCarloBookView& book, std::int64_t i,
                         const MonteCarloOptions& options) {
  return book.stream != nullptr
             ? book.stream[i]
             : std::uint64_t{options.first_option_index} + static_cast<std::uint64_t>(i);
}

// The rows `rows` of `book` as a book of their own, each on its stream key in `book` (so it keeps
// its numbers) and with European exercise. Every per-row array of OptionBookView is gathered (the
// columns book_rows offsets: keep the two lists in step).
struct GatheredBook {
  static constexpr const double* OptionBookView::*kDoubleColumns[] = {
      &OptionBookView::spot, &OptionBookView::strike, &OptionBookView::maturity,
      &OptionBookView::barrier};
  static constexpr PerOption<double> OptionBookView::*kPerOptionColumns[] = {
      &OptionBookView::rate,    &OptionBookView::volatility, &OptionBookView::dividend,
      &OptionBookView::v0,      &OptionBookView::kappa,      &OptionBookView::theta,
      &OptionBookView::sigma_v, &OptionBookView::rho};

  std::vector<double> doubles[std::size(kDoubleColumns)];
  std::vector<double> per_option[std::size(kPerOptionColumns)];
  std::vector<std::uint8_t> is_put;
  std::vector<BarrierType> barrier_type;
  std::vector<std::uint32_t> steps;
  std::vector<AverageType> average;
  std::vector<AssetModel> model;
  std::vector<std::uint64_t> stream;
  MonteCarloBookView view;

  GatheredBook(const MonteCarloBookView& book, const std::vector<std::int64_t>& rows,
               const MonteCarloOptions& options)
      : view(book) {
    const auto gather = [&]<class T>(const T* column, std::vector<T>& out) -> const T* {
      if (column == nullptr) return nullptr;
      for (const std::int64_t i : rows) out.push_back(column[i]);
      return out.data();
    };
    view.count = static_cast<std::int64_t>(rows.size());
    for (std::size_t c = 0; c < std::size(kDoubleColumns); ++c) {
      view.*kDoubleColumns[c] = gather(book.*kDoubleColumns[c], doubles[c]);
    }
    for (std::size_t c = 0; c < std::size(kPerOptionColumns); ++c) {
      const PerOption<double>& column = book.*kPerOptionColumns[c];
      view.*kPerOptionColumns[c] = {gather(column.values, per_option[c]), column.scalar};
    }
    view.is_put = gather(book.is_put, is_put);
    view.barrier_type = gather(book.barrier_type, barrier_type);
    view.steps = gather(book.steps, steps);
    view.average = gather(book.average, average);
    view.exercise = nullptr;
    view.model = gather(book.model, model);
    for (const std::int64_t i : rows) stream.push_back(stream_key(book, i, options));
    view.stream = stream.data();
  }
};

template <class Real>
Moments<double> american_moments(const Context& context, AmericanPlan<Real>& plan,
                                 const WorkDone& work_done) {
  if (context.backend == Backend::cpu) {
    return american_moments_cpu(plan, context.cpu_threads, work_done);
  }
  return american_moments_cuda(plan, context.cuda_device, work_done);
}

// A row's plan from its (validated, rounded) inputs.
template <class Real>
AmericanPlan<Real> plan_of(const OptionInputs& in, std::uint64_t key,
                           const MonteCarloOptions& options) {
  const double dt = in.maturity / in.steps;
  const double sigma = in.volatility;
  AmericanPlan<Real> plan;
  AmericanParams<Real>& p = plan.params;
  p.spot_over_strike = static_cast<Real>(in.spot / in.strike);
  p.drift_dt = static_cast<Real>((in.rate - in.dividend - 0.5 * sigma * sigma) * dt);
  p.vol_sqrt_dt = static_cast<Real>(sigma * std::sqrt(dt));
  p.discount_dt = static_cast<Real>(std::exp(-in.rate * dt));
  p.payoff_sign = in.is_put ? Real(-1) : Real(1);
  p.dates = in.steps;
  p.option = static_cast<std::uint32_t>(key);
  p.stream_high = static_cast<std::uint32_t>(key >> 32);
  p.antithetic = options.antithetic ? 1 : 0;
  if (in.model == AssetModel::heston) {
    p.heston = 1;
    p.heston_step = heston_step_params<Real>(in);
    const double scale = std::max(in.v0, in.theta);
    p.inv_variance_scale = static_cast<Real>(scale > 0 ? 1 / scale : 0.0);
  }
  plan.paths = options.paths;
  plan.regression_paths = american_regression_paths(options.paths, in.steps);
  plan.seed = options.seed;
  plan.rules.resize(in.steps);
  for (std::uint32_t date = 0; date < in.steps; ++date) {
    plan.rules[date].discount = static_cast<Real>(std::exp(-in.rate * dt * (date + 1.0)));
  }
  plan.rules.back().at_maturity = 1;
  return plan;
}

// Row i's estimate, and with options.greeks its delta, gamma and vega by central differences on
// common random numbers: each bumped row (Monte Carlo's bumps, mc::difference_scenarios) refits
// its rule on the same pass 1 numbers and prices on the same pass 2 numbers.
struct AmericanRowResult {
  Estimate estimate;
  double delta = 0, gamma = 0, vega = 0;
};

template <class Real>
AmericanRowResult american_row(const Context& context, const MonteCarloBookView& book,
                               std::int64_t i, const MonteCarloOptions& options,
                               const WorkDone& work_done) {
  const OptionInputs in = option_inputs<Real>(book, i);
  const Scenarios s = difference_scenarios({in}, options.greeks);
  const std::vector<Moments<double>> moments =
      american_scenario_moments<Real>(context, book, i, options, work_done);
  AmericanRowResult r;
  std::vector<double> prices;
  for (std::size_t k = 0; k < moments.size(); ++k) {
    const Estimate e = american_estimate(s.rows[k][0], moments[k], options.antithetic);
    if (prices.empty()) r.estimate = e;
    prices.push_back(e.price);
  }
  if (options.greeks) {
    const double h = s.spot_step[0];
    r.delta = (prices[1] - prices[2]) / (2 * h);
    r.gamma = (prices[1] - 2 * prices[0] + prices[2]) / (h * h);
    r.vega = (prices[3] - prices[4]) / (s.vol_up[0] - s.vol_down[0]);
  }
  return r;
}

}  // namespace

bool is_early_exercise(const MonteCarloBookView& book, std::int64_t i) {
  return book.exercise != nullptr && book.exercise[i] != ExerciseStyle::european;
}

Estimate american_estimate(const OptionInputs& in, const Moments<double>& m, bool antithetic) {
  Estimate e;
  e.price = in.strike * m.mean_x;
  e.std_error = m.count > 1 ? in.strike * std::sqrt(m.m2_x / (m.count - 1) / m.count) : 0.0;
  if (antithetic) e.vrf_antithetic = antithetic_variance_reduction(m);
  return e;
}

double american_work(std::int64_t paths, std::uint32_t steps) {
  return double(steps) * double(paths + american_regression_paths(paths, steps));
}

template <class Real>
std::vector<Moments<double>> american_scenario_moments(const Context& context,
                                                       const MonteCarloBookView& book,
                                                       std::int64_t i,
                                                       const MonteCarloOptions& options,
                                                       const WorkDone& work_done) {
  (void)american_plan<Real>(book, i, options);  // the row's checks
  const std::uint64_t key = stream_key(book, i, options);
  const Scenarios s = difference_scenarios({option_inputs<Real>(book, i)}, options.greeks);
  std::vector<Moments<double>> moments;
  for (const std::vector<OptionInputs>& rows : s.rows) {
    AmericanPlan<Real> plan = plan_of<Real>(rows[0], key, options);
    moments.push_back(american_moments(context, plan, work_done));
  }
  return moments;
}
template std::vector<Moments<double>> american_scenario_moments<float>(const Context&,
                                                                       const MonteCarloBookView&,
                                                                       std::int64_t,
                                                                       const MonteCarloOptions&,
                                                                       const WorkDone&);
template std::vector<Moments<double>> american_scenario_moments<double>(const Context&,
                                                                        const MonteCarloBookView&,
                                                                        std::int64_t,
                                                                        const MonteCarloOptions&,
                                                                        const WorkDone&);

bool has_early_exercise(const MonteCarloBookView& book) {
  for (std::int64_t i = 0; i < book.count; ++i) {
    if (is_early_exercise(book, i)) return true;
  }
  return false;
}

template <class Real>
AmericanPlan<Real> american_plan(const MonteCarloBookView& book, std::int64_t i,
                                 const MonteCarloOptions& options) {
  if (book.barrier_type != nullptr && book.barrier_type[i] != BarrierType::none) {
    refuse_row(i, "a barrier option cannot have early exercise (exercise must be european)");
  }
  if (book.average != nullptr && book.average[i] != AverageType::none) {
    refuse_row(i, "an Asian option cannot have early exercise (exercise must be european)");
  }
  if (options.sampler != MonteCarloSampler::philox) {
    refuse_row(i, "early exercise is priced on Philox numbers only (sampler philox)");
  }
  if (options.control_variate) {
    refuse_row(i, "the control variate is not available with early exercise");
  }
  const OptionInputs in = option_inputs<Real>(book, i);
  if (!(in.strike > 0) || !std::isfinite(in.strike) || !(in.spot > 0) || !std::isfinite(in.spot)) {
    refuse_row(i, "early exercise needs a spot and a strike > 0");
  }
  if (in.steps > kAmericanMaxDates) {
    refuse_row(i, fmt::format("early exercise allows at most {} dates (steps), got {}",
                              kAmericanMaxDates, in.steps));
  }
  return plan_of<Real>(in, stream_key(book, i, options), options);
}

MonteCarloBookResult price_book_with_early_exercise(const Context& context,
                                                    const MonteCarloBookView& book,
                                                    const MonteCarloOptions& options) {
  const bool single = options.precision == Precision::float32;
  std::vector<std::int64_t> european, early;
  for (std::int64_t i = 0; i < book.count; ++i)
    (is_early_exercise(book, i) ? early : european).push_back(i);
  // Every row's error before any work, named by its row in the book.
  for (const std::int64_t i : early) {
    if (single) {
      (void)american_plan<float>(book, i, options);
    } else {
      (void)american_plan<double>(book, i, options);
    }
  }
  if (single) {
    check_rows<float>(book, 0, book.count, options);
  } else {
    check_rows<double>(book, 0, book.count, options);
  }

  // Progress in path-dates: a European row's paths times steps, an early-exercise row's two
  // passes.
  double european_work = 0, total_work = 0, work_done = 0;
  const double scenario_count = options.greeks ? 5 : 1;
  for (std::int64_t i = 0; i < book.count; ++i) {
    const std::uint32_t steps = book.steps != nullptr ? book.steps[i] : 1;
    if (is_early_exercise(book, i)) {
      total_work += scenario_count * american_work(options.paths, steps);
    } else {
      european_work += scenario_count * double(steps) * double(options.paths);
    }
  }
  total_work += european_work;
  const auto report = [&](double done) {
    if (options.progress) options.progress(total_work > 0 ? std::min(1.0, done / total_work) : 1.0);
  };

  MonteCarloBookResult european_result;
  if (!european.empty()) {
    const GatheredBook rows(book, european, options);
    MonteCarloOptions european_options = options;
    if (options.progress) {
      european_options.progress = [&](double fraction) { report(fraction * european_work); };
    }
    european_result = price_monte_carlo_book(context, rows.view, european_options);
    work_done = european_work;
  }

  const auto n = static_cast<std::size_t>(book.count);
  MonteCarloBookResult r;
  r.price.resize(n), r.std_error.resize(n), r.ci_low.resize(n), r.ci_high.resize(n);
  r.paths.assign(n, static_cast<double>(options.paths));
  // Each column the European engine computed, its rows put back in place.
  for (std::vector<double> MonteCarloBookResult::*column :
       {&MonteCarloBookResult::price, &MonteCarloBookResult::std_error,
        &MonteCarloBookResult::ci_low, &MonteCarloBookResult::ci_high, &MonteCarloBookResult::paths,
        &MonteCarloBookResult::delta, &MonteCarloBookResult::gamma, &MonteCarloBookResult::vega,
        &MonteCarloBookResult::vrf_antithetic, &MonteCarloBookResult::vrf_control}) {
    const std::vector<double>& from = european_result.*column;
    if (from.empty()) continue;
    std::vector<double>& to = r.*column;
    to.resize(n);
    for (std::size_t j = 0; j < european.size(); ++j) {
      to[static_cast<std::size_t>(european[j])] = from[j];
    }
  }

  if (options.greeks) r.delta.resize(n), r.gamma.resize(n), r.vega.resize(n);
  const bool antithetic_factors = options.variance_reduction_factors && options.antithetic;
  if (antithetic_factors) r.vrf_antithetic.resize(n);
  // Progress within a row too: each pass and date of its engine reports its path-dates.
  WorkDone row_work;
  if (options.progress) {
    row_work = [&](double path_dates) {
      work_done += path_dates;
      report(work_done);
    };
  }
  for (const std::int64_t i : early) {
    const AmericanRowResult row = single
                                      ? american_row<float>(context, book, i, options, row_work)
                                      : american_row<double>(context, book, i, options, row_work);
    const Estimate& e = row.estimate;
    const auto k = static_cast<std::size_t>(i);
    r.price[k] = e.price;
    r.std_error[k] = e.std_error;
    r.ci_low[k] = e.price - 1.96 * e.std_error;
    r.ci_high[k] = e.price + 1.96 * e.std_error;
    if (options.greeks) r.delta[k] = row.delta, r.gamma[k] = row.gamma, r.vega[k] = row.vega;
    if (antithetic_factors) r.vrf_antithetic[k] = e.vrf_antithetic;
  }
  report(total_work);
  return r;
}

template AmericanPlan<float> american_plan<float>(const MonteCarloBookView&, std::int64_t,
                                                  const MonteCarloOptions&);
template AmericanPlan<double> american_plan<double>(const MonteCarloBookView&, std::int64_t,
                                                    const MonteCarloOptions&);

#if !GPUKIT_HAVE_CUDA
template <class Real>
Moments<double> american_moments_cuda(AmericanPlan<Real>&, int, const WorkDone&) {
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
}
template Moments<double> american_moments_cuda<float>(AmericanPlan<float>&, int, const WorkDone&);
template Moments<double> american_moments_cuda<double>(AmericanPlan<double>&, int, const WorkDone&);
#endif

}  // namespace gpukit::finance::mc
