#pragma once
// Shared by the Poisson tests: manufactured solutions (products of sines and cosines, f = lap u
// in closed form), random right-hand sides, the agreement check, every combination of boundaries.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde::testing {

/// u = sum over two terms of prod_a trig_a(2 pi m_a x_a / L_a + phase_a), f = lap u. Wave
/// numbers are resolvable (|m_a| < n_a / 2), at least one non-zero per term, so mean(u) = 0.
struct Manufactured {
  std::vector<double> u, f;
};

inline Manufactured manufactured(const PoissonGrid& g, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int rank = g.rank();
  struct Term {
    int m[3];
    double phase[3], amplitude;
  };
  Term terms[2];
  for (Term& t : terms) {
    bool any = false;
    for (int a = 0; a < rank; ++a) {
      const int max_m = static_cast<int>((g.shape[a] - 1) / 2);
      t.m[a] = max_m > 0 ? static_cast<int>(rng() % static_cast<unsigned>(max_m + 1)) : 0;
      t.phase[a] = double(rng() % 1000) / 1000.0 * 2 * std::numbers::pi;
      any = any || t.m[a] != 0;
    }
    if (!any) {  // make one axis oscillate where the grid allows it
      for (int a = 0; a < rank; ++a)
        if (g.shape[a] >= 3) {
          t.m[a] = 1;
          break;
        }
    }
    t.amplitude = 0.5 + double(rng() % 1000) / 1000.0;
  }
  const std::int64_t n = g.size();
  Manufactured out{std::vector<double>(static_cast<std::size_t>(n)),
                   std::vector<double>(static_cast<std::size_t>(n))};
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i;
    std::int64_t idx[3] = {0, 0, 0};
    for (int a = rank - 1; a >= 0; --a) {
      idx[a] = rest % g.shape[a];
      rest /= g.shape[a];
    }
    double u = 0, f = 0;
    for (const Term& t : terms) {
      double prod = t.amplitude, k2 = 0;
      bool oscillates = false;
      for (int a = 0; a < rank; ++a) {
        const double k = 2 * std::numbers::pi * t.m[a] / g.length(a);
        const double x = double(idx[a]) * g.length(a) / double(g.shape[a]);
        prod *= t.m[a] == 0 ? 1.0 : std::sin(k * x + t.phase[a]);
        oscillates = oscillates || t.m[a] != 0;
        k2 += k * k;
      }
      if (!oscillates) continue;  // a constant term is not mean-zero: leave it out
      u += prod;
      f += -k2 * prod;
    }
    out.u[static_cast<std::size_t>(i)] = u;
    out.f[static_cast<std::size_t>(i)] = f;
  }
  return out;
}

/// Uniform random f in [-1, 1) with its mean removed (in double, before rounding to Real).
template <class Real>
std::vector<Real> random_rhs(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> f(static_cast<std::size_t>(n));
  double sum = 0;
  for (double& x : f) sum += (x = dist(rng));
  std::vector<Real> out(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) out[i] = static_cast<Real>(f[i] - sum / double(n));
  return out;
}

template <class Real, class Ref>
void expect_close(const PoissonGrid& g, const std::vector<Ref>& reference,
                  const std::vector<Real>& got, double bound, const std::string& what) {
  ASSERT_EQ(reference.size(), got.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(double(got[i]) - double(reference[i]));
    if (!(d <= bound)) {
      if (++bad <= 3)
        ADD_FAILURE() << what << " " << g.describe() << ": element " << i << " got " << got[i]
                      << " expected " << reference[i] << " (bound " << bound << ")";
    }
  }
  EXPECT_EQ(bad, 0u) << what << " " << g.describe();
}

/// `poisson --check` on a solution u of f solved with `options`: it passes, and it fails when
/// one element is off by 100 bounds, or when one is a NaN.
template <class Real>
void expect_check_passes_and_catches_errors(const PoissonGrid& g, const std::vector<Real>& f,
                                            const std::vector<Real>& u,
                                            const PoissonOptions& options) {
  const PoissonCheck ok = check_poisson_solution<Real>(g, f, u, options, 2);
  EXPECT_TRUE(ok.passed) << "max abs " << ok.metrics.max_abs << " bound " << ok.bound;
  std::vector<Real> wrong = u;
  wrong[wrong.size() / 2] += static_cast<Real>(100 * ok.bound);
  EXPECT_FALSE(check_poisson_solution<Real>(g, f, wrong, options, 2).passed);
  wrong = u;
  wrong.back() = std::numeric_limits<Real>::quiet_NaN();
  EXPECT_FALSE(check_poisson_solution<Real>(g, f, wrong, options, 2).passed);
}

inline constexpr Boundary kBoundaries[] = {Boundary::periodic, Boundary::dirichlet,
                                           Boundary::neumann};
inline constexpr Operator kOperators[] = {Operator::spectral, Operator::fd2};

/// Every combination of boundaries for `rank` axes (3^rank of them), axis 0 slowest.
inline std::vector<std::vector<Boundary>> every_combination(int rank) {
  std::vector<std::vector<Boundary>> all;
  int count = 1;
  for (int a = 0; a < rank; ++a) count *= 3;
  for (int c = 0; c < count; ++c) {
    std::vector<Boundary> combination(static_cast<std::size_t>(rank));
    for (int a = rank - 1, rest = c; a >= 0; --a, rest /= 3)
      combination[static_cast<std::size_t>(a)] = kBoundaries[rest % 3];
    all.push_back(combination);
  }
  return all;
}

template <class T>
double max_abs(const std::vector<T>& v) {
  double m = 0;
  for (const T x : v) m = std::max(m, double(std::fabs(x)));
  return m;
}

}  // namespace gpukit::pde::testing
