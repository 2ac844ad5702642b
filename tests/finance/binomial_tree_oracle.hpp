#pragma once
// The tests' oracle for early exercise: a Cox-Ross-Rubinstein binomial tree in long double,
// written here, apart from the engine it checks (it shares no code with the library).
//
// Dates: a row with `dates` exercise dates t_k = k T / dates, k = 1 .. dates, is priced on a tree
// of M = dates * ceil(min_steps / dates) steps (at least min_steps, 10,000 by default), so that
// date t_k falls exactly on tree step k M / dates; exercise is allowed at those nodes only (and at
// maturity). European: at maturity only; American: at every node, t = 0 included. Error: CRR's
// O(1/M) (oscillating in M), about 1e-4 on the rows below at M = 10,000 (the tests bound it
// against Black-Scholes and published American values).

#include <cmath>
#include <cstdint>
#include <vector>

namespace gpukit::finance::testing {

struct TreeOption {
  bool put = true;
  long double spot = 100, strike = 100, maturity = 1, rate = 0.05, dividend = 0, volatility = 0.2;
};

enum class TreeExercise { european, bermudan, american };

/// The tree's steps for `dates` dates and at least `min_steps` steps (a multiple of dates).
inline std::int64_t tree_steps_for(std::uint32_t dates, std::int64_t min_steps = 10000) {
  const std::int64_t per_date = (min_steps + dates - 1) / dates;
  return per_date * dates;
}

/// The tree's price; `dates` matters for bermudan only (exercise at tree steps k * steps / dates,
/// k = 1 .. dates; `steps` must be a multiple of `dates`).
inline long double binomial_tree_price(const TreeOption& o, TreeExercise exercise,
                                       std::int64_t steps, std::uint32_t dates = 1) {
  const long double dt = o.maturity / steps;
  const long double up_log = o.volatility * std::sqrt(dt);
  const long double u = std::exp(up_log), d = 1 / u;
  const long double growth = std::exp((o.rate - o.dividend) * dt);
  const long double p_up = (growth - d) / (u - d);
  const long double discount = std::exp(-o.rate * dt);
  const std::int64_t per_date = steps / dates;
  // spot[k + steps] = S0 u^k, k = -steps .. steps.
  std::vector<long double> spot(static_cast<std::size_t>(2 * steps + 1));
  for (std::int64_t k = -steps; k <= steps; ++k) {
    spot[static_cast<std::size_t>(k + steps)] = o.spot * std::exp(up_log * k);
  }
  const auto intrinsic = [&](std::int64_t i, std::int64_t j) {  // step i, j up moves
    const long double s = spot[static_cast<std::size_t>(2 * j - i + steps)];
    const long double h = o.put ? o.strike - s : s - o.strike;
    return h > 0 ? h : 0.0L;
  };
  std::vector<long double> value(static_cast<std::size_t>(steps + 1));
  for (std::int64_t j = 0; j <= steps; ++j)
    value[static_cast<std::size_t>(j)] = intrinsic(steps, j);
  for (std::int64_t i = steps - 1; i >= 0; --i) {
    const bool may_exercise = exercise == TreeExercise::american ||
                              (exercise == TreeExercise::bermudan && i > 0 && i % per_date == 0);
    for (std::int64_t j = 0; j <= i; ++j) {
      const auto k = static_cast<std::size_t>(j);
      long double v = discount * (p_up * value[k + 1] + (1 - p_up) * value[k]);
      if (may_exercise) {
        const long double h = intrinsic(i, j);
        if (h > v) v = h;
      }
      value[k] = v;
    }
  }
  return value[0];
}

/// Black-Scholes in long double (the tree's European check).
inline long double black_scholes_long_double(const TreeOption& o) {
  const auto cdf = [](long double x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); };
  const long double root_t = o.volatility * std::sqrt(o.maturity);
  const long double d1 = (std::log(o.spot / o.strike) +
                          (o.rate - o.dividend + 0.5L * o.volatility * o.volatility) * o.maturity) /
                         root_t;
  const long double d2 = d1 - root_t;
  const long double s = o.spot * std::exp(-o.dividend * o.maturity);
  const long double k = o.strike * std::exp(-o.rate * o.maturity);
  return o.put ? k * cdf(-d2) - s * cdf(-d1) : s * cdf(d1) - k * cdf(d2);
}

}  // namespace gpukit::finance::testing
