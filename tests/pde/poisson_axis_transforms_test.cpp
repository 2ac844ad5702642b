// The per-element pieces of the CUDA walls solver's axis transforms (src/pde/
// poisson_axis_transforms.hpp), run on the host around a naive DFT in long double in place of
// cuFFT, against the transforms' defining sums (FFTW's REDFT10, REDFT01 and RODFT00); and the
// eigenvalue tables every engine divides by (detail::laplacian_eigenvalues) against the
// operators applied to their modes.

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "pde/poisson_axis_transforms.hpp"

namespace gpukit::pde::walls {
namespace {

using LD = long double;
constexpr LD kPi = std::numbers::pi_v<LD>;

struct Cplx {
  double x = 0, y = 0;
};

// The R2C output of a real sequence: V[k] = sum_m v[m] exp(-2 pi i m k / L), k <= L / 2.
std::vector<Cplx> naive_r2c(const std::vector<double>& v) {
  const auto length = static_cast<std::int64_t>(v.size());
  std::vector<Cplx> out(static_cast<std::size_t>(length / 2 + 1));
  for (std::int64_t k = 0; k <= length / 2; ++k) {
    std::complex<LD> sum = 0;
    for (std::int64_t m = 0; m < length; ++m) {
      sum += LD(v[static_cast<std::size_t>(m)]) * std::polar(LD(1), -2 * kPi * m * k / length);
    }
    out[static_cast<std::size_t>(k)] = {double(sum.real()), double(sum.imag())};
  }
  return out;
}

// The C2R output (unnormalised) of the half spectrum of a Hermitian sequence of length L.
std::vector<double> naive_c2r(const std::vector<Cplx>& half, std::int64_t length) {
  std::vector<double> out(static_cast<std::size_t>(length));
  for (std::int64_t m = 0; m < length; ++m) {
    LD sum = 0;
    for (std::int64_t k = 0; k < length; ++k) {
      const bool low = 2 * k <= length;
      const Cplx c = half[static_cast<std::size_t>(low ? k : length - k)];
      const std::complex<LD> v(c.x, low ? c.y : -c.y);
      sum += (v * std::polar(LD(1), 2 * kPi * m * k / length)).real();
    }
    out[static_cast<std::size_t>(m)] = double(sum);
  }
  return out;
}

std::vector<double> random_line(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (double& v : x) v = u(gen);
  return x;
}

// The forward transform of one axis as the kernels compose it: gather (neumann, dirichlet), R2C,
// coefficients.
std::vector<double> forward(AxisKind kind, const std::vector<double>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  const auto sample = [&](std::int64_t j) { return x[static_cast<std::size_t>(j)]; };
  std::vector<double> line = x;
  if (kind != AxisKind::periodic) {
    line.resize(static_cast<std::size_t>(fft_length(kind, n)));
    for (std::int64_t t = 0; t < fft_length(kind, n); ++t) {
      line[static_cast<std::size_t>(t)] = axis_gathered<double>(kind, t, n, sample);
    }
  }
  const std::vector<Cplx> spectrum = naive_r2c(line);
  std::vector<double> out(static_cast<std::size_t>(n));
  const auto at = [&](std::int64_t k) { return spectrum[static_cast<std::size_t>(k)]; };
  for (std::int64_t j = 0; j < n; ++j) {
    out[static_cast<std::size_t>(j)] = axis_coefficient<double>(kind, j, n, at);
  }
  return out;
}

// The inverse of a periodic or neumann axis as the kernels compose it: spectrum, C2R, scatter.
std::vector<double> inverse(AxisKind kind, const std::vector<double>& coefficients) {
  const auto n = static_cast<std::int64_t>(coefficients.size());
  const auto x = [&](std::int64_t j) { return coefficients[static_cast<std::size_t>(j)]; };
  std::vector<Cplx> half(static_cast<std::size_t>(n / 2 + 1));
  for (std::int64_t k = 0; k <= n / 2; ++k) {
    half[static_cast<std::size_t>(k)] = axis_spectrum<Cplx, double>(kind, k, n, x);
  }
  const std::vector<double> v = naive_c2r(half, n);
  if (kind == AxisKind::periodic) return v;
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) {
    out[static_cast<std::size_t>(p)] = v[static_cast<std::size_t>(neumann_position(p, n))];
  }
  return out;
}

constexpr std::int64_t kSizes[] = {1, 2, 3, 4, 5, 7, 8, 13, 16, 31};

double tolerance(std::int64_t n) { return 1e-13 * double(n + 1); }

TEST(PoissonAxisTransforms, NeumannForwardIsRedft10) {
  for (const std::int64_t n : kSizes) {
    const std::vector<double> x = random_line(n, 10 + n);
    const std::vector<double> got = forward(AxisKind::neumann, x);
    for (std::int64_t k = 0; k < n; ++k) {
      LD want = 0;
      for (std::int64_t m = 0; m < n; ++m) {
        want += 2 * LD(x[static_cast<std::size_t>(m)]) * std::cos(kPi * (2 * m + 1) * k / (2 * n));
      }
      EXPECT_NEAR(got[static_cast<std::size_t>(k)], double(want), tolerance(n))
          << "n " << n << " k " << k;
    }
  }
}

TEST(PoissonAxisTransforms, NeumannInverseIsRedft01) {
  for (const std::int64_t n : kSizes) {
    const std::vector<double> coefficients = random_line(n, 20 + n);
    const std::vector<double> got = inverse(AxisKind::neumann, coefficients);
    for (std::int64_t p = 0; p < n; ++p) {
      LD want = coefficients[0];
      for (std::int64_t k = 1; k < n; ++k) {
        want += 2 * LD(coefficients[static_cast<std::size_t>(k)]) *
                std::cos(kPi * k * (2 * p + 1) / (2 * n));
      }
      EXPECT_NEAR(got[static_cast<std::size_t>(p)], double(want), tolerance(n))
          << "n " << n << " p " << p;
    }
  }
}

TEST(PoissonAxisTransforms, DirichletIsRodft00) {
  for (const std::int64_t n : kSizes) {
    const std::vector<double> x = random_line(n, 30 + n);
    const std::vector<double> got = forward(AxisKind::dirichlet, x);
    for (std::int64_t k = 0; k < n; ++k) {
      LD want = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        want +=
            2 * LD(x[static_cast<std::size_t>(j)]) * std::sin(kPi * (j + 1) * (k + 1) / (n + 1));
      }
      EXPECT_NEAR(got[static_cast<std::size_t>(k)], double(want), tolerance(n))
          << "n " << n << " k " << k;
    }
  }
}

// Forward then inverse is the round trip's factor times x, on every kind (dirichlet: its forward
// twice).
TEST(PoissonAxisTransforms, RoundTripsScaleByTheirFactor) {
  for (const AxisKind kind : {AxisKind::periodic, AxisKind::neumann, AxisKind::dirichlet}) {
    for (const std::int64_t n : kSizes) {
      const std::vector<double> x = random_line(n, 40 + n);
      const std::vector<double> coefficients = forward(kind, x);
      const std::vector<double> back =
          kind == AxisKind::dirichlet ? forward(kind, coefficients) : inverse(kind, coefficients);
      const double factor = round_trip_factor(kind, n);
      for (std::int64_t j = 0; j < n; ++j) {
        EXPECT_NEAR(back[static_cast<std::size_t>(j)], factor * x[static_cast<std::size_t>(j)],
                    factor * tolerance(n))
            << "kind " << static_cast<int>(kind) << " n " << n << " j " << j;
      }
    }
  }
}

// The periodic coefficients pack each frequency's real and imaginary parts: coefficient j holds
// a mode of frequency min(j, n - j), the one the eigenvalue tables give it.
TEST(PoissonAxisTransforms, PeriodicCoefficientsAreTheModesOfTheirFrequency) {
  for (const std::int64_t n : kSizes) {
    for (std::int64_t m = 0; 2 * m <= n; ++m) {
      for (const bool sine : {false, true}) {
        if (sine && (m == 0 || 2 * m == n)) continue;
        std::vector<double> x(static_cast<std::size_t>(n));
        for (std::int64_t p = 0; p < n; ++p) {
          const LD angle = 2 * kPi * m * p / n;
          x[static_cast<std::size_t>(p)] = double(sine ? std::sin(angle) : std::cos(angle));
        }
        const std::vector<double> c = forward(AxisKind::periodic, x);
        for (std::int64_t j = 0; j < n; ++j) {
          const std::int64_t frequency = std::min(j, n - j);
          if (frequency != m) {
            EXPECT_NEAR(c[static_cast<std::size_t>(j)], 0, tolerance(n))
                << "n " << n << " m " << m << " j " << j;
          }
        }
      }
    }
  }
}

// Each eigenvalue against its operator applied to its mode at every node: spectral -(w)^2 for
// the continuous mode's second derivative; fd2 the 3-point stencil with the boundary's ghosts
// (dirichlet 0 beyond both ends, neumann the mirrored node, periodic the wrapped one).
TEST(PoissonAxisTransforms, EigenvaluesAreTheOperatorsOnTheirModes) {
  const double length = 2.5;
  for (const AxisKind kind : {AxisKind::periodic, AxisKind::neumann, AxisKind::dirichlet}) {
    for (const std::int64_t n : {1, 2, 5, 8, 31}) {
      const LD h = kind == AxisKind::dirichlet ? LD(length) / (n + 1) : LD(length) / n;
      for (std::int64_t j = 0; j < n; ++j) {
        // The mode's wavenumber w and its node positions.
        LD w;
        if (kind == AxisKind::periodic) {
          w = 2 * kPi * std::min(j, n - j) / length;
        } else if (kind == AxisKind::dirichlet) {
          w = kPi * (j + 1) / length;
        } else {
          w = kPi * j / length;
        }
        const auto node = [&](std::int64_t p) {
          return kind == AxisKind::dirichlet ? (p + 1) * h
                 : kind == AxisKind::neumann ? (p + LD(0.5)) * h
                                             : p * h;
        };
        const auto mode = [&](std::int64_t p) -> LD {
          if (kind == AxisKind::dirichlet) {
            if (p < 0 || p >= n) return 0;
            return std::sin(w * node(p));
          }
          if (kind == AxisKind::neumann) p = p < 0 ? -1 - p : p >= n ? 2 * n - 1 - p : p;
          if (kind == AxisKind::periodic) p = (p + n) % n;
          return std::cos(w * node(p));
        };
        const auto eigenvalue = [&](Operator op) {
          return -detail::laplacian_eigenvalues(n, n, length, kind,
                                                op)[static_cast<std::size_t>(j)];
        };
        const double spectral = eigenvalue(Operator::spectral);
        EXPECT_NEAR(spectral, double(-w * w), 1e-12 * double(w * w)) << "n " << n << " j " << j;
        const double fd2 = eigenvalue(Operator::fd2);
        for (std::int64_t p = 0; p < n; ++p) {
          const LD stencil = (mode(p - 1) - 2 * mode(p) + mode(p + 1)) / (h * h);
          EXPECT_NEAR(double(stencil), fd2 * double(mode(p)), 1e-9 * double(4 / (h * h)))
              << "kind " << static_cast<int>(kind) << " n " << n << " j " << j << " p " << p;
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpukit::pde::walls
