// The CUDA walls solver's two pipelines (src/pde/cuda/poisson_walls.cu, poisson_walls_grid.cu) on
// their own, against manufactured solutions: u a random combination of the grid's own modes
// (products of each axis' sines, cosines or Fourier modes on its nodes), f = (L - lambda) u with
// the operator's eigenvalues written here from their definitions (spectral: -(w)^2 of the mode's
// wavenumber; fd2: the 3-point stencil's -(4 / h^2) sin^2(theta / 2)), so the answer is exact up to
// rounding. Every combination of boundaries in 2D and 3D, odd, even and prime sizes, both
// operators, lambda 0 and not, float and double; u poisoned before each solve, every element
// checked.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "pde/cuda/poisson_walls.hpp"

namespace gpukit::pde::cuda_detail {
namespace {

using walls::AxisKind;
using LD = long double;
constexpr LD kPi = std::numbers::pi_v<LD>;

// Mode j of an axis at node p: dirichlet sin(pi (j + 1) (p + 1) / (n + 1)); neumann
// cos(pi j (p + 1/2) / n); periodic the cosine (j <= n / 2) or the sine (above) of frequency
// min(j, n - j), so that the n modes span the axis.
LD mode(AxisKind kind, std::int64_t j, std::int64_t n, std::int64_t p) {
  switch (kind) {
    case AxisKind::dirichlet:
      return std::sin(kPi * (j + 1) * (p + 1) / (n + 1));
    case AxisKind::neumann:
      return std::cos(kPi * j * (p + LD(0.5)) / n);
    default: {
      const std::int64_t m = 2 * j <= n ? j : n - j;
      const LD angle = 2 * kPi * m * p / n;
      return 2 * j <= n ? std::cos(angle) : std::sin(angle);
    }
  }
}

// The eigenvalue of mode j: the mode's angle per step theta and step h, then -(theta / h)^2 or
// -(4 / h^2) sin^2(theta / 2).
LD eigenvalue(AxisKind kind, bool fd2, std::int64_t j, std::int64_t n, double length) {
  LD theta, h;
  if (kind == AxisKind::dirichlet) {
    theta = kPi * (j + 1) / (n + 1), h = LD(length) / (n + 1);
  } else if (kind == AxisKind::neumann) {
    theta = kPi * j / n, h = LD(length) / n;
  } else {
    theta = 2 * kPi * std::min(j, n - j) / n, h = LD(length) / n;
  }
  if (!fd2) return -(theta / h) * (theta / h);
  const LD s = std::sin(theta / 2);
  return -4 / (h * h) * s * s;
}

const char* kind_name(AxisKind k) {
  return k == AxisKind::dirichlet ? "D" : k == AxisKind::neumann ? "N" : "P";
}

template <class Real>
void expect_manufactured_solution(const WallsShape& shape, std::uint64_t seed) {
  std::ostringstream describe;
  describe << "shape";
  for (int d = 0; d < shape.rank; ++d) describe << ' ' << shape.n[d] << kind_name(shape.kind[d]);
  describe << (shape.fd2 ? " fd2" : " spectral") << " lambda " << shape.helmholtz
           << (sizeof(Real) == 4 ? " float" : " double");
  const std::string what = describe.str();
  ASSERT_TRUE(walls_supports(shape)) << what;

  std::int64_t size = 1;
  for (int d = 0; d < shape.rank; ++d) size *= shape.n[d];
  // Five random modes with random amplitudes, and on a singular problem (no dirichlet axis,
  // lambda 0) a constant in f that the solution must drop (its mean-zero gauge).
  std::mt19937_64 gen(seed);
  std::vector<LD> u(static_cast<std::size_t>(size), 0), f(static_cast<std::size_t>(size), 0);
  bool singular = shape.helmholtz == 0;
  for (int d = 0; d < shape.rank; ++d) singular = singular && shape.kind[d] != AxisKind::dirichlet;
  // The smallest nonzero |eigenvalue| of the grid: rounding noise in f reaches every mode, and
  // the lowest one amplifies it most.
  LD smallest = std::numeric_limits<LD>::infinity();
  for (std::int64_t idx = 0; idx < size; ++idx) {
    LD mu = -shape.helmholtz;
    std::int64_t rest = idx;
    for (int d = shape.rank - 1; d >= 0; --d) {
      mu += eigenvalue(shape.kind[d], shape.fd2, rest % shape.n[d], shape.n[d], shape.length[d]);
      rest /= shape.n[d];
    }
    if (mu != 0) smallest = std::min(smallest, std::fabs(mu));
  }
  for (int m = 0; m < 5; ++m) {
    std::int64_t j[3];
    LD mu = -shape.helmholtz;
    for (int d = 0; d < shape.rank; ++d) {
      j[d] = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(shape.n[d]));
      mu += eigenvalue(shape.kind[d], shape.fd2, j[d], shape.n[d], shape.length[d]);
    }
    if (mu == 0) continue;  // the constant mode of a singular problem
    const LD amplitude = LD(std::uniform_real_distribution<double>(0.5, 1.5)(gen));
    for (std::int64_t idx = 0; idx < size; ++idx) {
      LD value = amplitude;
      std::int64_t rest = idx;
      for (int d = shape.rank - 1; d >= 0; --d) {
        value *= mode(shape.kind[d], j[d], shape.n[d], rest % shape.n[d]);
        rest /= shape.n[d];
      }
      u[static_cast<std::size_t>(idx)] += value;
      f[static_cast<std::size_t>(idx)] += mu * value;
    }
  }
  if (singular) {
    for (LD& v : f) v += LD(0.75);
  }
  std::vector<Real> f_real(f.begin(), f.end());
  LD max_u = 0, max_f = 0;
  for (std::int64_t i = 0; i < size; ++i) {
    max_u = std::max(max_u, std::fabs(u[static_cast<std::size_t>(i)]));
    max_f = std::max(max_f, std::fabs(f[static_cast<std::size_t>(i)]));
  }

  cuda::DeviceBuffer<Real> f_device(static_cast<std::size_t>(size));
  cuda::DeviceBuffer<Real> u_device(static_cast<std::size_t>(size));
  cuda::copy_to_device(f_device.data(), f_real.data(), f_real.size() * sizeof(Real));
  const std::vector<Real> poison(static_cast<std::size_t>(size),
                                 std::numeric_limits<Real>::quiet_NaN());
  for (const bool in_place : {false, true}) {
    for (const WallsPipeline pipeline : {WallsPipeline::per_axis, WallsPipeline::whole_grid}) {
      cuda::copy_to_device(u_device.data(), in_place ? f_real.data() : poison.data(),
                           f_real.size() * sizeof(Real));
      const std::unique_ptr<DeviceSolver<Real>> solver = make_walls_solver<Real>(shape, pipeline);
      const cuda::Stream stream;
      solver->solve(in_place ? u_device.data() : f_device.data(), u_device.data(), stream.handle());
      stream.synchronize();
      std::vector<Real> got(static_cast<std::size_t>(size));
      cuda::copy_to_host(got.data(), u_device.data(), got.size() * sizeof(Real));
      // The transforms' rounding, a few eps a level of each axis' FFT, on the largest of u and of
      // f amplified by the smallest eigenvalue.
      const LD eps = std::numeric_limits<Real>::epsilon();
      const LD bound = 4 * std::log2(LD(2 * size + 2)) * eps *
                       (max_u + (singular ? max_f + 1 : max_f) / smallest);
      int reported = 0;
      for (std::int64_t i = 0; i < size; ++i) {
        const LD error =
            std::fabs(LD(got[static_cast<std::size_t>(i)]) - u[static_cast<std::size_t>(i)]);
        if (!(error <= bound) && reported++ < 5) {
          ADD_FAILURE() << what << (in_place ? " in place " : " ") << walls_pipeline_name(pipeline)
                        << ": u[" << i << "] = " << got[static_cast<std::size_t>(i)] << ", want "
                        << double(u[static_cast<std::size_t>(i)]) << " (bound " << double(bound)
                        << ")";
        }
      }
    }
  }
}

WallsShape shape_of(std::vector<std::int64_t> n, std::vector<AxisKind> kinds, bool fd2,
                    double helmholtz) {
  WallsShape s;
  s.rank = static_cast<int>(n.size());
  for (int d = 0; d < s.rank; ++d) {
    s.n[d] = n[static_cast<std::size_t>(d)];
    s.kind[d] = kinds[static_cast<std::size_t>(d)];
    s.length[d] = 1.0 + 0.5 * d;
  }
  s.fd2 = fd2, s.helmholtz = helmholtz;
  return s;
}

constexpr AxisKind kKinds[] = {AxisKind::periodic, AxisKind::dirichlet, AxisKind::neumann};

TEST(PoissonWallsGpu, EveryPairOfBoundariesIn2D) {
  GPUKIT_REQUIRE_GPU();
  std::uint64_t seed = 1;
  for (const AxisKind a : kKinds) {
    for (const AxisKind b : kKinds) {
      for (const std::vector<std::int64_t>& n :
           std::vector<std::vector<std::int64_t>>{{7, 31}, {100, 97}, {8, 1}, {1000, 6}}) {
        for (const bool fd2 : {false, true}) {
          for (const double lambda : {0.0, 3.5}) {
            expect_manufactured_solution<double>(shape_of(n, {a, b}, fd2, lambda), ++seed);
            expect_manufactured_solution<float>(shape_of(n, {a, b}, fd2, lambda), ++seed);
          }
        }
      }
    }
  }
}

TEST(PoissonWallsGpu, EveryTripleOfBoundariesIn3D) {
  GPUKIT_REQUIRE_GPU();
  std::uint64_t seed = 100;
  for (const AxisKind a : kKinds) {
    for (const AxisKind b : kKinds) {
      for (const AxisKind c : kKinds) {
        for (const bool fd2 : {false, true}) {
          const double lambda = fd2 ? 0.0 : 40.0;
          expect_manufactured_solution<double>(shape_of({7, 8, 13}, {a, b, c}, fd2, lambda),
                                               ++seed);
          expect_manufactured_solution<float>(shape_of({16, 5, 9}, {a, b, c}, fd2, lambda), ++seed);
        }
      }
    }
  }
}

}  // namespace
}  // namespace gpukit::pde::cuda_detail
