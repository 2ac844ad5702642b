// The independent reference of implied volatility (implied_volatility_reference.hpp): long double
// throughout, the out-of-the-money price from the quadrature of Y' (or the closed form where the
// interval is long), the volatility by bracketed Newton on the logarithm of the price.

#include "gpukit/finance/implied_volatility_reference.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::finance {

namespace {

using Long = long double;

const Long kPiL = std::acos(-1.0L);
const Long kInvSqrt2PiL = 1 / std::sqrt(2 * kPiL);
const Long kSqrtHalfPiL = std::sqrt(kPiL / 2);
const Long kInvSqrt2L = 1 / std::sqrt(2.0L);

// Gauss-Legendre nodes and weights on [-1, 1], by Newton on the Legendre polynomial. 16 nodes
// integrate Y' over an interval of length <= 1 to long double's rounding (the error is about
// (L/2)^32 / sqrt(32!) of the integrand's scale at the money, far less away from it).
constexpr int kNodes = 16;
struct GaussLegendre {
  std::array<Long, kNodes> node{}, weight{};
  GaussLegendre() {
    for (int i = 0; i < kNodes; ++i) {
      Long z = std::cos(kPiL * (i + 0.75L) / (kNodes + 0.5L));
      Long derivative = 0;
      for (int iteration = 0; iteration < 100; ++iteration) {
        Long p0 = 1, p1 = z;
        for (int n = 2; n <= kNodes; ++n) {
          const Long p2 = ((2 * n - 1) * z * p1 - (n - 1) * p0) / n;
          p0 = p1;
          p1 = p2;
        }
        derivative = kNodes * (z * p1 - p0) / (z * z - 1);
        const Long step = p1 / derivative;
        z -= step;
        if (std::fabs(step) < 1e-22L) break;
      }
      node[static_cast<std::size_t>(i)] = z;
      weight[static_cast<std::size_t>(i)] = 2 / ((1 - z * z) * derivative * derivative);
    }
  }
};
const GaussLegendre kGauss;

// Y(z) = Phi(z) / phi(z) and a(z) = Y'(z) = 1 + z Y(z). From erfc for z >= -20 (1 + z Y loses
// at most z^2 = 400 units of long double's rounding); below, from Laplace's continued fraction
// Y(-u) = 1/(u + T), T = 1/(u + 2/(u + 3/(u + ...))), converged to long double's rounding after
// 60 terms for u >= 20, whose tail gives a = T Y without the cancellation of 1 + z Y.
struct Mills {
  Long y, a;
};
Mills mills(Long z) {
  if (z >= -20) {
    const Long y = kSqrtHalfPiL * std::erfc(-z * kInvSqrt2L) * std::exp(z * z / 2);
    return {y, 1 + z * y};
  }
  const Long u = -z;
  Long tail = 0;
  for (int n = 60; n >= 2; --n) tail = n / (u + tail);
  const Long t = 1 / (u + tail);
  const Long y = 1 / (u + t);
  return {y, t * y};
}

Long normal_cdf(Long z) { return std::erfc(-z * kInvSqrt2L) / 2; }

// The normalised out-of-the-money call b(x, s) (x <= 0) and its complement b_max - b, where
// b = e^{-(h^2+t^2)/2} / sqrt(2 pi) (Y(h+t) - Y(h-t)), h = x/s, t = s/2.
struct Normalised {
  Long value, complement;
};
Normalised normalised_black(Long x, Long s) {
  const Long b_max = std::exp(x / 2);
  if (!(s > 0)) return {0, b_max};
  const Long h = x / s, t = s / 2;
  const Long prefactor = kInvSqrt2PiL * std::exp(-(h * h + t * t) / 2);
  Long value;
  if (t <= std::min(0.5L, std::max(1.25L, std::fabs(h)) / 100)) {
    // Y(h+t) - Y(h-t) as the integral of a = Y' over [h-t, h+t]: no cancellation. Elsewhere the
    // difference cancels by about max(Y(0), |h|) / (2t) < 50 units of long double's rounding,
    // under a thousandth of double's.
    Long integral = 0;
    for (int i = 0; i < kNodes; ++i) {
      const auto k = static_cast<std::size_t>(i);
      integral += kGauss.weight[k] * mills(h + t * kGauss.node[k]).a;
    }
    value = prefactor * integral * t;
  } else {
    value = b_max * normal_cdf(h + t) - prefactor * mills(h - t).y;
  }
  // b_max - b = e^{x/2} Phi(-(h+t)) + e^{-x/2} Phi(h-t): a sum, kept where b nears b_max.
  const Long complement = b_max * normal_cdf(-(h + t)) + prefactor * mills(h - t).y;
  return {std::max(value, 0.0L), complement};
}

Long normalised_vega(Long x, Long s) {
  if (!(s > 0)) return x == 0 ? kInvSqrt2PiL : 0;
  const Long h = x / s, t = s / 2;
  return kInvSqrt2PiL * std::exp(-(h * h + t * t) / 2);
}

// The root of an increasing f (f(s) returns the value and sets the derivative) on s > 0: Newton
// from `start`, inside a bracket that every evaluation narrows (open to the right until a value
// is positive); a step that would leave the bracket bisects it (or doubles s while it is open).
// From the checked volatility Newton takes two or three steps.
template <class F>
Long solve_increasing(const F& f, Long start) {
  constexpr Long kTolerance = 4 * std::numeric_limits<Long>::epsilon();
  Long lo = 0, hi = INFINITY, s = start, derivative = 0;
  for (int iteration = 0; iteration < 600; ++iteration) {
    const Long value = f(s, derivative);
    if (value == 0) return s;
    (value < 0 ? lo : hi) = s;
    const Long next = s - value / derivative;
    if (std::fabs(next - s) <= kTolerance * s) return next;  // (false for a NaN step)
    if (next > lo && next < hi) {
      s = next;
    } else if (std::isfinite(hi)) {
      if (hi - lo <= kTolerance * hi) return (lo + hi) / 2;
      s = (lo + hi) / 2;
    } else {
      s *= 2;
    }
  }
  return s;
}

// Solves b(x, s) = beta for s (x <= 0, 0 < beta < b_max) on ln b - ln beta, or on
// ln(b_max - beta) - ln(b_max - b) in b's upper half (both increase with s).
Long solve_normalised(Long beta, Long x, Long start) {
  const Long b_max = std::exp(x / 2);
  const bool upper = beta > b_max / 2;
  const Long target = upper ? std::log(b_max - beta) : std::log(beta);
  const auto f = [&](Long s, Long& derivative) {
    const Normalised b = normalised_black(x, s);
    const Long vega = normalised_vega(x, s);
    if (upper) {
      derivative = vega / b.complement;
      return target - std::log(b.complement);
    }
    derivative = vega / b.value;
    return std::log(b.value) - target;
  };
  return solve_increasing(f, start > 0 && std::isfinite(start) ? start : 1.0L);
}

bool negative_or_nan(Long v) { return !(v >= 0) || !std::isfinite(v); }

Long epsilon_of(Precision precision) {
  return precision == Precision::float32 ? std::numeric_limits<float>::epsilon()
                                         : std::numeric_limits<double>::epsilon();
}
Long least_normal_of(Precision precision) {
  return precision == Precision::float32 ? std::numeric_limits<float>::min()
                                         : std::numeric_limits<double>::min();
}

// The row in long double: its discount factor, discounted forward and strike, x and the terms of
// the model's price.
struct Row {
  Long discount, discounted_forward, discounted_strike, x, carry;  // carry: |(r - q) T|
  bool bachelier;
};

Row row_of(VolatilityModel model, Long underlying, Long strike, Long maturity, Long rate,
           Long dividend) {
  Row row{};
  row.discount = std::exp(-rate * maturity);
  row.bachelier = model == VolatilityModel::bachelier;
  if (model == VolatilityModel::black_scholes) {
    row.discounted_forward = underlying * std::exp(-dividend * maturity);
    row.x = underlying > 0 && strike > 0
                ? std::log(underlying / strike) + (rate - dividend) * maturity
                : 0;
    row.carry = std::fabs((rate - dividend) * maturity);
  } else {
    row.discounted_forward = row.discount * underlying;
    row.x = underlying > 0 && strike > 0 ? std::log(underlying / strike) : 0;
  }
  row.discounted_strike = row.discount * strike;
  return row;
}

// The out-of-the-money (time) value of a row at s = sigma sqrt(T), undiscounted and normalised
// as the model's solve uses it: lognormal b(-|x|, s) (times sqrt(F K)); Bachelier
// s phi(u) a(-u), u = |F - K| / s.
Long time_value(const Row& row, Long forward, Long strike, Long s) {
  if (row.bachelier) {
    const Long distance = std::fabs(forward - strike);
    if (!(s > 0)) return 0;
    const Long u = distance / s;
    return s * kInvSqrt2PiL * std::exp(-u * u / 2) * mills(-u).a;
  }
  return std::sqrt(forward * strike) * normalised_black(-std::fabs(row.x), s).value;
}

}  // namespace

long double implied_volatility_model_price(const ImpliedVolatilityQuote& quote,
                                           long double volatility) {
  const Row row = row_of(quote.model, quote.underlying, quote.strike, quote.maturity, quote.rate,
                         quote.dividend);
  const bool is_put = quote.is_put;
  const Long strike = quote.strike, maturity = quote.maturity;
  const Long forward = row.discounted_forward / row.discount;
  const Long intrinsic = std::max(is_put ? row.discounted_strike - row.discounted_forward
                                         : row.discounted_forward - row.discounted_strike,
                                  0.0L);
  if (!row.bachelier && (forward == 0 || strike == 0)) return intrinsic;
  const Long s = volatility * std::sqrt(maturity);
  return intrinsic + row.discount * time_value(row, forward, strike, s);
}

ImpliedVolatilityReference implied_volatility_reference(const ImpliedVolatilityQuote& quote,
                                                        Precision precision, long double start,
                                                        bool solve) {
  const VolatilityModel model = quote.model;
  const Long price = quote.price, underlying = quote.underlying, strike = quote.strike,
             maturity = quote.maturity, rate = quote.rate, dividend = quote.dividend;
  const bool is_put = quote.is_put;
  ImpliedVolatilityReference ref;
  const auto settle = [&](ImpliedVolatilityStatus status) {
    ref.status = status;
    return ref;
  };
  const bool uses_dividend = model == VolatilityModel::black_scholes;
  if (negative_or_nan(price) || negative_or_nan(underlying) || negative_or_nan(strike) ||
      negative_or_nan(maturity) || !std::isfinite(rate) ||
      (uses_dividend && !std::isfinite(dividend))) {
    return settle(ImpliedVolatilityStatus::invalid_input);
  }
  if (maturity == 0) return settle(ImpliedVolatilityStatus::zero_maturity);
  const Row row = row_of(model, underlying, strike, maturity, rate, dividend);
  const Long df = row.discounted_forward, dk = row.discounted_strike;
  const Long intrinsic = std::max(is_put ? dk - df : df - dk, 0.0L);
  const Long eps = epsilon_of(precision);
  const Long margin =
      kImpliedVolatilityBoundUnits * eps * (df + dk) *
      (1 + std::fabs(rate * maturity) + (uses_dividend ? std::fabs(dividend * maturity) : 0.0L));
  const bool has_bound = !row.bachelier;
  const Long bound = is_put ? dk : df;
  ref.near_intrinsic = std::fabs(price - intrinsic) <= margin;
  ref.near_bound = has_bound && std::fabs(price - bound) <= margin;
  if (price < intrinsic) {
    ref.status = ImpliedVolatilityStatus::below_intrinsic;
    return ref;
  }
  if (has_bound && price >= bound && price != intrinsic) {
    ref.status = ImpliedVolatilityStatus::above_maximum;
    return ref;
  }
  ref.status = ImpliedVolatilityStatus::ok;
  if (!solve) return ref;

  const Long sqrt_t = std::sqrt(maturity);
  const Long forward = df / row.discount;
  const Long undiscounted_time_value = (price - intrinsic) / row.discount;
  Long s = 0;
  if (price > intrinsic) {
    if (row.bachelier) {
      const Long distance = std::fabs(forward - strike);
      if (distance == 0) {
        s = undiscounted_time_value * std::sqrt(2 * kPiL);
      } else {
        // tv(s) = s phi(u) a(-u), u = distance / s, increases with s: Newton on its logarithm in
        // a bracket, as for the lognormal models.
        const Long target = std::log(undiscounted_time_value);
        const auto f = [&](Long v, Long& derivative) {
          const Long u = distance / v;
          const Long tv = time_value(row, forward, strike, v);
          derivative = kInvSqrt2PiL * std::exp(-u * u / 2) / tv;  // d tv/ds = phi(u)
          return std::log(tv) - target;
        };
        const Long begin = start * sqrt_t;
        s = solve_increasing(f, begin > 0 && std::isfinite(begin) ? begin : distance);
      }
    } else {
      const Long beta = undiscounted_time_value / std::sqrt(forward * strike);
      s = solve_normalised(beta, -std::fabs(row.x), start * sqrt_t);
    }
  }
  ref.volatility = s / sqrt_t;

  // vega and the price's error scale P (the header's derivation).
  const Long least = least_normal_of(precision) / eps;
  if (row.bachelier) {
    const Long moneyness = forward - strike;
    const Long u = s > 0 ? moneyness / s : (moneyness > 0 ? INFINITY : -INFINITY);
    const Long density =
        s > 0 ? kInvSqrt2PiL * std::exp(-u * u / 2) : (moneyness == 0 ? kInvSqrt2PiL : 0.0L);
    ref.vega = row.discount * sqrt_t * density;
    const Long side_cdf = normal_cdf(is_put ? -u : u);
    ref.price_scale = price + row.discount * side_cdf * std::fabs(moneyness) +
                      row.discount * std::max(std::fabs(forward), strike) * least;
  } else {
    const Long root = std::sqrt(forward * strike);
    ref.vega = row.discount * root * normalised_vega(-std::fabs(row.x), s) * sqrt_t;
    const Long d1 = s > 0 ? row.x / s + s / 2 : (row.x > 0 ? INFINITY : -INFINITY);
    const Long d2 = s > 0 ? d1 - s : d1;
    const Long sign = is_put ? -1 : 1;
    const Long sensitivity =
        row.discount * (forward * normal_cdf(sign * d1) + strike * normal_cdf(sign * d2)) / 2;
    ref.price_scale = price + sensitivity * (std::fabs(row.x) + row.carry) +
                      row.discount * std::max(forward, strike) * least;
  }
  return ref;
}

double implied_volatility_error_ratio(const ImpliedVolatilityQuote& quote,
                                      const ImpliedVolatilityReference& reference,
                                      Precision precision, double volatility) {
  if (std::isnan(volatility)) return volatility;
  const Long error = std::fabs(volatility - reference.volatility);
  if (error == 0) return 0;
  const Long units = kImpliedVolatilityBoundUnits * epsilon_of(precision);
  const Long volatility_ratio =
      error / (units * (reference.volatility + reference.price_scale / reference.vega));
  const Long price_error =
      std::fabs(implied_volatility_model_price(quote, volatility) - quote.price);
  const Long price_ratio =
      price_error / (units * (reference.price_scale + reference.volatility * reference.vega));
  return static_cast<double>(std::min(volatility_ratio, price_ratio));
}

namespace {

constexpr std::int64_t kCheckChunkRows = std::int64_t{1} << 16;

struct RowVerdict {
  double ratio = 0;  // |sigma - sigma*| / bound for rows both call ok; 0 otherwise
  bool status_mismatch = false;
  bool volatility_not_nan = false;
};

template <class Real>
RowVerdict check_row(const ImpliedVolatilityBookView& book, Precision precision,
                     VolatilityModel model, std::int64_t i, double volatility,
                     ImpliedVolatilityStatus status) {
  const auto k = static_cast<std::size_t>(i);
  const auto at = [i](const PerOption<double>& p) {
    return p.values != nullptr ? p.values[i] : p.scalar;
  };
  // The inputs as the inversion saw them (rounded to Real), exactly widened to long double.
  const auto real = [](double v) { return static_cast<Long>(static_cast<Real>(v)); };
  const ImpliedVolatilityQuote quote{model,
                                     real(book.price[k]),
                                     real(book.underlying[k]),
                                     real(book.strike[k]),
                                     real(book.maturity[k]),
                                     real(at(book.rate)),
                                     real(at(book.dividend)),
                                     book.is_put != nullptr && book.is_put[k] != 0};
  // The exact volatility only where the library gave one: a row it calls otherwise needs only its
  // status (and must carry NaN).
  const ImpliedVolatilityReference ref =
      implied_volatility_reference(quote, precision, std::isfinite(volatility) ? volatility : -1,
                                   status == ImpliedVolatilityStatus::ok);
  RowVerdict verdict;
  if (!ref.accepts(status)) verdict.status_mismatch = true;
  if (status != ImpliedVolatilityStatus::ok) {
    verdict.volatility_not_nan = !std::isnan(volatility);
    return verdict;
  }
  if (ref.status != ImpliedVolatilityStatus::ok) return verdict;  // a boundary row, either way
  verdict.ratio = implied_volatility_error_ratio(quote, ref, precision, volatility);
  return verdict;
}

}  // namespace

ImpliedVolatilityCheck check_implied_volatility_book(
    const ImpliedVolatilityBookView& book, Precision precision, VolatilityModel model,
    std::span<const double> volatility, std::span<const ImpliedVolatilityStatus> status,
    int threads, const std::function<void(double)>& progress) {
  const std::int64_t n = std::max<std::int64_t>(book.count, 0);
  if (volatility.size() != static_cast<std::size_t>(n) ||
      status.size() != static_cast<std::size_t>(n)) {
    throw InvalidInput("check_implied_volatility_book: the results differ from the book's count");
  }
  std::vector<RowVerdict> verdict(static_cast<std::size_t>(n));
  // A checked row on one thread: about 5 us (a few Newton steps, each 16 long double erfc).
  constexpr double kNsPerCheckedRow = 5000;
  const int team = cpu_threads_for({n, kNsPerCheckedRow}, threads);
  for (std::int64_t first = 0; first < n; first += kCheckChunkRows) {
    const std::int64_t end = std::min(n, first + kCheckChunkRows);
#pragma omp parallel for schedule(dynamic, 256) num_threads(team)
    for (std::int64_t i = first; i < end; ++i) {
      const auto k = static_cast<std::size_t>(i);
      verdict[k] = precision == Precision::float32
                       ? check_row<float>(book, precision, model, i, volatility[k], status[k])
                       : check_row<double>(book, precision, model, i, volatility[k], status[k]);
    }
    if (progress) progress(static_cast<double>(end) / static_cast<double>(n));
  }
  // The verdict in index order, so that it does not depend on the thread count.
  ImpliedVolatilityCheck check;
  for (std::int64_t i = 0; i < n; ++i) {
    const RowVerdict& v = verdict[static_cast<std::size_t>(i)];
    // The first NaN stays the worst; otherwise the first of the largest ratios.
    if (check.worst_index < 0 ||
        (!std::isnan(check.worst_ratio) && !(v.ratio <= check.worst_ratio))) {
      check.worst_ratio = v.ratio;
      check.worst_index = i;
    }
    if (v.status_mismatch) {
      if (check.status_mismatches++ == 0) check.first_mismatch = i;
    }
    if (v.volatility_not_nan) ++check.volatility_not_nan;
  }
  check.passed = check.worst_ratio <= 1 && check.status_mismatches == 0 &&
                 check.volatility_not_nan == 0;  // true for an empty book
  return check;
}

}  // namespace gpukit::finance
