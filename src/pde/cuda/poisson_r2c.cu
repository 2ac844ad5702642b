// The half-spectrum solvers: cuFFT real-to-complex and complex-to-real transforms (the symmetry
// slide 44 left out: a real f has f_hat(-k) = conj(f_hat(k)), so only nx/2 + 1 columns of the
// contiguous axis are transformed, solved and stored).
//   r2c    the improved solve kernel: the 3D launch gives each thread its (x, y, z) without
//          division or modulo, |k|^2 comes from the indices (no tables, no loads besides the
//          element), one vector load and store per complex element, 1/n folded in.
//   cufft  the vendor row: the same transforms and a plain flat-index scaling kernel.

#include <memory>

#include "core/cuda/check.hpp"
#include "gpukit/core/memory.hpp"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_device_solver.hpp"

namespace gpukit::pde::cuda_detail {

namespace {

template <class Real>
using Complex = typename Cufft<Real>::Complex;

constexpr int kBlockX = 64, kBlockY = 4;

struct SpectrumScale {
  // (2 pi / L)^2 per axis and 1 / n, so that |k|^2 = sum (m * step)^2.
  double step_x, step_y, step_z;
  double inv_n;
};

template <class Real>
__device__ __forceinline__ Real poisson_multiplier(std::int64_t x, std::int64_t y, std::int64_t z,
                                                   std::int64_t ny, std::int64_t nz,
                                                   const SpectrumScale& s) {
  // x is a half-spectrum column: its frequency is x itself.
  const Real my = Real(2 * y < ny ? y : y - ny) * Real(s.step_y);
  const Real mz = Real(2 * z < nz ? z : z - nz) * Real(s.step_z);
  const Real mx = Real(x) * Real(s.step_x);
  const Real k2 = mx * mx + my * my + mz * mz;
  return k2 > Real(0) ? Real(-s.inv_n) / k2 : Real(0);
}

template <class Real>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    solve_half_spectrum(Complex<Real>* __restrict__ c, int half_x, int ny, int nz,
                        SpectrumScale s) {
  const int x = blockIdx.x * kBlockX + threadIdx.x;
  const int y = blockIdx.y * kBlockY + threadIdx.y;
  const int z = blockIdx.z;
  if (x >= half_x || y >= ny) return;
  const std::int64_t index = (std::int64_t{z} * ny + y) * half_x + x;
  const Real scale = poisson_multiplier<Real>(x, y, z, ny, nz, s);
  Complex<Real> v = c[index];
  v.x *= scale;
  v.y *= scale;
  c[index] = v;
}

template <class Real>
__global__ void scale_flat(Complex<Real>* c, std::int64_t count, std::int64_t half_x,
                           std::int64_t ny, std::int64_t nz, SpectrumScale s) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const std::int64_t x = i % half_x, row = i / half_x;
    const Real scale = poisson_multiplier<Real>(x, row % ny, row / ny, ny, nz, s);
    c[i].x *= scale;
    c[i].y *= scale;
  }
}

enum class Kind { r2c, cufft };

template <class Real>
std::size_t half_spectrum_bytes(const GridShape& shape) {
  const Box b = make_box(shape);
  if (b.rank == 0) return 0;
  return static_cast<std::size_t>(b.half_size()) * sizeof(Complex<Real>) + 256 +
         std::max(cufft_work_estimate(b, Cufft<Real>::r2c),
                  cufft_work_estimate(b, Cufft<Real>::c2r));
}

template <class Real, Kind kind>
class HalfSpectrumSolver final : public DeviceSolver<Real> {
 public:
  explicit HalfSpectrumSolver(const GridShape& shape) : box_(make_box(shape)) {
    if (box_.rank == 0) return;
    forward_ = std::make_unique<CufftPlan>(box_, Cufft<Real>::r2c);
    inverse_ = std::make_unique<CufftPlan>(box_, Cufft<Real>::c2r);
    const std::size_t spectrum_bytes =
        static_cast<std::size_t>(box_.half_size()) * sizeof(Complex<Real>);
    const std::size_t work_offset = (spectrum_bytes + 255) / 256 * 256;
    // The transforms run one after the other on one stream: one work area serves both.
    buffer_ = cuda::DeviceBuffer<unsigned char>(
        work_offset + std::max(forward_->work_bytes(), inverse_->work_bytes()));
    spectrum_ = reinterpret_cast<Complex<Real>*>(buffer_.data());
    work_ = buffer_.data() + work_offset;
    constexpr double two_pi = 2 * std::numbers::pi;
    scale_ = {two_pi / box_.lx, two_pi / box_.ly, two_pi / box_.lz,
              1.0 / static_cast<double>(box_.size())};
  }

  void solve(const Real* f, Real* u, StreamHandle stream) override {
    if (box_.rank == 0) return zero_solution(u, box_.size(), stream);
    forward_->bind(work_, stream);
    inverse_->bind(work_, stream);
    // An out-of-place real-to-complex transform leaves its input as it was.
    GPUKIT_CUFFT_CHECK(
        Cufft<Real>::real_to_complex(forward_->handle(), const_cast<Real*>(f), spectrum_));
    const std::int64_t half_x = box_.half_x();
    if constexpr (kind == Kind::r2c) {
      const dim3 block(kBlockX, kBlockY);
      const dim3 grid(static_cast<unsigned>((half_x + kBlockX - 1) / kBlockX),
                      static_cast<unsigned>((box_.ny + kBlockY - 1) / kBlockY),
                      static_cast<unsigned>(box_.nz));
      solve_half_spectrum<Real><<<grid, block, 0, stream>>>(spectrum_, static_cast<int>(half_x),
                                                            static_cast<int>(box_.ny),
                                                            static_cast<int>(box_.nz), scale_);
      GPUKIT_CUDA_CHECK_LAUNCH("solve_half_spectrum");
    } else {
      const int threads = 256;
      const std::int64_t blocks =
          std::min<std::int64_t>((box_.half_size() + threads - 1) / threads, std::int64_t{1} << 20);
      scale_flat<Real><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
          spectrum_, box_.half_size(), half_x, box_.ny, box_.nz, scale_);
      GPUKIT_CUDA_CHECK_LAUNCH("scale_flat");
    }
    GPUKIT_CUFFT_CHECK(Cufft<Real>::complex_to_real(inverse_->handle(), spectrum_, u));
  }

 private:
  Box box_;
  std::unique_ptr<CufftPlan> forward_, inverse_;
  cuda::DeviceBuffer<unsigned char> buffer_;
  Complex<Real>* spectrum_ = nullptr;
  void* work_ = nullptr;
  SpectrumScale scale_{};
};

}  // namespace

bool r2c_supports(const GridShape& shape) { return box_fits_launch(make_box(shape), kBlockY); }
bool cufft_supports(const GridShape& shape) {
  return make_box(shape).size() < std::numeric_limits<int>::max();
}

template <class Real>
std::size_t r2c_device_bytes(const GridShape& shape) {
  return half_spectrum_bytes<Real>(shape);
}
template <class Real>
std::size_t cufft_device_bytes(const GridShape& shape) {
  return half_spectrum_bytes<Real>(shape);
}
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_r2c_solver(const GridShape& shape) {
  return std::make_unique<HalfSpectrumSolver<Real, Kind::r2c>>(shape);
}
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_cufft_solver(const GridShape& shape) {
  return std::make_unique<HalfSpectrumSolver<Real, Kind::cufft>>(shape);
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, r2c_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_r2c_solver)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, cufft_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_cufft_solver)

}  // namespace gpukit::pde::cuda_detail
