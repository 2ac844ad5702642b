// Element-wise kernels over the header-only rng functions (Philox, AS241, Box-Muller) at inputs
// the caller chooses: the GPU tests check the device's arithmetic against the CPU's with them.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "gpukit/rng/normal.hpp"
#include "gpukit/rng/philox.hpp"
#include "rng/cuda/rng_launchers.hpp"

namespace gpukit::rng::cuda_detail {

namespace {

constexpr int kThreadsPerBlock = 256;

unsigned grid_for(std::int64_t count) {
  return static_cast<unsigned>(
      std::min<std::int64_t>((count + kThreadsPerBlock - 1) / kThreadsPerBlock, 65535));
}

__device__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

__global__ void philox_kernel(const Uint32x4* counters, const Uint32x2* keys, Uint32x4* out,
                              std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    out[i] = philox4x32_10(counters[i], keys[i]);
  }
}

template <class Real>
__global__ void inverse_normal_cdf_kernel(const Real* p, Real* x, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    x[i] = inverse_normal_cdf(p[i]);
  }
}

template <class Real>
__global__ void box_muller_kernel(const Real* u1, const Real* u2, Real* first, Real* second,
                                  std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const NormalPair<Real> z = box_muller(u1[i], u2[i]);
    first[i] = z.first;
    second[i] = z.second;
  }
}

}  // namespace

void launch_philox4x32_10(const Uint32x4* counters, const Uint32x2* keys, Uint32x4* out,
                          std::int64_t count, StreamHandle stream) {
  if (count <= 0) return;
  philox_kernel<<<grid_for(count), kThreadsPerBlock, 0, stream>>>(counters, keys, out, count);
  GPUKIT_CUDA_CHECK_LAUNCH("philox_kernel");
}

template <class Real>
void launch_inverse_normal_cdf(const Real* p, Real* x, std::int64_t count, StreamHandle stream) {
  if (count <= 0) return;
  inverse_normal_cdf_kernel<Real><<<grid_for(count), kThreadsPerBlock, 0, stream>>>(p, x, count);
  GPUKIT_CUDA_CHECK_LAUNCH("inverse_normal_cdf_kernel");
}

template <class Real>
void launch_box_muller(const Real* u1, const Real* u2, Real* first, Real* second,
                       std::int64_t count, StreamHandle stream) {
  if (count <= 0) return;
  box_muller_kernel<Real>
      <<<grid_for(count), kThreadsPerBlock, 0, stream>>>(u1, u2, first, second, count);
  GPUKIT_CUDA_CHECK_LAUNCH("box_muller_kernel");
}

template void launch_inverse_normal_cdf<float>(const float*, float*, std::int64_t, StreamHandle);
template void launch_inverse_normal_cdf<double>(const double*, double*, std::int64_t, StreamHandle);
template void launch_box_muller<float>(const float*, const float*, float*, float*, std::int64_t,
                                       StreamHandle);
template void launch_box_muller<double>(const double*, const double*, double*, double*,
                                        std::int64_t, StreamHandle);

}  // namespace gpukit::rng::cuda_detail
