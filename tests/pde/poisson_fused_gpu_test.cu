// The fused spectral Poisson solver (src/pde/cuda/poisson_fused.cu):
//  - its column pass (poisson_fused_columns.cuh) run on the CPU, the very stage code with one
//    "thread", against a direct DFT along axis 0 (runs without a GPU);
//  - the solver on the GPU against a direct DFT solve in long double (small grids, every mode)
//    and against manufactured solutions (sines and cosines with known u, incl. Nyquist modes);
//  - fused_supports' refusals.
// Every output is poisoned with NaN before the run and every element is checked.

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "pde/cuda/fft_radix16_block.cuh"
#include "pde/cuda/fft_radix16_cluster.cuh"
#include "pde/cuda/poisson_device_solver.hpp"
#include "pde/cuda/poisson_fused_columns.cuh"

namespace {

using gpukit::pde::cuda_detail::fused_supports;
using gpukit::pde::cuda_detail::GridShape;
using gpukit::pde::cuda_detail::make_fused_solver;
namespace fft_radix16 = gpukit::pde::cuda_detail::fft_radix16;
namespace fused = gpukit::pde::cuda_detail::fused;
using LongComplex = std::complex<long double>;

GridShape grid(std::vector<std::int64_t> n, std::vector<double> length = {}) {
  GridShape g;
  g.rank = static_cast<int>(n.size());
  for (int a = 0; a < g.rank; ++a) {
    g.n[a] = n[a];
    g.length[a] = length.empty() ? 1.0 : length[a];
  }
  return g;
}

std::string describe(const GridShape& g) {
  std::string s;
  for (int a = 0; a < g.rank; ++a) {
    if (a > 0) s += 'x';
    s += std::to_string(g.n[a]);
  }
  return s;
}

/// Signed frequency of index j on an axis of n points (Nyquist j = n/2 positive), and its
/// wave number 2 pi m / length.
long double wave_number(std::int64_t j, std::int64_t n, double length) {
  const std::int64_t m = j <= n / 2 ? j : j - n;
  return 2.0L * std::numbers::pi_v<long double> * m / length;
}

/// In-place DFT of every line along `axis` of a C-order complex array (sign -1 forward).
void dft_axis(std::vector<LongComplex>& x, const GridShape& g, int axis, int sign) {
  std::int64_t stride = 1;
  for (int a = g.rank - 1; a > axis; --a) stride *= g.n[a];
  const std::int64_t n = g.n[axis];
  std::vector<LongComplex> roots(n), line(n);
  for (std::int64_t t = 0; t < n; ++t)
    roots[t] = std::polar(1.0L, sign * 2.0L * std::numbers::pi_v<long double> * t / n);
  for (std::int64_t base = 0; base < g.size(); ++base) {
    if ((base / stride) % n != 0) continue;  // base: index 0 along the axis
    for (std::int64_t k = 0; k < n; ++k) {
      LongComplex sum = 0;
      for (std::int64_t j = 0; j < n; ++j) sum += x[base + j * stride] * roots[(j * k) % n];
      line[k] = sum;
    }
    for (std::int64_t k = 0; k < n; ++k) x[base + k * stride] = line[k];
  }
}

/// The spectral solution by direct DFTs in long double: the reference, independent of FFTs.
std::vector<long double> direct_solve(const std::vector<double>& f, const GridShape& g) {
  std::vector<LongComplex> x(f.begin(), f.end());
  for (int a = 0; a < g.rank; ++a) dft_axis(x, g, a, -1);
  for (std::int64_t e = 0; e < g.size(); ++e) {
    long double k2 = 0;
    std::int64_t rest = e;
    for (int a = g.rank - 1; a >= 0; --a) {
      const long double k = wave_number(rest % g.n[a], g.n[a], g.length[a]);
      k2 += k * k;
      rest /= g.n[a];
    }
    x[e] = k2 == 0 ? LongComplex(0) : x[e] / (-k2 * g.size());
  }
  for (int a = 0; a < g.rank; ++a) dft_axis(x, g, a, +1);
  std::vector<long double> u(g.size());
  for (std::int64_t e = 0; e < g.size(); ++e) u[e] = x[e].real();
  return u;
}

/// A manufactured problem: f = c0 + sum_modes (a cos(k.x) + b sin(k.x)) and its exact mean-zero
/// u = -sum_modes (a cos + b sin) / |k|^2, on the grid points x_a = length_a i_a / n_a.
struct Manufactured {
  std::vector<double> f;
  std::vector<long double> u;
};

Manufactured manufactured(const GridShape& g, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coefficient(-1, 1);
  std::vector<std::vector<std::int64_t>> modes;
  for (int i = 0; i < 6; ++i) {  // random modes, signed frequencies up to Nyquist
    std::vector<std::int64_t> m(g.rank);
    for (int a = 0; a < g.rank; ++a)
      m[a] = std::uniform_int_distribution<std::int64_t>(-(g.n[a] - 1) / 2, g.n[a] / 2)(rng);
    modes.push_back(m);
  }
  for (int a = 0; a < g.rank; ++a) {  // Nyquist along each axis, and the lowest mode
    std::vector<std::int64_t> nyquist(g.rank, 0), lowest(g.rank, 0);
    nyquist[a] = g.n[a] / 2;
    lowest[a] = 1;
    modes.push_back(nyquist);
    modes.push_back(lowest);
  }
  std::vector<std::int64_t> corner(g.rank);
  for (int a = 0; a < g.rank; ++a) corner[a] = g.n[a] / 2;
  modes.push_back(corner);

  Manufactured p;
  p.f.assign(g.size(), 0.75);  // a non-zero mean, which the solver must remove
  p.u.assign(g.size(), 0);
  for (const auto& m : modes) {
    long double k2 = 0;
    bool zero = true;
    for (int a = 0; a < g.rank; ++a) {
      const long double k = 2.0L * std::numbers::pi_v<long double> * m[a] / g.length[a];
      k2 += k * k;
      zero = zero && m[a] == 0;
    }
    if (zero) continue;
    const double a_cos = coefficient(rng), b_sin = coefficient(rng);
    for (std::int64_t e = 0; e < g.size(); ++e) {
      long double phase = 0;  // 2 pi sum_a m_a i_a / n_a, reduced exactly per axis
      std::int64_t rest = e;
      for (int a = g.rank - 1; a >= 0; --a) {
        const std::int64_t i = rest % g.n[a];
        rest /= g.n[a];
        phase += 2.0L * std::numbers::pi_v<long double> *
                 static_cast<long double>((((m[a] * i) % g.n[a]) + g.n[a]) % g.n[a]) / g.n[a];
      }
      const long double value = a_cos * std::cos(phase) + b_sin * std::sin(phase);
      p.f[e] += static_cast<double>(value);
      p.u[e] -= value / k2;
    }
  }
  return p;
}

/// Tolerance of the single-pass FFT solve, per element: the FFT's relative rounding error is
/// about eps log2(N) (Higham, Accuracy and Stability of Numerical Algorithms, sec. 24.1); the
/// forward transform's error reaches u divided by at most the smallest |k|^2, the inverse's
/// is relative to u; max norms bound the rms norms those bounds are in; 4 covers the bound's
/// constant (the twiddles' own rounding, a few operations per butterfly).
template <class Real>
double tolerance(const GridShape& g, const std::vector<double>& f,
                 const std::vector<long double>& u) {
  double mean = 0, f_max = 0, u_max = 0;
  for (double v : f) mean += v;
  mean /= static_cast<double>(f.size());
  for (double v : f) f_max = std::max(f_max, std::abs(v - mean));
  for (long double v : u) u_max = std::max(u_max, static_cast<double>(std::abs(v)));
  double k_min = std::numeric_limits<double>::infinity();
  for (int a = 0; a < g.rank; ++a) k_min = std::min(k_min, 2 * std::numbers::pi / g.length[a]);
  const double eps = std::numeric_limits<Real>::epsilon();
  return 4 * eps * std::log2(static_cast<double>(g.size())) * (f_max / (k_min * k_min) + u_max);
}

template <class Real>
void expect_close(const std::vector<Real>& got, const std::vector<long double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  std::int64_t bad = 0;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double error = std::abs(static_cast<double>(got[e]) - static_cast<double>(want[e]));
    if (!(error <= tol) && bad++ < 5)  // NaN fails too
      ADD_FAILURE() << what << ": element " << e << " is " << got[e] << ", want "
                    << static_cast<double>(want[e]) << " (tolerance " << tol << ")";
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of " << got.size() << " elements off";
}

// ---- the column pass on the CPU ---------------------------------------------------------------

/// One tile of `valid` <= TC columns (fewer: the grid's last tile) in the middle of a wider
/// array, whose other columns must stay as they are; its rows spread over P "blocks" (the
/// phases of the P blocks run one after the other, as the cluster barriers order them).
template <class Real, int TC, int P = 1>
void check_column_pass_on_cpu(int log2_n, int valid, std::uint64_t seed) {
  using C = typename fft_radix16::ComplexOf<Real>::type;
  const int n = 1 << log2_n;
  const int pitch = 3 * TC;  // the tile is the middle TC columns of a wider array
  const int first_column = TC;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1, 1);
  std::vector<C> data(static_cast<std::size_t>(n) * pitch);
  for (auto& z : data) z = {static_cast<Real>(value(rng)), static_cast<Real>(value(rng))};
  const std::vector<C> input = data;

  // Scaling of a 2D grid n x (2 (pitch - 1)): the tile's columns are axis-1 frequencies.
  fused::ScalingParams<Real> scaling{};
  scaling.first_column = first_column;
  scaling.pitch_last = pitch;
  scaling.n_mid = 1;
  const double length0 = 1.5, length1 = 0.7;
  scaling.k_unit[0] = static_cast<Real>(2 * std::numbers::pi / length0);
  scaling.k_unit[1] = 0;
  scaling.k_unit[2] = static_cast<Real>(2 * std::numbers::pi / length1);
  const double size = double(n) * 2 * (pitch - 1);
  scaling.minus_size = static_cast<Real>(-size);

  const fft_radix16::TwiddleLayout twiddle_layout = fft_radix16::TwiddleLayout::of(log2_n);
  const int log2_fine = twiddle_layout.log2_fine;
  std::vector<C> table;
  for (int t = 0; t < (1 << log2_fine); ++t) {
    const long double angle = -2.0L * std::numbers::pi_v<long double> * t / n;
    table.push_back({static_cast<Real>(std::cos(angle)), static_cast<Real>(std::sin(angle))});
  }
  for (int s = 0; s < (n >> log2_fine); ++s) {
    const long double angle = -2.0L * std::numbers::pi_v<long double> * (s << log2_fine) / n;
    table.push_back({static_cast<Real>(std::cos(angle)), static_cast<Real>(std::sin(angle))});
  }
  std::vector<C> slots(twiddle_layout.slots(), C{NAN, NAN});  // skew gaps stay NaN
  fft_radix16::place_twiddles(table.data(), slots.data(), twiddle_layout, 0, 1);
  const int log2_parts = std::countr_zero(unsigned{P});
  std::vector<std::vector<C>> parts(
      P, std::vector<C>(fft_radix16::SharedTile<C, TC>::elements(
                            n >> log2_parts, fft_radix16::transform_shape(log2_n).log2_pad()),
                        C{NAN, NAN}));
  fft_radix16::SplitTile<C, TC, P> tile{};
  for (int h = 0; h < P; ++h) tile.part[h] = parts[h].data();
  tile.log2_rows_per_part = log2_n - log2_parts;
  const fft_radix16::TransformShape shape = fft_radix16::transform_shape(log2_n);
  tile.log2_pad = shape.log2_pad();
  const auto solver = [&](int part) {
    return fused::ColumnTileSolver<TC, P, Real>{
        fft_radix16::GlobalTile<C, TC>{data.data() + first_column, pitch, valid},
        tile,
        parts[part].data(),
        shape,
        fft_radix16::Twiddles<C>{slots.data(), slots.data() + twiddle_layout.fine_slots(),
                                 log2_fine},
        scaling,
        part,
        0,
        1};
  };
  if (shape.stages == 1) {
    ASSERT_EQ(P, 1);
    solver(0).pivot_only();
  } else {
    for (int h = 0; h < P; ++h) solver(h).first_stage();
    for (int h = 0; h < P; ++h) solver(h).local_stages(fft_radix16::NoBarrier{});
    for (int h = 0; h < P; ++h) solver(h).last_stage();
  }

  double worst = 0, scale = 0;
  for (int c = 0; c < pitch; ++c) {
    std::vector<LongComplex> column(n);
    for (int r = 0; r < n; ++r) column[r] = {input[r * pitch + c].x, input[r * pitch + c].y};
    const bool in_tile = c >= first_column && c < first_column + valid;
    if (in_tile) {  // forward DFT, scaling, inverse DFT, directly
      std::vector<LongComplex> spectrum(n), back(n), roots(n);
      for (int t = 0; t < n; ++t)
        roots[t] = std::polar(1.0L, -2 * std::numbers::pi_v<long double> * t / n);
      for (int k = 0; k < n; ++k)
        for (int j = 0; j < n; ++j) spectrum[k] += column[j] * roots[(std::int64_t{j} * k) % n];
      const long double k1 = 2 * std::numbers::pi_v<long double> * c / length1;
      for (int k = 0; k < n; ++k) {
        const long double k0 = wave_number(k, n, length0);
        const long double k2 = k0 * k0 + k1 * k1;
        spectrum[k] = k2 == 0 ? LongComplex(0) : spectrum[k] / (-k2 * size);
      }
      for (int j = 0; j < n; ++j)
        for (int k = 0; k < n; ++k)
          back[j] += spectrum[k] * std::conj(roots[(std::int64_t{j} * k) % n]);
      column = back;
    }
    for (int r = 0; r < n; ++r) {
      const C got = data[r * pitch + c];
      scale = std::max(scale, static_cast<double>(std::abs(column[r])));
      const double error = std::abs(LongComplex(got.x, got.y) - column[r]);
      worst = std::isnan(error) ? INFINITY : std::max(worst, error);
      if (!in_tile) ASSERT_EQ(error, 0) << "column " << c << " outside the tile was changed";
    }
  }
  // The same FFT bound as the solver's (tolerance()), on a column: relative to the largest value.
  const double tol = 4 * std::numeric_limits<Real>::epsilon() * std::max(1, log2_n) * scale;
  EXPECT_LE(worst, tol) << "n0 = " << n << ", TC = " << TC << ", P = " << P << ", " << valid
                        << " columns, seed " << seed;
}

TEST(PoissonFusedColumnPassOnCpu, MatchesDirectDftEveryStageLayout) {
  // Every pivot radix (2 alone; 4, 8, 16, 32 after 0 to 2 stages of 16), full and partial tiles.
  for (int log2_n = 1; log2_n <= 10; ++log2_n) {
    check_column_pass_on_cpu<float, 4>(log2_n, 4, 100 + log2_n);
    check_column_pass_on_cpu<float, 4>(log2_n, 3, 200 + log2_n);
    check_column_pass_on_cpu<float, 2>(log2_n, 2, 300 + log2_n);
    check_column_pass_on_cpu<double, 2>(log2_n, 2, 400 + log2_n);
    check_column_pass_on_cpu<double, 2>(log2_n, 1, 500 + log2_n);
    check_column_pass_on_cpu<double, 1>(log2_n, 1, 600 + log2_n);
  }
}

TEST(PoissonFusedColumnPassOnCpu, MatchesDirectDftOverTwoBlocks) {
  // A tile's rows over a cluster of two blocks (n0 >= 64): the first and last stages write
  // and read the other block's rows; pivots of 4, 8, 16 and 32.
  for (int log2_n = 6; log2_n <= 10; ++log2_n) {
    check_column_pass_on_cpu<float, 8, 2>(log2_n, 8, 700 + log2_n);
    check_column_pass_on_cpu<float, 4, 2>(log2_n, 3, 800 + log2_n);
    check_column_pass_on_cpu<float, 2, 2>(log2_n, 2, 900 + log2_n);
    check_column_pass_on_cpu<double, 2, 2>(log2_n, 1, 1000 + log2_n);
    check_column_pass_on_cpu<double, 4, 2>(log2_n, 4, 1100 + log2_n);
  }
}

TEST(PoissonFusedColumnPassOnCpu, MatchesDirectDftOverFourBlocks) {
  // Over a cluster of four blocks: the first and last stages' 16 places lie four in each.
  for (int log2_n = 6; log2_n <= 10; ++log2_n) {
    check_column_pass_on_cpu<float, 4, 4>(log2_n, 4, 1200 + log2_n);
    check_column_pass_on_cpu<float, 4, 4>(log2_n, 1, 1300 + log2_n);
    check_column_pass_on_cpu<double, 2, 4>(log2_n, 2, 1400 + log2_n);
  }
}

TEST(PoissonFusedColumnPassOnCpu, MatchesDirectDftOverEightBlocks) {
  // Over a cluster of eight blocks (float at n0 = 8192): two of the first and last stages' 16
  // places in each; pivots of 4 (n0 = 64: 8 rows per block), 8, 16, 32.
  for (int log2_n = 6; log2_n <= 10; ++log2_n) {
    check_column_pass_on_cpu<float, 4, 8>(log2_n, 4, 1500 + log2_n);
    check_column_pass_on_cpu<float, 4, 8>(log2_n, 2, 1600 + log2_n);
  }
  // The solver's own shape (n0 = 8192: stages of 16 and 16, a pivot of 32), one column for
  // time (the direct DFT is O(n0^2)).
  check_column_pass_on_cpu<float, 4, 8>(13, 1, 1713);
}

// ---- what the solver takes ------------------------------------------------------------------

TEST(PoissonFusedSupports, RefusesWhatItCannotDo) {
  EXPECT_TRUE(fused_supports(grid({2, 2})));
  EXPECT_TRUE(fused_supports(grid({16, 7})));  // odd contiguous axis: cuFFT's rows handle it
  EXPECT_TRUE(fused_supports(grid({8192, 8192})));
  EXPECT_TRUE(fused_supports(grid({512, 3, 5})));
  EXPECT_TRUE(fused_supports(grid({256, 256}, {2.0, 0.5})));
  EXPECT_FALSE(fused_supports(grid({16384, 16})));  // a column beyond shared memory
  EXPECT_FALSE(fused_supports(grid({12, 16})));     // axis 0 not a power of two
  EXPECT_FALSE(fused_supports(grid({7, 16})));
  EXPECT_FALSE(fused_supports(grid({1, 16})));
  EXPECT_FALSE(fused_supports(grid({16, 1})));  // flat axes: another variant drops them
  EXPECT_FALSE(fused_supports(grid({16, 16, 1})));
  EXPECT_FALSE(fused_supports(grid({16})));  // rank 1
  GridShape rank4 = grid({16, 16, 16});
  rank4.rank = 4;
  EXPECT_FALSE(fused_supports(rank4));
  EXPECT_FALSE(fused_supports(grid({16, 16}, {1.0, 0.0})));
  EXPECT_FALSE(fused_supports(grid({16, 16}, {-1.0, 1.0})));
  EXPECT_FALSE(fused_supports(grid({16, 16}, {NAN, 1.0})));
  EXPECT_FALSE(fused_supports(grid({8192, 8192, 64})));  // 2^32 points: beyond 32-bit cuFFT
  EXPECT_FALSE(fused_supports(grid({8192, std::int64_t{1} << 40, std::int64_t{1} << 40})));
}

// ---- the solver on the GPU ------------------------------------------------------------------

/// Solves each right-hand side with one solver, poisoning u (NaN bytes) before every solve.
template <class Real>
std::vector<std::vector<Real>> solve_on_gpu(const GridShape& g,
                                            const std::vector<std::vector<double>>& rhs,
                                            bool in_place) {
  namespace cuda = gpukit::cuda;
  auto solver = make_fused_solver<Real>(g);
  const std::size_t bytes = g.size() * sizeof(Real);
  cuda::DeviceBuffer<Real> d_f(g.size()), d_u(g.size());
  std::vector<std::vector<Real>> results;
  for (const auto& f : rhs) {
    std::vector<Real> h_f(f.begin(), f.end());
    d_f.copy_from_host(h_f);
    if (!in_place) cuda::fill_bytes_async(d_u.data(), 0xFF, bytes, nullptr);
    Real* u = in_place ? d_f.data() : d_u.data();
    solver->solve(d_f.data(), u, nullptr);
    cuda::synchronize_device();
    std::vector<Real> h_u(g.size());
    cuda::copy_to_host(h_u.data(), u, bytes);
    if (!in_place) {  // f itself must be left as it was
      std::vector<Real> f_after(g.size());
      d_f.copy_to_host(f_after);
      EXPECT_EQ(f_after, h_f) << describe(g) << ": f was modified";
    }
    results.push_back(std::move(h_u));
  }
  return results;
}

template <class Real>
void check_direct(const GridShape& g, std::uint64_t seed, bool in_place) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> value(-1, 3);  // a non-zero mean
  std::vector<std::vector<double>> rhs(3, std::vector<double>(g.size()));
  for (auto& f : rhs)
    for (double& v : f) v = value(rng);
  const auto results = solve_on_gpu<Real>(g, rhs, in_place);
  for (std::size_t i = 0; i < rhs.size(); ++i) {
    const auto want = direct_solve(rhs[i], g);
    expect_close(results[i], want, tolerance<Real>(g, rhs[i], want),
                 describe(g) + " rhs " + std::to_string(i) + " seed " + std::to_string(seed) +
                     (in_place ? " in place" : ""));
  }
}

template <class Real>
void check_manufactured(const GridShape& g, std::uint64_t seed, bool in_place) {
  std::mt19937_64 rng(seed);
  const Manufactured first = manufactured(g, rng);
  const Manufactured second = manufactured(g, rng);
  const auto results = solve_on_gpu<Real>(g, {first.f, second.f}, in_place);
  expect_close(results[0], first.u, tolerance<Real>(g, first.f, first.u),
               describe(g) + " first, seed " + std::to_string(seed));
  expect_close(results[1], second.u, tolerance<Real>(g, second.f, second.u),
               describe(g) + " second, seed " + std::to_string(seed));
}

template <class Real>
class PoissonFusedGpu : public ::testing::Test {};
using Reals = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PoissonFusedGpu, Reals);

TYPED_TEST(PoissonFusedGpu, MatchesDirectSolveOnSmallGrids) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  const std::vector<GridShape> shapes = {grid({2, 2}),
                                         grid({16, 12}, {1.0, 2.5}),
                                         grid({8, 10}),
                                         grid({2, 6}),
                                         grid({32, 7}),
                                         grid({64, 33}, {3.0, 0.4}),
                                         grid({256, 9}),
                                         grid({4, 4, 4}),
                                         grid({8, 6, 10}, {1.0, 2.5, 0.75}),
                                         grid({16, 5, 7}),
                                         grid({32, 3, 4}),
                                         grid({2, 9, 2})};
  std::uint64_t seed = 7;
  for (const auto& g : shapes) {
    check_direct<Real>(g, ++seed, false);
    check_direct<Real>(g, ++seed, true);
  }
}

TYPED_TEST(PoissonFusedGpu, MatchesManufacturedSolutions) {
  GPUKIT_REQUIRE_GPU();
  using Real = TypeParam;
  std::vector<GridShape> shapes = {grid({1024, 768}, {6.0, 3.0}),
                                   grid({128, 64, 33}),
                                   grid({512, 20, 18}, {1.0, 0.5, 2.0}),
                                   grid({2048, 6}),
                                   grid({4096, 10}),
                                   grid({8192, 4})};
  if (!gpukit::testing::quick_tests()) shapes.push_back(grid({8192, 64}, {1.0, 0.25}));
  std::uint64_t seed = 1000;
  for (const auto& g : shapes) {
    check_manufactured<Real>(g, ++seed, false);
    check_manufactured<Real>(g, ++seed, true);
  }
}

}  // namespace
