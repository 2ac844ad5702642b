// The kernels of the distributed Poisson solver's CUDA engine (poisson_slab_kernels.hpp).

#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "core/cuda/check.hpp"
#include "gpukit/primitives/cuda/detail/reduce_agent.cuh"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "scale_out/cuda/poisson_slab_kernels.hpp"

namespace gpukit::scale_out::slab_kernels {

namespace {

namespace canonical = primitives::canonical;

template <class Real>
struct ComplexOf;
template <>
struct ComplexOf<float> {
  using type = cufftComplex;
};
template <>
struct ComplexOf<double> {
  using type = cufftDoubleComplex;
};

// u_hat = -f_hat / (n |k|^2) over B = (n0, columns, T), zero mode 0; |k|^2 summed in the serial
// CPU backend's order, the multiplier computed in double and rounded once. Blocks stride over the
// rows of axis 0 (blockIdx.y) and over each row's columns * T values (an Index: 32-bit where a
// row has fewer than 2^31 values, so the split of an index into (column, z) is a 32-bit division).
template <class Complex, class Real, class Index>
__global__ void scale_slab_kernel(Complex* __restrict__ b, std::int64_t n0, Index row, Index t,
                                  std::int64_t column_begin, const double* __restrict__ k2_axis0,
                                  const double* __restrict__ k2_split,
                                  const double* __restrict__ k2_trailing, double inv_n) {
  for (std::int64_t x = blockIdx.y; x < n0; x += gridDim.y) {
    const double kx = k2_axis0[x];
    Complex* line = b + x * static_cast<std::int64_t>(row);
    for (Index i = Index(blockIdx.x) * blockDim.x + threadIdx.x; i < row;
         i += Index(gridDim.x) * blockDim.x) {
      const Index y = i / t, z = i - y * t;
      const double k2 = k2_trailing[z] + (k2_split[column_begin + y] + kx);
      const Real scale = k2 > 0 ? static_cast<Real>(-inv_n / k2) : Real(0);
      Complex c = line[i];
      c.x *= scale;
      c.y *= scale;
      line[i] = c;
    }
  }
}

// Rows of complex values (a Vector: float2 or double2, one complex each) from one pitch to
// another; blocks stride over the rows (blockIdx.y) and over each row's values, four per thread
// in flight.
template <class Vector>
__global__ void copy_rows_kernel(Vector* __restrict__ destination, std::int64_t destination_pitch,
                                 const Vector* __restrict__ source, std::int64_t source_pitch,
                                 std::int64_t width, std::int64_t height) {
  constexpr int kUnroll = 4;
  for (std::int64_t y = blockIdx.y; y < height; y += gridDim.y) {
    const Vector* from = source + y * source_pitch;
    Vector* to = destination + y * destination_pitch;
    const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
    std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
    for (; i + (kUnroll - 1) * stride < width; i += kUnroll * stride) {
      Vector v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(from + i + u * stride);
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) to[i + u * stride] = v[u];
    }
    for (; i < width; i += stride) to[i] = __ldg(from + i);
  }
}

template <class Real>
__global__ void subtract_kernel(Real* __restrict__ u, std::int64_t n, Real shift) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    u[i] -= shift;
}

int grid_for(std::int64_t n, int threads) {
  return static_cast<int>(std::clamp<std::int64_t>((n + threads - 1) / threads, 1, 132 * 32));
}

}  // namespace

template <class Real>
void scale(void* b, std::int64_t n0, std::int64_t columns, std::int64_t t,
           std::int64_t column_begin, const double* k2_axis0, const double* k2_split,
           const double* k2_trailing, double inv_n, StreamHandle stream) {
  using C = typename ComplexOf<Real>::type;
  const std::int64_t row = columns * t;
  if (n0 == 0 || row == 0) return;
  constexpr int kThreads = 256;
  // Enough blocks along a row to cover it (up to 1024), enough rows for about 64 blocks per SM.
  const auto along =
      static_cast<unsigned>(std::min<std::int64_t>((row + kThreads - 1) / kThreads, 1024));
  const auto rows = static_cast<unsigned>(std::clamp<std::int64_t>(
      132 * 64 / static_cast<std::int64_t>(along), 1, std::min<std::int64_t>(n0, 65535)));
  const dim3 grid(along, rows);
  if (row < (std::int64_t{1} << 31)) {  // (i + stride stays below 2^32: no wrap-around)
    scale_slab_kernel<C, Real, std::uint32_t><<<grid, kThreads, 0, stream>>>(
        static_cast<C*>(b), n0, static_cast<std::uint32_t>(row), static_cast<std::uint32_t>(t),
        column_begin, k2_axis0, k2_split, k2_trailing, inv_n);
  } else {
    scale_slab_kernel<C, Real, std::uint64_t><<<grid, kThreads, 0, stream>>>(
        static_cast<C*>(b), n0, static_cast<std::uint64_t>(row), static_cast<std::uint64_t>(t),
        column_begin, k2_axis0, k2_split, k2_trailing, inv_n);
  }
  GPUKIT_CUDA_CHECK_LAUNCH("scale_slab_kernel");
}

template <class Real>
void tile_sums(const Real* tiles_begin, std::int64_t tiles, std::int64_t first_element,
               std::int64_t total, pde::detail::MeanSums* out, StreamHandle stream) {
  if (tiles == 0) return;
  namespace agent = primitives::device::detail::reduce_agent;
  using Op = pde::detail::MeanSumsOp<Real>;
  using Finish = agent::StoreRoot<pde::detail::MeanSums>;  // never called: no done counter
  constexpr int kThreads = 512;
  const auto kernel = agent::reduce_canonical_kernel<kThreads, Op, Finish>;
  int device = 0, sm_count = 0, per_sm = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device));
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  // The part's whole tiles; the array's last tile may be short (a part reaching the end).
  const std::int64_t count = std::min(tiles * canonical::kTile, total - first_element);
  const agent::LaunchPlan plan =
      agent::plan_launch(tiles, std::int64_t{sm_count} * per_sm, 0, /*single_launch=*/false);
  const bool aligned = reinterpret_cast<std::uintptr_t>(tiles_begin) % 16 == 0;
  kernel<<<static_cast<unsigned>(plan.grid), kThreads, 0, stream>>>(
      tiles_begin, count, aligned, out, 0, tiles, nullptr, false,
      primitives::device::detail::FlaggedRegion<pde::detail::MeanSums>{}, Op{}, Finish{nullptr});
  GPUKIT_CUDA_CHECK_LAUNCH("reduce_canonical_kernel (poisson mean tiles)");
}

template <class Real>
void copy_rows(void* destination, std::int64_t destination_pitch, const void* source,
               std::int64_t source_pitch, std::int64_t width, std::int64_t height,
               StreamHandle stream) {
  using Vector = std::conditional_t<std::is_same_v<Real, float>, float2, double2>;
  if (width == 0 || height == 0) return;
  constexpr int kThreads = 256;
  // Enough blocks along a row to cover it four values a thread (up to 256), enough rows for about
  // 32 blocks per SM.
  const auto along = static_cast<unsigned>(
      std::clamp<std::int64_t>((width + 4 * kThreads - 1) / (4 * kThreads), 1, 256));
  const auto rows = static_cast<unsigned>(std::clamp<std::int64_t>(
      132 * 32 / static_cast<std::int64_t>(along), 1, std::min<std::int64_t>(height, 65535)));
  copy_rows_kernel<Vector><<<dim3(along, rows), kThreads, 0, stream>>>(
      static_cast<Vector*>(destination), destination_pitch, static_cast<const Vector*>(source),
      source_pitch, width, height);
  GPUKIT_CUDA_CHECK_LAUNCH("copy_rows_kernel");
}

template <class Real>
void subtract(Real* u, std::int64_t n, Real shift, StreamHandle stream) {
  if (n == 0) return;
  subtract_kernel<Real><<<grid_for(n, 256), 256, 0, stream>>>(u, n, shift);
  GPUKIT_CUDA_CHECK_LAUNCH("subtract_kernel");
}

#define GPUKIT_SLAB_KERNELS(Real)                                                               \
  template void scale<Real>(void*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,      \
                            const double*, const double*, const double*, double, StreamHandle); \
  template void tile_sums<Real>(const Real*, std::int64_t, std::int64_t, std::int64_t,          \
                                pde::detail::MeanSums*, StreamHandle);                          \
  template void copy_rows<Real>(void*, std::int64_t, const void*, std::int64_t, std::int64_t,   \
                                std::int64_t, StreamHandle);                                    \
  template void subtract<Real>(Real*, std::int64_t, Real, StreamHandle);
GPUKIT_SLAB_KERNELS(float)
GPUKIT_SLAB_KERNELS(double)
#undef GPUKIT_SLAB_KERNELS

}  // namespace gpukit::scale_out::slab_kernels
