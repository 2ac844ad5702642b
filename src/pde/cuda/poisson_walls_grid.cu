// The walls solver on CUDA as one transform of the whole grid (poisson_walls.hpp): each axis'
// real-to-real transform is expressed through the DFT of a rearranged grid g, so that one cuFFT
// R2C and one C2R of every axis at once do the FFT work, and one kernel does every axis' pre- and
// post-processing with the eigenvalue scaling in between:
//
//   gather    g = x with each neumann axis in Makhoul's order and each dirichlet axis oddly
//             extended to 2(n + 1) (periodic axes as they are)
//   R2C       G = DFT(g), the last kept axis halved
//   solve     per group of the 2^(neumann axes) spectrum points {+-k on each neumann axis}: the
//             DCT-II coefficients X[k] = prod_a (W_a^k_a G[k] + W_a^-k_a G[-k]) on those axes
//             (W = exp(-i pi k / 2n); the DFT along the others: their operators are diagonal
//             there, a dirichlet axis' as the periodic one of its extension), X /= the
//             eigenvalue, then the C2R's input G'[k] = prod_a W_a^-k_a (1 - i S_a) X (S_a: X at
//             n_a - k_a, 0 past the end), the DCT-III's Makhoul form, for the group's stored
//             points
//   C2R       y = IDFT(G')
//   scatter   u = y with Makhoul's order undone and the extensions' interiors taken
//
// Each identity is the 1D one of poisson_axis_transforms.hpp applied along an axis; the maps are
// complex-linear, so they hold on the other axes' complex DFT values too. Five passes over the
// grid (an extended one with dirichlet axes) besides cuFFT's: about the periodic cuFFT pipeline
// plus the gather and the scatter.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "core/cuda/check.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_walls.hpp"
#include "pde/cuda/poisson_walls_common.cuh"

namespace gpukit::pde::cuda_detail {

namespace {

using namespace walls_kernels;

// The grid as the kernels see it: three axes (leading ones of one point, periodic, when the grid
// has fewer kept axes; axes of one point that carry only their constant mode are dropped), each
// of n points whose rearranged line g has `length` (2(n + 1) dirichlet, n otherwise); the last
// axis is the one cuFFT's R2C halves to `half` = length / 2 + 1.
template <class Index>
struct Grid3 {
  Index n[3], length[3];
  AxisKind kind[3];
  Index half;
  const double* eigen[3];  // each axis' eigenvalue by spectrum index (length entries)
  double helmholtz;
  double inverse_round_trips;  // 1 / prod of the axes' IDFT(DFT) factors

  __device__ Index grid_size() const { return n[0] * n[1] * n[2]; }
  __device__ Index extended_size() const { return length[0] * length[1] * length[2]; }
};

// g(m0, m1, m2), m2 fastest: the product over the axes of each axis' rearrangement (a zero of a
// dirichlet extension zeroes it; its negative half flips the sign).
template <class Real, class Index>
__global__ void gather_kernel(const Real* __restrict__ x, Real* __restrict__ g, Grid3<Index> s) {
  const Index count = s.extended_size();
  GPUKIT_WALLS_GRID_STRIDE(Index, count) {
    Index m[3];
    m[2] = idx % s.length[2];
    const Index rest = idx / s.length[2];
    m[1] = rest % s.length[1], m[0] = rest / s.length[1];
    Index j[3];
    bool negative = false, zero = false;
    for (int a = 0; a < 3; ++a) {
      if (s.kind[a] == AxisKind::neumann) {
        j[a] = static_cast<Index>(walls::neumann_source(m[a], s.n[a]));
      } else if (s.kind[a] == AxisKind::dirichlet) {
        int sign = 1;
        const std::int64_t source = walls::dirichlet_source(m[a], s.n[a], sign);
        zero = zero || source < 0;
        negative = negative != (sign < 0);
        j[a] = source < 0 ? 0 : static_cast<Index>(source);
      } else {
        j[a] = m[a];
      }
    }
    Real value = 0;
    if (!zero) {
      value = x[(j[0] * s.n[1] + j[1]) * s.n[2] + j[2]];
      if (negative) value = -value;
    }
    g[idx] = value;
  }
}

// u(p0, p1, p2) = y at each axis' position of p: Makhoul's order undone (neumann), the
// extension's interior p + 1 (dirichlet), p (periodic).
template <class Real, class Index>
__global__ void scatter_kernel(const Real* __restrict__ y, Real* __restrict__ u, Grid3<Index> s) {
  const Index count = s.grid_size();
  GPUKIT_WALLS_GRID_STRIDE(Index, count) {
    Index p[3];
    p[2] = idx % s.n[2];
    const Index rest = idx / s.n[2];
    p[1] = rest % s.n[1], p[0] = rest / s.n[1];
    Index q[3];
    for (int a = 0; a < 3; ++a) {
      q[a] = s.kind[a] == AxisKind::neumann
                 ? static_cast<Index>(walls::neumann_position(p[a], s.n[a]))
             : s.kind[a] == AxisKind::dirichlet ? p[a] + 1
                                                : p[a];
    }
    u[idx] = y[(q[0] * s.length[1] + q[1]) * s.length[2] + q[2]];
  }
}

template <class Real>
struct Cplx {
  Real x, y;
};
template <class Real>
__device__ Cplx<Real> operator*(Cplx<Real> a, Cplx<Real> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
template <class Real>
__device__ Cplx<Real> operator+(Cplx<Real> a, Cplx<Real> b) {
  return {a.x + b.x, a.y + b.y};
}
template <class Real>
__device__ Cplx<Real> conj(Cplx<Real> a) {
  return {a.x, -a.y};
}

// One thread per group of spectrum points, kNeumann's bit a set where axis a is neumann: the
// representative k has each neumann index in [0, n_a / 2] and the others anywhere in the stored
// spectrum; member b (b a subset of kNeumann) has index n_a - k_a on the axes of b (0 stays 0,
// n_a / 2 stays itself: such members repeat a point, with the same values). Reads G at the
// members, writes G' at the stored ones. Every loop is over compile-time members, so the
// members' values stay in registers.
template <class Real, class Index, int kNeumann>
__global__ void solve_kernel(Complex<Real>* __restrict__ spectrum, Grid3<Index> s, Index reps0,
                             Index reps1, Index reps2) {
  const Index count = reps0 * reps1 * reps2;
  GPUKIT_WALLS_GRID_STRIDE(Index, count) {
    Index k[3];
    k[2] = idx % reps2;
    const Index rest = idx / reps2;
    k[1] = rest % reps1, k[0] = rest / reps1;
    // Each neumann axis' twiddle exp(-i pi j / 2n) at j = k_a (plain) and j = n_a - k_a (the
    // flipped index: -i conj of the plain one, or 1 when k_a is 0), from one sincos.
    Index flipped[3];
    Cplx<Real> plain[3], flip[3];
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      flipped[a] = k[a];
      if (kNeumann >> a & 1) {
        double c, sn;
        walls::quarter_twiddle(k[a], s.n[a], c, sn);
        plain[a] = {static_cast<Real>(c), static_cast<Real>(-sn)};
        flip[a] =
            k[a] == 0 ? Cplx<Real>{1, 0} : Cplx<Real>{static_cast<Real>(sn), static_cast<Real>(-c)};
        flipped[a] = k[a] == 0 ? Index(0) : s.n[a] - k[a];
      }
    }
    const auto index_of = [&](int b, int a) { return (b >> a & 1) ? flipped[a] : k[a]; };
    // G at any spectrum index: the stored half, or the conjugate of the negated index.
    const auto read = [&](Index i0, Index i1, Index i2) {
      if (i2 < s.half) {
        const Complex<Real> v = spectrum[(i0 * s.length[1] + i1) * s.half + i2];
        return Cplx<Real>{v.x, v.y};
      }
      const Index j0 = i0 == 0 ? 0 : s.length[0] - i0, j1 = i1 == 0 ? 0 : s.length[1] - i1;
      const Complex<Real> v = spectrum[(j0 * s.length[1] + j1) * s.half + (s.length[2] - i2)];
      return Cplx<Real>{v.x, -v.y};
    };
    Cplx<Real> g[8], x[8];
#pragma unroll
    for (int b = 0; b < 8; ++b) {
      if ((b & ~kNeumann) == 0) g[b] = read(index_of(b, 0), index_of(b, 1), index_of(b, 2));
    }
    // X at member c: sum over t (a subset of kNeumann: the axes flipped from c) of prod_a
    // W_a^(+-index of c) G[c ^ t], + where t keeps the axis, - where it flips.
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if ((c & ~kNeumann) != 0) continue;
      Cplx<Real> sum{0, 0};
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        if ((t & ~kNeumann) != 0) continue;
        Cplx<Real> term = g[c ^ t];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          if (!(kNeumann >> a & 1)) continue;
          const Cplx<Real> w = (c >> a & 1) ? flip[a] : plain[a];
          term = term * ((t >> a & 1) ? conj(w) : w);
        }
        sum = sum + term;
      }
      double mu = -s.helmholtz;
#pragma unroll
      for (int a = 0; a < 3; ++a) mu += s.eigen[a][index_of(c, a)];
      const Real scale = mu != 0 ? static_cast<Real>(s.inverse_round_trips / mu) : Real(0);
      x[c] = {sum.x * scale, sum.y * scale};
    }
    // G' at each stored member c: prod_a conj(W_a^index) (1 - i S_a) X: the sum over t of
    // (-i)^|t| X[c ^ t], t flipping only axes where c's index is not 0 (X past the end is 0).
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      if ((c & ~kNeumann) != 0) continue;
      if (index_of(c, 2) >= s.half) continue;
      Cplx<Real> sum{0, 0};
#pragma unroll
      for (int t = 0; t < 8; ++t) {
        if ((t & ~kNeumann) != 0) continue;
        bool past_the_end = false;
#pragma unroll
        for (int a = 0; a < 3; ++a)
          past_the_end = past_the_end || ((t >> a & 1) && index_of(c, a) == 0);
        if (past_the_end) continue;
        Cplx<Real> term = x[c ^ t];
#pragma unroll
        for (int a = 0; a < 3; ++a) {
          if (t >> a & 1) term = {term.y, -term.x};  // times -i
        }
        sum = sum + term;
      }
#pragma unroll
      for (int a = 0; a < 3; ++a) {
        if (kNeumann >> a & 1) sum = sum * conj((c >> a & 1) ? flip[a] : plain[a]);
      }
      Complex<Real> out;
      out.x = sum.x, out.y = sum.y;
      spectrum[(index_of(c, 0) * s.length[1] + index_of(c, 1)) * s.half + index_of(c, 2)] = out;
    }
  }
}

// u = f / (-lambda) (0 when lambda is 0): a grid whose every axis has one point and only its
// constant mode.
template <class Real>
__global__ void constant_mode_kernel(const Real* __restrict__ f, Real* __restrict__ u,
                                     std::int64_t count, double helmholtz) {
  const std::int64_t idx = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (idx < count) {
    u[idx] = helmholtz != 0 ? static_cast<Real>(static_cast<double>(f[idx]) / -helmholtz) : Real(0);
  }
}

// The kept axes of a shape (those of more than one spectrum point) and their lengths, padded in
// front to three.
struct KeptAxes {
  int count = 0;
  std::int64_t n[3] = {1, 1, 1}, length[3] = {1, 1, 1};
  double physical_length[3] = {1, 1, 1};
  AxisKind kind[3] = {AxisKind::periodic, AxisKind::periodic, AxisKind::periodic};

  explicit KeptAxes(const WallsShape& shape) {
    std::int64_t kept_n[3], kept_length[3];
    double kept_physical[3];
    AxisKind kept_kind[3];
    for (int d = 0; d < shape.rank; ++d) {
      const std::int64_t length = walls::fft_length(shape.kind[d], shape.n[d]);
      if (length == 1) continue;
      kept_n[count] = shape.n[d], kept_length[count] = length;
      kept_physical[count] = shape.length[d], kept_kind[count] = shape.kind[d];
      ++count;
    }
    const int pad = 3 - count;
    for (int a = 0; a < count; ++a) {
      n[pad + a] = kept_n[a], length[pad + a] = kept_length[a];
      physical_length[pad + a] = kept_physical[a], kind[pad + a] = kept_kind[a];
    }
  }
  std::int64_t half() const { return length[2] / 2 + 1; }
  std::int64_t extended() const { return length[0] * length[1] * length[2]; }
  std::int64_t spectrum() const { return length[0] * length[1] * half(); }
  std::int64_t reps(int a) const {
    if (a == 2) return half();
    return kind[a] == AxisKind::neumann ? n[a] / 2 + 1 : length[a];
  }
};

// One cuFFT plan over the kept axes (the default contiguous layout, one batch).
class GridFft {
 public:
  GridFft(const KeptAxes& axes, cufftType type, bool make) {
    long long dims[3];
    for (int a = 0; a < axes.count; ++a) dims[a] = axes.length[3 - axes.count + a];
    GPUKIT_CUFFT_CHECK(cufftCreate(&handle_));
    valid_ = true;
    if (make) {
      GPUKIT_CUFFT_CHECK(cufftMakePlanMany64(handle_, axes.count, dims, nullptr, 1, 0, nullptr, 1,
                                             0, type, 1, &work_bytes_));
    } else {
      GPUKIT_CUFFT_CHECK(cufftGetSizeMany64(handle_, axes.count, dims, nullptr, 1, 0, nullptr, 1, 0,
                                            type, 1, &work_bytes_));
    }
  }
  GridFft(const GridFft&) = delete;
  GridFft& operator=(const GridFft&) = delete;
  ~GridFft() {
    if (valid_) cufftDestroy(handle_);
  }
  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return work_bytes_; }

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  std::size_t work_bytes_ = 0;
};

template <class Real>
class WallsGridSolver final : public DeviceSolver<Real> {
 public:
  explicit WallsGridSolver(const WallsShape& shape) : shape_(shape), axes_(shape) {
    for (int d = 0; d < shape.rank; ++d) size_ *= shape.n[d];
    if (axes_.count == 0) return;
    forward_ = std::make_unique<GridFft>(axes_, Cufft<Real>::r2c, true);
    inverse_ = std::make_unique<GridFft>(axes_, Cufft<Real>::c2r, true);
    extended_ = cuda::DeviceBuffer<Real>(static_cast<std::size_t>(axes_.extended()));
    spectrum_ = cuda::DeviceBuffer<Complex<Real>>(static_cast<std::size_t>(axes_.spectrum()));
    std::vector<double> tables;
    std::int64_t offsets[3];
    double round_trips = 1;
    for (int a = 0; a < 3; ++a) {
      offsets[a] = static_cast<std::int64_t>(tables.size());
      const std::int64_t n = axes_.n[a], length = axes_.length[a];
      // The library's eigenvalue magnitudes (detail::laplacian_eigenvalues), negated, by
      // spectrum index; a dirichlet axis' extension has frequency f = min(m, length - m), mode
      // f - 1 of the axis, and its frequencies 0 and n + 1 are zero in an odd sequence (+inf:
      // their coefficient 0).
      const std::vector<double> magnitudes =
          length > 1 ? detail::laplacian_eigenvalues(n, n, axes_.physical_length[a], axes_.kind[a],
                                                     shape.fd2 ? Operator::fd2 : Operator::spectral)
                     : std::vector<double>{0.0};
      for (std::int64_t m = 0; m < length; ++m) {
        if (axes_.kind[a] != AxisKind::dirichlet) {
          tables.push_back(-magnitudes[static_cast<std::size_t>(m)]);
          continue;
        }
        const std::int64_t f = std::min(m, length - m);
        tables.push_back(f == 0 || f == n + 1 ? std::numeric_limits<double>::infinity()
                                              : -magnitudes[static_cast<std::size_t>(f - 1)]);
      }
      if (length > 1) round_trips *= walls::round_trip_factor(axes_.kind[a], n);
    }
    eigen_ = cuda::DeviceBuffer<double>(tables.size());
    cuda::copy_to_device(eigen_.data(), tables.data(), tables.size() * sizeof(double));
    for (int a = 0; a < 3; ++a) eigen_at_[a] = eigen_.data() + offsets[a];
    inverse_round_trips_ = 1 / round_trips;
    narrow_ = std::max(axes_.extended(), 2 * axes_.spectrum()) < (std::int64_t{1} << 31);
    for (int a = 0; a < 3; ++a) {
      if (axes_.kind[a] == AxisKind::neumann) neumann_mask_ |= 1 << a;
    }
  }

  void solve(const Real* f, Real* u, StreamHandle stream) override {
    if (axes_.count == 0) {
      constant_mode_kernel<Real>
          <<<blocks_for(size_), kThreads, 0, stream>>>(f, u, size_, shape_.helmholtz);
      GPUKIT_CUDA_CHECK_LAUNCH("constant_mode_kernel");
      return;
    }
    if (narrow_) {
      run<std::uint32_t>(f, u, stream);
    } else {
      run<std::int64_t>(f, u, stream);
    }
  }

 private:
  template <class Index>
  void run(const Real* f, Real* u, cudaStream_t stream) {
    Grid3<Index> s;
    for (int a = 0; a < 3; ++a) {
      s.n[a] = static_cast<Index>(axes_.n[a]);
      s.length[a] = static_cast<Index>(axes_.length[a]);
      s.kind[a] = axes_.kind[a];
      s.eigen[a] = eigen_at_[a];
    }
    s.half = static_cast<Index>(axes_.half());
    s.helmholtz = shape_.helmholtz;
    s.inverse_round_trips = inverse_round_trips_;
    gather_kernel<Real, Index>
        <<<blocks_for(axes_.extended()), kThreads, 0, stream>>>(f, extended_.data(), s);
    GPUKIT_CUDA_CHECK_LAUNCH("gather_kernel");
    GPUKIT_CUFFT_CHECK(cufftSetStream(forward_->handle(), stream));
    GPUKIT_CUFFT_CHECK(
        Cufft<Real>::real_to_complex(forward_->handle(), extended_.data(), spectrum_.data()));
    const std::int64_t groups = axes_.reps(0) * axes_.reps(1) * axes_.reps(2);
    const Index r0 = static_cast<Index>(axes_.reps(0)), r1 = static_cast<Index>(axes_.reps(1)),
                r2 = static_cast<Index>(axes_.reps(2));
    const auto launch = [&]<int kNeumann>() {
      solve_kernel<Real, Index, kNeumann>
          <<<blocks_for(groups), kThreads, 0, stream>>>(spectrum_.data(), s, r0, r1, r2);
    };
    switch (neumann_mask_) {
      case 0:
        launch.template operator()<0>();
        break;
      case 1:
        launch.template operator()<1>();
        break;
      case 2:
        launch.template operator()<2>();
        break;
      case 3:
        launch.template operator()<3>();
        break;
      case 4:
        launch.template operator()<4>();
        break;
      case 5:
        launch.template operator()<5>();
        break;
      case 6:
        launch.template operator()<6>();
        break;
      default:
        launch.template operator()<7>();
        break;
    }
    GPUKIT_CUDA_CHECK_LAUNCH("solve_kernel");
    GPUKIT_CUFFT_CHECK(cufftSetStream(inverse_->handle(), stream));
    GPUKIT_CUFFT_CHECK(
        Cufft<Real>::complex_to_real(inverse_->handle(), spectrum_.data(), extended_.data()));
    scatter_kernel<Real, Index><<<blocks_for(size_), kThreads, 0, stream>>>(extended_.data(), u, s);
    GPUKIT_CUDA_CHECK_LAUNCH("scatter_kernel");
  }

  WallsShape shape_;
  KeptAxes axes_;
  std::int64_t size_ = 1;
  std::unique_ptr<GridFft> forward_, inverse_;
  cuda::DeviceBuffer<Real> extended_;
  cuda::DeviceBuffer<Complex<Real>> spectrum_;
  cuda::DeviceBuffer<double> eigen_;
  const double* eigen_at_[3] = {nullptr, nullptr, nullptr};
  double inverse_round_trips_ = 1;
  bool narrow_ = false;
  int neumann_mask_ = 0;  // bit a: axis a is neumann (the solve kernel's instance)
};

}  // namespace

template <class Real>
std::size_t walls_grid_device_bytes(const WallsShape& shape) {
  const KeptAxes axes(shape);
  if (axes.count == 0) return 0;
  std::size_t tables = 0;
  for (int a = 0; a < 3; ++a) tables += static_cast<std::size_t>(axes.length[a]);
  return static_cast<std::size_t>(axes.extended()) * sizeof(Real) +
         static_cast<std::size_t>(axes.spectrum()) * sizeof(Complex<Real>) +
         tables * sizeof(double) + GridFft(axes, Cufft<Real>::r2c, false).work_bytes() +
         GridFft(axes, Cufft<Real>::c2r, false).work_bytes() + 1024;
}

template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_grid_solver(const WallsShape& shape) {
  return std::make_unique<WallsGridSolver<Real>>(shape);
}

template std::size_t walls_grid_device_bytes<float>(const WallsShape&);
template std::size_t walls_grid_device_bytes<double>(const WallsShape&);
template std::unique_ptr<DeviceSolver<float>> make_walls_grid_solver<float>(const WallsShape&);
template std::unique_ptr<DeviceSolver<double>> make_walls_grid_solver<double>(const WallsShape&);

}  // namespace gpukit::pde::cuda_detail
