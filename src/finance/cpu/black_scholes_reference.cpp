#include "gpukit/finance/black_scholes_reference.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::finance {

ReferencePrices black_scholes_reference(long double spot, long double strike, long double maturity,
                                        long double rate, long double volatility,
                                        long double dividend) {
  const long double forward = spot * std::exp((rate - dividend) * maturity);
  const long double discount = std::exp(-rate * maturity);
  const long double s = volatility * std::sqrt(maturity);
  if (s == 0 || strike == 0) {
    return {discount * std::max(forward - strike, 0.0L),
            discount * std::max(strike - forward, 0.0L)};
  }
  const long double d1 = (std::log(forward / strike) + s * s / 2) / s;
  const long double d2 = d1 - s;
  const auto N = [](long double d) { return 0.5L * std::erfc(-d / std::sqrt(2.0L)); };
  return {discount * (forward * N(d1) - strike * N(d2)),
          discount * (strike * N(-d2) - forward * N(-d1))};
}

namespace {

// Rows whose references are computed between two progress reports: a fraction of a second of long
// double work on a few cores.
constexpr std::int64_t kCheckChunkRows = std::int64_t{1} << 16;

// Checks `count` prices: item(i, reference, price, bound) fills the i-th triple. The references
// (long double, the slow part) are computed on `threads` OpenMP threads, a chunk of rows at a
// time with `progress` told the fraction done between chunks (on this thread); the verdict is then
// taken in index order, so it does not depend on the thread count.
template <class Item>
BlackScholesCheck check_items(std::int64_t count, int threads, const Item& item,
                              const std::function<void(double)>& progress) {
  const auto n = static_cast<std::size_t>(count);
  std::vector<double> reference(n), price(n), bound(n);
  // A checked price on one thread: 510 ns (gpukit_tune_cpu_threads costs at idle, 2^17 prices:
  // 484, 544).
  constexpr double kNsPerCheckedPrice = 510;
  const int team = cpu_threads_for({count, kNsPerCheckedPrice}, threads);
  for (std::int64_t first = 0; first < count; first += kCheckChunkRows) {
    const std::int64_t end = std::min(count, first + kCheckChunkRows);
#pragma omp parallel for schedule(static) num_threads(team)
    for (std::int64_t i = first; i < end; ++i) {
      const auto k = static_cast<std::size_t>(i);
      item(i, reference[k], price[k], bound[k]);
    }
    if (progress) progress(static_cast<double>(end) / static_cast<double>(count));
  }
  BlackScholesCheck check;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = std::fabs(price[i] - reference[i]);
    const double ratio = d == 0 ? 0.0 : d / bound[i];  // NaN for a NaN price
    // The first NaN stays the worst; otherwise the first of the largest ratios.
    if (check.worst_index < 0 ||
        (!std::isnan(check.worst_ratio) && !(ratio <= check.worst_ratio))) {
      check.worst_ratio = ratio;
      check.worst_index = static_cast<std::int64_t>(i);
    }
  }
  check.metrics = compare<double, double>(reference, price);
  check.passed = check.worst_ratio <= 1;  // false for a NaN; true for an empty book
  return check;
}

template <class Real>
Real parameter(const PerOption<Real>& p, std::int64_t i) {
  return p.values != nullptr ? p.values[i] : p.scalar;
}

}  // namespace

template <class Real>
BlackScholesCheck check_black_scholes_prices(const BlackScholesInputs<Real>& in,
                                             std::span<const Real> price, NormalCdf cdf,
                                             int threads) {
  const std::int64_t n = std::max<std::int64_t>(in.count, 0);
  if (price.size() != static_cast<std::size_t>(n))
    throw InvalidInput("check_black_scholes_prices: the prices differ from the book's count");
  return check_items(n, threads,
                     [&](std::int64_t i, double& ref, double& got, double& bound) {
                       const auto k = static_cast<std::size_t>(i);
                       const Real S = in.spot[k], X = in.strike[k], T = in.maturity[k];
                       const Real r = parameter(in.rate, i), v = parameter(in.volatility, i),
                                  q = parameter(in.dividend, i);
                       const ReferencePrices p = black_scholes_reference(S, X, T, r, v, q);
                       ref = static_cast<double>(parameter(in.is_put, i) != 0 ? p.put : p.call);
                       got = static_cast<double>(price[k]);
                       bound = black_scholes_price_bound<Real>(S, X, T, r, q, cdf);
                     },
                     {});
}

namespace {

template <class Real>
BlackScholesCheck check_book_in(const OptionBookView& book, NormalCdf cdf,
                                std::span<const double> price, int threads,
                                const std::function<void(double)>& progress) {
  const std::int64_t n = std::max<std::int64_t>(book.count, 0);
  if (price.size() != static_cast<std::size_t>(n))
    throw InvalidInput("check_european_book_prices: the prices differ from the book's count");
  const auto item = [&](std::int64_t i, double& ref, double& got, double& bound) {
    const auto k = static_cast<std::size_t>(i);
    // The inputs as the pricing saw them (rounded to Real), exactly widened to long double.
    const Real S = static_cast<Real>(book.spot[k]), X = static_cast<Real>(book.strike[k]),
               T = static_cast<Real>(book.maturity[k]);
    const Real r = static_cast<Real>(parameter(book.rate, i)),
               v = static_cast<Real>(parameter(book.volatility, i)),
               q = static_cast<Real>(parameter(book.dividend, i));
    const ReferencePrices p = black_scholes_reference(S, X, T, r, v, q);
    ref = static_cast<double>(book.is_put[k] ? p.put : p.call);
    got = price[k];
    bound = black_scholes_price_bound<Real>(S, X, T, r, q, cdf);
  };
  return check_items(n, threads, item, progress);
}

}  // namespace

BlackScholesCheck check_european_book_prices(const OptionBookView& book, Precision precision,
                                             NormalCdf cdf, std::span<const double> price,
                                             int threads,
                                             const std::function<void(double)>& progress) {
  return precision == Precision::float32
             ? check_book_in<float>(book, cdf, price, threads, progress)
             : check_book_in<double>(book, cdf, price, threads, progress);
}

template BlackScholesCheck check_black_scholes_prices<float>(const BlackScholesInputs<float>&,
                                                             std::span<const float>, NormalCdf,
                                                             int);
template BlackScholesCheck check_black_scholes_prices<double>(const BlackScholesInputs<double>&,
                                                              std::span<const double>, NormalCdf,
                                                              int);

}  // namespace gpukit::finance
