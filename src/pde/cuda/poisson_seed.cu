// The seed's spectral Poisson pipeline (000, slides 44-52) and its optimization steps (slides
// 56-62), in float and double, for 2D and 3D grids: complex-to-complex cuFFT transforms on the
// full grid, as the seed wrote it ("we are not taking advantage of the symmetries").
//
// Kernels use the seed's 2D blocks (32 x 16 threads: x along the contiguous axis, y along the
// next one) and one grid layer per index of a third axis. Two deliberate departures from the
// slides: the zero mode is set to 0 (the seed's `scale = 1` kludge left mean(f) in u's zero mode
// for its corner gauge to remove; the plan applies the gauge), and the shared-memory kernel of
// slide 58 is written the way it was meant (each thread of the block's first row/column stages
// one wave number; the slide's `threadIdx.x < 1` stages only one).

#include <memory>
#include <vector>

#include "core/cuda/check.hpp"
#include "gpukit/core/memory.hpp"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_device_solver.hpp"

namespace gpukit::pde::cuda_detail {

namespace {

constexpr int kBlockX = 32, kBlockY = 16;  // the seed's dimBlock(32, 16)

enum class Step { seed, shared_k, coalesced };

template <class Real>
using Complex = typename Cufft<Real>::Complex;

// slide 50 (and 59-60: one 8- or 16-byte store instead of two scalar ones).
template <Step step, class Real>
__global__ void real2complex(const Real* __restrict__ a, Complex<Real>* __restrict__ c, int nx,
                             int ny) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int idy = blockIdx.y * blockDim.y + threadIdx.y;
  if (idx < nx && idy < ny) {
    const std::int64_t index = (std::int64_t{blockIdx.z} * ny + idy) * nx + idx;
    if constexpr (step == Step::coalesced) {
      c[index] = Complex<Real>{a[index], Real(0)};
    } else {
      c[index].x = a[index];
      c[index].y = Real(0);
    }
  }
}

// slide 51: the wave numbers from global memory, one division per element.
template <class Real>
__global__ void solve_poisson_seed(Complex<Real>* c, const Real* kx, const Real* ky, const Real* kz,
                                   int nx, int ny) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int idy = blockIdx.y * blockDim.y + threadIdx.y;
  const int idz = blockIdx.z;
  if (idx < nx && idy < ny) {
    const std::int64_t index = (std::int64_t{idz} * ny + idy) * nx + idx;
    Real scale = -(kx[idx] * kx[idx] + ky[idy] * ky[idy] + kz[idz] * kz[idz]);
    scale = (idx == 0 && idy == 0 && idz == 0) ? Real(0) : Real(1) / scale;
    c[index].x *= scale;
    c[index].y *= scale;
  }
}

// slide 58: the block's wave numbers staged once in shared memory; __umul24 for the block
// offsets (exact: the grid's x and y extents are below 2^24, see supports). With `coalesced`
// (slides 59-62) each complex element moves as one vector load and one vector store.
template <Step step, class Real>
__global__ void solve_poisson_shared_k(Complex<Real>* c, const Real* kx, const Real* ky,
                                       const Real* kz, int nx, int ny) {
  __shared__ Real kx_s[kBlockX], ky_s[kBlockY];
  const unsigned idx = __umul24(blockIdx.x, blockDim.x) + threadIdx.x;
  const unsigned idy = __umul24(blockIdx.y, blockDim.y) + threadIdx.y;
  const unsigned idz = blockIdx.z;
  if (threadIdx.y == 0) kx_s[threadIdx.x] = idx < unsigned(nx) ? kx[idx] : Real(0);
  if (threadIdx.x == 0) ky_s[threadIdx.y] = idy < unsigned(ny) ? ky[idy] : Real(0);
  __syncthreads();
  if (idx < unsigned(nx) && idy < unsigned(ny)) {
    const std::int64_t index = (std::int64_t{idz} * ny + idy) * nx + idx;
    const Real k_z = kz[idz];  // one address per block: a broadcast
    Real scale = -(kx_s[threadIdx.x] * kx_s[threadIdx.x] + ky_s[threadIdx.y] * ky_s[threadIdx.y] +
                   k_z * k_z);
    scale = (idx == 0 && idy == 0 && idz == 0) ? Real(0) : Real(1) / scale;
    if constexpr (step == Step::coalesced) {
      Complex<Real> v = c[index];
      v.x *= scale;
      v.y *= scale;
      c[index] = v;
    } else {
      c[index].x *= scale;
      c[index].y *= scale;
    }
  }
}

// slide 52 (and 60: the whole complex element read as one vector load; the slide needed
// `volatile` to stop the compiler from narrowing it to the real part).
template <Step step, class Real>
__global__ void complex2real_scaled(const Complex<Real>* __restrict__ c, Real* __restrict__ a,
                                    int nx, int ny, Real scale) {
  const int idx = blockIdx.x * blockDim.x + threadIdx.x;
  const int idy = blockIdx.y * blockDim.y + threadIdx.y;
  if (idx < nx && idy < ny) {
    const std::int64_t index = (std::int64_t{blockIdx.z} * ny + idy) * nx + idx;
    if constexpr (step == Step::coalesced) {
      const Complex<Real> v = c[index];
      a[index] = scale * v.x;
    } else {
      a[index] = scale * c[index].x;
    }
  }
}

bool seed_box_supported(const GridShape& shape) {
  const Box b = make_box(shape);
  return box_fits_launch(b, kBlockY);
}

template <class Real>
std::size_t seed_bytes(const GridShape& shape) {
  const Box b = make_box(shape);
  if (b.rank == 0) return 0;
  return static_cast<std::size_t>(b.size()) * sizeof(Complex<Real>) +
         static_cast<std::size_t>(b.nx + b.ny + b.nz) * sizeof(Real) +
         cufft_work_estimate(b, Cufft<Real>::c2c);
}

template <class Real, Step step>
class SeedSolver final : public DeviceSolver<Real> {
 public:
  explicit SeedSolver(const GridShape& shape) : box_(make_box(shape)) {
    if (box_.rank == 0) return;
    // Allocation order: plan first (its work size is then exact), then one buffer for all.
    plan_ = std::make_unique<CufftPlan>(box_, Cufft<Real>::c2c);
    const std::size_t complex_bytes = static_cast<std::size_t>(box_.size()) * sizeof(Complex<Real>);
    const std::size_t k_bytes =
        static_cast<std::size_t>(box_.nx + box_.ny + box_.nz) * sizeof(Real);
    const std::size_t k_offset = complex_bytes;
    const std::size_t work_offset = (k_offset + k_bytes + 255) / 256 * 256;
    buffer_ = cuda::DeviceBuffer<unsigned char>(work_offset + plan_->work_bytes());
    complex_ = reinterpret_cast<Complex<Real>*>(buffer_.data());
    k_ = reinterpret_cast<Real*>(buffer_.data() + k_offset);
    work_ = buffer_.data() + work_offset;
    // The wave-number tables (slide 45's kx, ky; kz for 3D), computed in double, rounded once.
    std::vector<Real> k;
    for (std::int64_t j = 0; j < box_.nx; ++j) k.push_back(Real(wave_number(j, box_.nx, box_.lx)));
    for (std::int64_t j = 0; j < box_.ny; ++j) k.push_back(Real(wave_number(j, box_.ny, box_.ly)));
    for (std::int64_t j = 0; j < box_.nz; ++j) k.push_back(Real(wave_number(j, box_.nz, box_.lz)));
    cuda::copy_to_device(k_, k.data(), k.size() * sizeof(Real));
  }

  void solve(const Real* f, Real* u, StreamHandle stream) override {
    if (box_.rank == 0) return zero_solution(u, box_.size(), stream);
    const int nx = static_cast<int>(box_.nx), ny = static_cast<int>(box_.ny);
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid(static_cast<unsigned>((nx + kBlockX - 1) / kBlockX),
                    static_cast<unsigned>((ny + kBlockY - 1) / kBlockY),
                    static_cast<unsigned>(box_.nz));
    const Real* kx = k_;
    const Real* ky = k_ + box_.nx;
    const Real* kz = ky + box_.ny;
    plan_->bind(work_, stream);
    real2complex<step, Real><<<grid, block, 0, stream>>>(f, complex_, nx, ny);
    GPUKIT_CUDA_CHECK_LAUNCH("real2complex");
    GPUKIT_CUFFT_CHECK(Cufft<Real>::forward(plan_->handle(), complex_, complex_));
    if constexpr (step == Step::seed) {
      solve_poisson_seed<Real><<<grid, block, 0, stream>>>(complex_, kx, ky, kz, nx, ny);
    } else {
      solve_poisson_shared_k<step, Real><<<grid, block, 0, stream>>>(complex_, kx, ky, kz, nx, ny);
    }
    GPUKIT_CUDA_CHECK_LAUNCH("solve_poisson");
    GPUKIT_CUFFT_CHECK(Cufft<Real>::inverse(plan_->handle(), complex_, complex_));
    const Real scale = Real(1) / static_cast<Real>(box_.size());
    complex2real_scaled<step, Real><<<grid, block, 0, stream>>>(complex_, u, nx, ny, scale);
    GPUKIT_CUDA_CHECK_LAUNCH("complex2real_scaled");
  }

 private:
  Box box_;
  std::unique_ptr<CufftPlan> plan_;
  cuda::DeviceBuffer<unsigned char> buffer_;
  Complex<Real>* complex_ = nullptr;
  Real* k_ = nullptr;
  void* work_ = nullptr;
};

}  // namespace

bool seed_supports(const GridShape& shape) { return seed_box_supported(shape); }
// __umul24 needs the x and y extents below 2^24.
bool seed_shared_k_supports(const GridShape& shape) {
  const Box b = make_box(shape);
  return seed_box_supported(shape) && b.nx < (1 << 24) && b.ny < (1 << 24);
}
bool seed_coalesced_supports(const GridShape& shape) { return seed_shared_k_supports(shape); }

template <class Real>
std::size_t seed_device_bytes(const GridShape& shape) {
  return seed_bytes<Real>(shape);
}
template <class Real>
std::size_t seed_shared_k_device_bytes(const GridShape& shape) {
  return seed_bytes<Real>(shape);
}
template <class Real>
std::size_t seed_coalesced_device_bytes(const GridShape& shape) {
  return seed_bytes<Real>(shape);
}

template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_seed_solver(const GridShape& shape) {
  return std::make_unique<SeedSolver<Real, Step::seed>>(shape);
}
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_seed_shared_k_solver(const GridShape& shape) {
  return std::make_unique<SeedSolver<Real, Step::shared_k>>(shape);
}
template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_seed_coalesced_solver(const GridShape& shape) {
  return std::make_unique<SeedSolver<Real, Step::coalesced>>(shape);
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, seed_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_seed_solver)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, seed_shared_k_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_seed_shared_k_solver)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, seed_coalesced_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_seed_coalesced_solver)

}  // namespace gpukit::pde::cuda_detail
