// The solver of (lap - lambda) u = f with a boundary per axis on CUDA (poisson_walls.hpp).
// cuFFT has no real-to-real transforms: each axis' transform is a real FFT (R2C or C2R, batched
// along the axis through cuFFT's strided layout, so no transposes) between element-wise kernels
// that apply poisson_axis_transforms.hpp's index maps and twiddles:
//
//   forward, each axis   neumann: Makhoul's order, dirichlet: the odd extension (gather);
//                        R2C; the axis' coefficients back into u (coefficients)
//   scale                u /= (sum of the axes' eigenvalues - lambda) * the round trips' factors
//   inverse, each axis   periodic: unpack (spectrum), C2R into u; neumann: twiddle (spectrum),
//                        C2R, Makhoul's order undone (scatter); dirichlet: the DST-I again
//
// About six passes over the grid an axis and direction: the first step of a ladder (the fused
// periodic solver does its whole solve in about four), correct for every mix of boundaries.

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/cuda/check.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/per_type.hpp"
#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_walls.hpp"
#include "pde/cuda/poisson_walls_common.cuh"

namespace gpukit::pde::cuda_detail {

namespace {

using namespace walls_kernels;

// An axis inside the array: element (o, j, i) at (o n + j) inner + i.
struct AxisView {
  std::int64_t outer = 1, n = 1, inner = 1;
};

// Where the FFT buffers (scratch: the FFT's real lines; spectrum: its half spectra) keep element
// (o, t, i): the array's own order (the axis strided by inner) for the first and the last axis,
// whose lines cuFFT takes in one batched call; a middle axis (outer and inner both above 1) in
// contiguous lines (o, i, t), one call too: cuFFT's layout has one batch stride, and one call
// per outer index would need each line's start aligned to a complex, which odd sizes break.
struct LineLayout {
  std::int64_t outer_stride = 0, step = 1, inner_stride = 0;
};

LineLayout line_layout(const AxisView& a, std::int64_t line_length, bool contiguous_lines) {
  if (contiguous_lines) return {a.inner * line_length, 1, line_length};
  return {line_length * a.inner, a.inner, 1};
}

// An axis and a buffer layout in the kernels' index type: 32 bits wherever the buffers allow (a
// 64-bit division costs several times a 32-bit one, and each element takes two), 64 otherwise.
template <class Index>
struct Lines {
  Index outer, n, inner, length;           // the view, and the line length of the loop
  Index outer_stride, step, inner_stride;  // the buffer's layout
  Lines(const AxisView& a, std::int64_t line_length, const LineLayout& l)
      : outer(static_cast<Index>(a.outer)),
        n(static_cast<Index>(a.n)),
        inner(static_cast<Index>(a.inner)),
        length(static_cast<Index>(line_length)),
        outer_stride(static_cast<Index>(l.outer_stride)),
        step(static_cast<Index>(l.step)),
        inner_stride(static_cast<Index>(l.inner_stride)) {}
  __device__ Index count() const { return outer * length * inner; }
  // Element idx of the loop as (o, t, i), i fastest.
  __device__ void split(Index idx, Index& o, Index& t, Index& i) const {
    i = idx % inner;
    const Index rest = idx / inner;
    t = rest % length, o = rest / length;
  }
  __device__ Index array_at(Index o, Index j, Index i) const { return (o * n + j) * inner + i; }
  __device__ Index buffer_at(Index o, Index t, Index i) const {
    return o * outer_stride + t * step + i * inner_stride;
  }
};

// v(o, t, i), t < length (the FFT's), stored as the buffer layout says: neumann x(o,
// neumann_source(t), i); dirichlet the odd extension of x along the axis; periodic x itself.
template <class Real, class Index>
__global__ void gather_kernel(const Real* __restrict__ x, Real* __restrict__ v, Lines<Index> l,
                              AxisKind kind) {
  GPUKIT_WALLS_GRID_STRIDE(Index, l.count()) {
    Index o, t, i;
    l.split(idx, o, t, i);
    const auto sample = [&](std::int64_t j) { return x[l.array_at(o, static_cast<Index>(j), i)]; };
    v[l.buffer_at(o, t, i)] = walls::axis_gathered<Real>(kind, t, l.n, sample);
  }
}

// x(o, j, i), j < n: the axis' coefficients from its FFT V(o, k, i), k < half, stored as the
// buffer layout says (the loop's length is n).
template <class Real, class Index>
__global__ void coefficients_kernel(const Complex<Real>* __restrict__ spectrum,
                                    Real* __restrict__ x, Lines<Index> l, AxisKind kind) {
  GPUKIT_WALLS_GRID_STRIDE(Index, l.count()) {
    Index o, j, i;
    l.split(idx, o, j, i);
    const auto at = [&](std::int64_t k) {
      return spectrum[l.buffer_at(o, static_cast<Index>(k), i)];
    };
    x[idx] = walls::axis_coefficient<Real>(kind, j, l.n, at);
  }
}

// V(o, k, i), k < n / 2 + 1 (the loop's length), stored as the buffer layout says: the spectrum
// whose C2R inverts the axis' coefficients x(o, j, i) (periodic: unpacked; neumann: exp(i pi k /
// 2n) (X[k] - i X[n - k])).
template <class Real, class Index>
__global__ void spectrum_kernel(const Real* __restrict__ x, Complex<Real>* __restrict__ spectrum,
                                Lines<Index> l, AxisKind kind) {
  GPUKIT_WALLS_GRID_STRIDE(Index, l.count()) {
    Index o, k, i;
    l.split(idx, o, k, i);
    const auto coefficient = [&](std::int64_t j) {
      return x[l.array_at(o, static_cast<Index>(j), i)];
    };
    spectrum[l.buffer_at(o, k, i)] =
        walls::axis_spectrum<Complex<Real>, Real>(kind, k, l.n, coefficient);
  }
}

// x(o, p, i) = v(o, m, i) from the C2R's lines (stored as the buffer layout says; the loop's
// length is n), m = neumann_position(p) (Makhoul's order undone) or p (periodic).
template <class Real, class Index>
__global__ void scatter_kernel(const Real* __restrict__ v, Real* __restrict__ x, Lines<Index> l,
                               AxisKind kind) {
  GPUKIT_WALLS_GRID_STRIDE(Index, l.count()) {
    Index o, p, i;
    l.split(idx, o, p, i);
    const Index m =
        kind == AxisKind::neumann ? static_cast<Index>(walls::neumann_position(p, l.n)) : p;
    x[idx] = v[l.buffer_at(o, m, i)];
  }
}

struct ScaleParams {
  std::int64_t n0 = 1, n1 = 1, n2 = 1;  // three axes, leading ones of size 1 for a 2D grid
  const double* eigen[3] = {nullptr, nullptr, nullptr};
  double helmholtz = 0;
  double round_trips = 1;  // the product of the axes' round_trip_factor
};

// u /= (e0[j0] + e1[j1] + e2[j2] - lambda) * round trips, in double; a zero eigenvalue (the
// constant mode of a singular problem) gives 0.
template <class Real, class Index>
__global__ void scale_kernel(Real* __restrict__ u, ScaleParams p) {
  const Index n1 = static_cast<Index>(p.n1), n2 = static_cast<Index>(p.n2);
  const Index count = static_cast<Index>(p.n0) * n1 * n2;
  GPUKIT_WALLS_GRID_STRIDE(Index, count) {
    const Index j2 = idx % n2, rest = idx / n2;
    const Index j1 = rest % n1, j0 = rest / n1;
    const double mu = p.eigen[0][j0] + p.eigen[1][j1] + p.eigen[2][j2] - p.helmholtz;
    u[idx] =
        mu != 0 ? static_cast<Real>(static_cast<double>(u[idx]) / (mu * p.round_trips)) : Real(0);
  }
}

// Whether every index of a solve fits the 32-bit kernels: the largest buffer (the dirichlet
// axes' extended lines, the spectra) with room for the grid-stride loop's last step.
bool fits_32_bits(std::int64_t largest_elements) {
  return largest_elements < (std::int64_t{1} << 31);
}

// One axis of the shape: its view, its FFT's length and half spectrum, its buffers' layout,
// whether it is skipped (a periodic or neumann axis of one point carries only its constant
// mode: the identity).
struct Axis {
  AxisKind kind = AxisKind::periodic;
  AxisView view;
  std::int64_t length = 1, half = 1;
  bool contiguous_lines = false;
  bool skipped = false;
  // A periodic first or last axis' FFT reads and writes the array itself.
  bool needs_scratch() const {
    return !skipped && (kind != AxisKind::periodic || contiguous_lines);
  }
  bool needs_inverse_plan() const { return !skipped && kind != AxisKind::dirichlet; }
  LineLayout real_lines() const { return line_layout(view, length, contiguous_lines); }
  LineLayout complex_lines() const { return line_layout(view, half, contiguous_lines); }
};

std::vector<Axis> axes_of(const WallsShape& shape) {
  std::vector<Axis> axes(static_cast<std::size_t>(shape.rank));
  for (int d = 0; d < shape.rank; ++d) {
    Axis& a = axes[static_cast<std::size_t>(d)];
    a.kind = shape.kind[d];
    a.view.n = shape.n[d];
    for (int e = 0; e < d; ++e) a.view.outer *= shape.n[e];
    for (int e = d + 1; e < shape.rank; ++e) a.view.inner *= shape.n[e];
    a.length = walls::fft_length(a.kind, a.view.n);
    a.half = a.length / 2 + 1;
    a.contiguous_lines = a.view.outer > 1 && a.view.inner > 1;
    a.skipped = a.view.n == 1 && a.kind != AxisKind::dirichlet;
  }
  return axes;
}

std::int64_t scratch_elements(const std::vector<Axis>& axes) {
  std::int64_t most = 0;
  for (const Axis& a : axes) {
    if (a.needs_scratch()) most = std::max(most, a.view.outer * a.length * a.view.inner);
  }
  return most;
}
std::int64_t spectrum_elements(const std::vector<Axis>& axes) {
  std::int64_t most = 0;
  for (const Axis& a : axes) {
    if (!a.skipped) most = std::max(most, a.view.outer * a.half * a.view.inner);
  }
  return most;
}

// A batched 1D real FFT along an axis: one cuFFT call over the whole array in the axis' buffer
// layout. Lines start at o outer_stride + i inner_stride, one batch stride since outer or inner
// is 1 or the lines are contiguous.
class AxisFft {
 public:
  AxisFft(const Axis& a, cufftType type, bool make) {
    long long length = a.length;
    const bool forward = type == CUFFT_R2C || type == CUFFT_D2Z;
    long long real_embed = a.length, complex_embed = a.half;
    const LineLayout real = a.real_lines(), complex = a.complex_lines();
    const bool by_inner = a.view.inner > 1 && !a.contiguous_lines;  // the first axis
    const long long real_distance = by_inner             ? real.inner_stride
                                    : a.contiguous_lines ? a.length
                                                         : real.outer_stride;
    const long long complex_distance = by_inner             ? complex.inner_stride
                                       : a.contiguous_lines ? a.half
                                                            : complex.outer_stride;
    const long long batch = a.view.outer * a.view.inner;
    long long* in_embed = forward ? &real_embed : &complex_embed;
    long long* out_embed = forward ? &complex_embed : &real_embed;
    const long long in_stride = forward ? real.step : complex.step;
    const long long out_stride = forward ? complex.step : real.step;
    const long long in_distance = forward ? real_distance : complex_distance;
    const long long out_distance = forward ? complex_distance : real_distance;
    GPUKIT_CUFFT_CHECK(cufftCreate(&handle_));
    valid_ = true;
    if (make) {
      GPUKIT_CUFFT_CHECK(cufftMakePlanMany64(handle_, 1, &length, in_embed, in_stride, in_distance,
                                             out_embed, out_stride, out_distance, type, batch,
                                             &work_bytes_));
    } else {
      GPUKIT_CUFFT_CHECK(cufftGetSizeMany64(handle_, 1, &length, in_embed, in_stride, in_distance,
                                            out_embed, out_stride, out_distance, type, batch,
                                            &work_bytes_));
    }
  }
  AxisFft(const AxisFft&) = delete;
  AxisFft& operator=(const AxisFft&) = delete;
  ~AxisFft() {
    if (valid_) cufftDestroy(handle_);
  }
  std::size_t work_bytes() const { return work_bytes_; }

  template <class Real>
  void real_to_complex(const Real* in, Complex<Real>* out, cudaStream_t stream) const {
    GPUKIT_CUFFT_CHECK(cufftSetStream(handle_, stream));
    // An out-of-place real-to-complex transform leaves its input as it was.
    GPUKIT_CUFFT_CHECK(Cufft<Real>::real_to_complex(handle_, const_cast<Real*>(in), out));
  }
  template <class Real>
  void complex_to_real(Complex<Real>* in, Real* out, cudaStream_t stream) const {
    GPUKIT_CUFFT_CHECK(cufftSetStream(handle_, stream));
    GPUKIT_CUFFT_CHECK(Cufft<Real>::complex_to_real(handle_, in, out));
  }

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  std::size_t work_bytes_ = 0;
};

template <class Real>
std::size_t fft_work_bytes(const std::vector<Axis>& axes, bool make_plans) {
  std::size_t bytes = 0;
  for (const Axis& a : axes) {
    if (a.skipped) continue;
    bytes += AxisFft(a, Cufft<Real>::r2c, make_plans).work_bytes();
    if (a.needs_inverse_plan()) bytes += AxisFft(a, Cufft<Real>::c2r, make_plans).work_bytes();
  }
  return bytes;
}

template <class Real>
class WallsSolver final : public DeviceSolver<Real> {
 public:
  explicit WallsSolver(const WallsShape& shape) : shape_(shape), axes_(axes_of(shape)) {
    for (const Axis& a : axes_) {
      forward_.push_back(a.skipped ? nullptr
                                   : std::make_unique<AxisFft>(a, Cufft<Real>::r2c, true));
      inverse_.push_back(
          a.needs_inverse_plan() ? std::make_unique<AxisFft>(a, Cufft<Real>::c2r, true) : nullptr);
    }
    scratch_ = cuda::DeviceBuffer<Real>(static_cast<std::size_t>(scratch_elements(axes_)));
    narrow_ =
        fits_32_bits(std::max({shape_size(), scratch_elements(axes_), spectrum_elements(axes_)}));
    spectrum_ =
        cuda::DeviceBuffer<Complex<Real>>(static_cast<std::size_t>(spectrum_elements(axes_)));
    // The eigenvalue tables of three axes (a 2D grid's first is one point of eigenvalue 0).
    std::vector<double> tables;
    const int pad = 3 - shape.rank;
    std::int64_t offsets[3] = {0, 0, 0};
    params_.helmholtz = shape.helmholtz;
    std::int64_t* sizes[3] = {&params_.n0, &params_.n1, &params_.n2};
    for (int d = 0; d < 3; ++d) {
      offsets[d] = static_cast<std::int64_t>(tables.size());
      if (d < pad) {
        tables.push_back(0.0);
        continue;
      }
      const int axis = d - pad;
      const Axis& a = axes_[static_cast<std::size_t>(axis)];
      *sizes[d] = a.view.n;
      // The library's eigenvalue magnitudes (detail::laplacian_eigenvalues), negated.
      for (const double magnitude :
           detail::laplacian_eigenvalues(a.view.n, a.view.n, shape.length[axis], a.kind,
                                         shape.fd2 ? Operator::fd2 : Operator::spectral)) {
        tables.push_back(-magnitude);
      }
      if (!a.skipped) params_.round_trips *= walls::round_trip_factor(a.kind, a.view.n);
    }
    eigen_ = cuda::DeviceBuffer<double>(tables.size());
    cuda::copy_to_device(eigen_.data(), tables.data(), tables.size() * sizeof(double));
    for (int d = 0; d < 3; ++d) params_.eigen[d] = eigen_.data() + offsets[d];
  }

  void solve(const Real* f, Real* u, StreamHandle stream) override {
    const std::int64_t n = shape_size();
    bool first = true;
    for (std::size_t d = 0; d < axes_.size(); ++d) {
      if (axes_[d].skipped) continue;
      forward(first ? f : u, u, d, stream);
      first = false;
    }
    if (first && u != f) {  // every axis skipped: the coefficients are f itself
      GPUKIT_CUDA_CHECK(cudaMemcpyAsync(u, f, static_cast<std::size_t>(n) * sizeof(Real),
                                        cudaMemcpyDeviceToDevice, stream));
    }
    with_index([&]<class Index>(Index) {
      scale_kernel<Real, Index><<<blocks_for(n), kThreads, 0, stream>>>(u, params_);
    });
    GPUKIT_CUDA_CHECK_LAUNCH("scale_kernel");
    for (std::size_t d = 0; d < axes_.size(); ++d) {
      const Axis& a = axes_[d];
      if (a.skipped) continue;
      if (a.kind == AxisKind::dirichlet) {  // the DST-I is its own inverse
        forward(u, u, d, stream);
        continue;
      }
      const std::int64_t count = a.view.outer * a.half * a.view.inner;
      with_index([&]<class Index>(Index) {
        spectrum_kernel<Real, Index><<<blocks_for(count), kThreads, 0, stream>>>(
            u, spectrum_.data(), Lines<Index>(a.view, a.half, a.complex_lines()), a.kind);
      });
      GPUKIT_CUDA_CHECK_LAUNCH("spectrum_kernel");
      if (!a.needs_scratch()) {
        inverse_[d]->complex_to_real<Real>(spectrum_.data(), u, stream);
        continue;
      }
      inverse_[d]->complex_to_real<Real>(spectrum_.data(), scratch_.data(), stream);
      with_index([&]<class Index>(Index) {
        scatter_kernel<Real, Index><<<blocks_for(n), kThreads, 0, stream>>>(
            scratch_.data(), u, Lines<Index>(a.view, a.view.n, a.real_lines()), a.kind);
      });
      GPUKIT_CUDA_CHECK_LAUNCH("scatter_kernel");
    }
  }

 private:
  std::int64_t shape_size() const {
    std::int64_t n = 1;
    for (int d = 0; d < shape_.rank; ++d) n *= shape_.n[d];
    return n;
  }

  // Axis d's forward transform of x into u's coefficients (x may be u).
  void forward(const Real* x, Real* u, std::size_t d, cudaStream_t stream) {
    const Axis& a = axes_[d];
    if (a.needs_scratch()) {
      const std::int64_t count = a.view.outer * a.length * a.view.inner;
      with_index([&]<class Index>(Index) {
        gather_kernel<Real, Index><<<blocks_for(count), kThreads, 0, stream>>>(
            x, scratch_.data(), Lines<Index>(a.view, a.length, a.real_lines()), a.kind);
      });
      GPUKIT_CUDA_CHECK_LAUNCH("gather_kernel");
      x = scratch_.data();
    }
    forward_[d]->real_to_complex<Real>(x, spectrum_.data(), stream);
    const std::int64_t count = a.view.outer * a.view.n * a.view.inner;
    with_index([&]<class Index>(Index) {
      coefficients_kernel<Real, Index><<<blocks_for(count), kThreads, 0, stream>>>(
          spectrum_.data(), u, Lines<Index>(a.view, a.view.n, a.complex_lines()), a.kind);
    });
    GPUKIT_CUDA_CHECK_LAUNCH("coefficients_kernel");
  }

  // Calls f with a value of the kernels' index type.
  template <class F>
  void with_index(F&& f) const {
    if (narrow_) {
      f(std::uint32_t{});
    } else {
      f(std::int64_t{});
    }
  }

  WallsShape shape_;
  std::vector<Axis> axes_;
  std::vector<std::unique_ptr<AxisFft>> forward_, inverse_;
  cuda::DeviceBuffer<Real> scratch_;
  cuda::DeviceBuffer<Complex<Real>> spectrum_;
  cuda::DeviceBuffer<double> eigen_;
  ScaleParams params_;
  bool narrow_ = false;  // the kernels index in 32 bits
};

}  // namespace

std::string_view walls_pipeline_name(WallsPipeline pipeline) {
  return pipeline == WallsPipeline::per_axis ? "cufft-r2r-axes" : "cufft-r2r";
}

bool walls_supports(const WallsShape& shape) {
  if (shape.rank < 2 || shape.rank > 3) return false;
  for (int d = 0; d < shape.rank; ++d) {
    if (shape.n[d] < 1) return false;
  }
  // The kernels index in 64 bits; cuFFT's 64-bit plans take any length. The extended buffers
  // must fit the 64-bit sizes of the allocations.
  const std::vector<Axis> axes = axes_of(shape);
  return scratch_elements(axes) < (std::int64_t{1} << 40) &&
         spectrum_elements(axes) < (std::int64_t{1} << 40);
}

template <class Real>
std::size_t walls_axes_device_bytes(const WallsShape& shape) {
  const std::vector<Axis> axes = axes_of(shape);
  std::size_t tables = 0;
  for (int d = 0; d < shape.rank; ++d) tables += static_cast<std::size_t>(shape.n[d]);
  return static_cast<std::size_t>(scratch_elements(axes)) * sizeof(Real) +
         static_cast<std::size_t>(spectrum_elements(axes)) * sizeof(Complex<Real>) +
         (tables + 3) * sizeof(double) + fft_work_bytes<Real>(axes, false) + 1024;
}

template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_walls_axes_solver(const WallsShape& shape) {
  return std::make_unique<WallsSolver<Real>>(shape);
}

template std::size_t walls_axes_device_bytes<float>(const WallsShape&);
template std::size_t walls_axes_device_bytes<double>(const WallsShape&);
template std::unique_ptr<DeviceSolver<float>> make_walls_axes_solver<float>(const WallsShape&);
template std::unique_ptr<DeviceSolver<double>> make_walls_axes_solver<double>(const WallsShape&);

}  // namespace gpukit::pde::cuda_detail
