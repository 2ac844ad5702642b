// Closed-form continuously monitored barrier options (Reiner-Rubinstein; Haug 2nd ed. 4.17.1),
// the reference the Monte Carlo tests compare with, and the Broadie-Glasserman-Kou shift.

#include <algorithm>
#include <cmath>

#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance {

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

bool is_down(BarrierType type) {
  return type == BarrierType::down_out || type == BarrierType::down_in;
}
bool is_in(BarrierType type) { return type == BarrierType::down_in || type == BarrierType::up_in; }

}  // namespace

double barrier_price_analytic(BarrierType type, bool is_put, double spot, double strike,
                              double barrier, double maturity, double rate, double dividend,
                              double volatility) {
  const double s = spot, x = strike, h = barrier, t = maturity, r = rate, q = dividend;
  const double b = r - q;  // cost of carry
  const double v = volatility * std::sqrt(t);
  const double phi = is_put ? -1.0 : 1.0;
  const double df = std::exp(-r * t), carry_df = std::exp((b - r) * t);
  if (type == BarrierType::none) {
    if (v == 0) return std::max(phi * (s * carry_df - x * df), 0.0);
    const double d1 = (std::log(s / x) + (b + 0.5 * volatility * volatility) * t) / v;
    return phi * s * carry_df * normal_cdf(phi * d1) - phi * x * df * normal_cdf(phi * (d1 - v));
  }
  const bool down = is_down(type);
  const bool breached = down ? s <= h : s >= h;
  if (breached) {
    return is_in(type)
               ? barrier_price_analytic(BarrierType::none, is_put, s, x, h, t, r, q, volatility)
               : 0.0;
  }
  if (v == 0) {
    // The deterministic path s e^{b u} is monotone: it touches the barrier iff its end does.
    const double end = s * std::exp(b * t);
    const bool touched = down ? end <= h : end >= h;
    const double vanilla = std::max(phi * (end - x), 0.0) * df;
    return touched == is_in(type) ? vanilla : 0.0;
  }
  const double sigma2 = volatility * volatility;
  const double mu = (b - 0.5 * sigma2) / sigma2;
  const double eta = down ? 1.0 : -1.0;
  const double x1 = std::log(s / x) / v + (1 + mu) * v;
  const double x2 = std::log(s / h) / v + (1 + mu) * v;
  const double y1 = std::log(h * h / (s * x)) / v + (1 + mu) * v;
  const double y2 = std::log(h / s) / v + (1 + mu) * v;
  const double hs_2mu1 = std::pow(h / s, 2 * (mu + 1)), hs_2mu = std::pow(h / s, 2 * mu);
  const double a =
      phi * s * carry_df * normal_cdf(phi * x1) - phi * x * df * normal_cdf(phi * x1 - phi * v);
  const double bb =
      phi * s * carry_df * normal_cdf(phi * x2) - phi * x * df * normal_cdf(phi * x2 - phi * v);
  const double c = phi * s * carry_df * hs_2mu1 * normal_cdf(eta * y1) -
                   phi * x * df * hs_2mu * normal_cdf(eta * y1 - eta * v);
  const double d = phi * s * carry_df * hs_2mu1 * normal_cdf(eta * y2) -
                   phi * x * df * hs_2mu * normal_cdf(eta * y2 - eta * v);
  const bool above = x > h;
  double price = 0;
  if (!is_put) {
    switch (type) {
      case BarrierType::down_in:
        price = above ? c : a - bb + d;
        break;
      case BarrierType::up_in:
        price = above ? a : bb - c + d;
        break;
      case BarrierType::down_out:
        price = above ? a - c : bb - d;
        break;
      case BarrierType::up_out:
        price = above ? 0.0 : a - bb + c - d;
        break;
      case BarrierType::none:
        break;
    }
  } else {
    switch (type) {
      case BarrierType::down_in:
        price = above ? bb - c + d : a;
        break;
      case BarrierType::up_in:
        price = above ? a - bb + d : c;
        break;
      case BarrierType::down_out:
        price = above ? a - bb + c - d : 0.0;
        break;
      case BarrierType::up_out:
        price = above ? bb - d : a - c;
        break;
      case BarrierType::none:
        break;
    }
  }
  return std::max(price, 0.0);
}

double discrete_barrier_shift(BarrierType type, double barrier, double volatility, double maturity,
                              std::uint32_t steps) {
  constexpr double kBeta = 0.5825971579390106;  // -zeta(1/2) / sqrt(2 pi)
  const double shift = kBeta * volatility * std::sqrt(maturity / steps);
  return is_down(type) ? barrier * std::exp(-shift) : barrier * std::exp(shift);
}

}  // namespace gpukit::finance
