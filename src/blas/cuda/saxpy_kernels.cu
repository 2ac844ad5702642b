// The SAXPY / DAXPY ladder, each step one idea on top of the previous one:
//   seed           the seed's kernel as written: one element a thread, an int index, a grid of
//                  ceil(n / 256) blocks;
//   grid-stride    a grid sized from the SM count (as many blocks as fit at once), each thread
//                  looping over the array with a 64-bit index;
//   vector16       16-byte loads and stores (float4 / double2), the unaligned head and tail
//                  elements done one by one;
//   vector16-unrolled
//                  four 16-byte loads of x and four of y per thread issued before any store, so
//                  that each thread has 128 bytes in flight to cover the DRAM latency.
// SAXPY is memory-bound (2 flops per 12 or 24 bytes): every step after the first is about keeping
// enough bytes in flight, not about arithmetic. Each output is one fused multiply-add
// (saxpy_reference.hpp's AxpyRounding::fused).

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "blas/cuda/saxpy_launchers.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/launch_shape.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

// Spelled out rather than left to nvcc's contraction of a * x + y, so that the rounding is one
// FMA whatever -fmad says.
__device__ __forceinline__ float fused_axpy(float a, float x, float y) {
  return __fmaf_rn(a, x, y);
}
__device__ __forceinline__ double fused_axpy(double a, double x, double y) {
  return __fma_rn(a, x, y);
}
__device__ __forceinline__ float4 fused_axpy(float a, float4 x, float4 y) {
  return make_float4(__fmaf_rn(a, x.x, y.x), __fmaf_rn(a, x.y, y.y), __fmaf_rn(a, x.z, y.z),
                     __fmaf_rn(a, x.w, y.w));
}
__device__ __forceinline__ double2 fused_axpy(double a, double2 x, double2 y) {
  return make_double2(__fma_rn(a, x.x, y.x), __fma_rn(a, x.y, y.y));
}

// One 16-byte vector of T.
template <class T>
using vec16_t = std::conditional_t<std::is_same_v<T, float>, float4, double2>;
template <class T>
constexpr int kLanes = 16 / sizeof(T);
static_assert(sizeof(vec16_t<float>) == 16 && sizeof(vec16_t<double>) == 16);

// ---- seed: "End-to-End Example: SAXPY" (seed 003), as written but for the output pointer.

constexpr int kSeedThreads = 256;  // the classic SAXPY launch: (n + 255) / 256 blocks of 256

template <class T>
__global__ void axpy_seed_kernel(int n, T a, const T* x, const T* y, T* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  // nvcc contracts this into one FMA (its default, --fmad=true, which this build never turns
  // off); the seed wrote y[i] = a*x[i] + y[i].
  if (i < n) out[i] = a * x[i] + y[i];
}

// ---- grid-stride: a grid sized from the SM count.

struct GridStridePolicy {
  static constexpr int threads = 256;
};

template <class T>
__global__ void axpy_grid_stride_kernel(std::int64_t n, T a, const T* x, const T* y, T* out) {
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = fused_axpy(a, x[i], y[i]);
}

// ---- vector16 and vector16-unrolled: 16-byte accesses.

// The elements outside the aligned vectors: `head` before the first one, the rest after the last
// (fewer than 2 x kLanes in all), one a thread of the grid's first threads.
template <class T>
__device__ __forceinline__ void axpy_scalar_edges(std::int64_t n, std::int64_t head,
                                                  std::int64_t vectors, T a, const T* x, const T* y,
                                                  T* out) {
  const std::int64_t thread = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t tail_begin = head + vectors * kLanes<T>;
  if (thread < head + (n - tail_begin)) {
    const std::int64_t i = thread < head ? thread : tail_begin + (thread - head);
    out[i] = fused_axpy(a, x[i], y[i]);
  }
}

struct Vector16Policy {
  static constexpr int threads = 256;
};

// x + head, y + head and out + head are 16-byte aligned (the launcher checks).
template <class T>
__global__ void axpy_vector16_kernel(std::int64_t n, std::int64_t head, T a, const T* x, const T* y,
                                     T* out) {
  using V = vec16_t<T>;
  const std::int64_t vectors = (n - head) / kLanes<T>;
  const V* xv = reinterpret_cast<const V*>(x + head);
  const V* yv = reinterpret_cast<const V*>(y + head);
  V* outv = reinterpret_cast<V*>(out + head);
  const std::int64_t stride = std::int64_t{gridDim.x} * blockDim.x;
  for (std::int64_t v = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; v < vectors;
       v += stride)
    outv[v] = fused_axpy(a, xv[v], yv[v]);
  axpy_scalar_edges(n, head, vectors, a, x, y, out);
}

// Not yet tuned on the GPU machine: 256 threads and 4 vectors of each input a thread (8 x 16 bytes
// in flight) is the usual starting point for a streaming kernel on Hopper; `gpukit bench saxpy`
// is where a change must show its worth.
struct Vector16UnrolledPolicy {
  static constexpr int threads = 256;
  static constexpr int vectors_per_thread = 4;
};

template <class T>
__global__ void axpy_vector16_unrolled_kernel(std::int64_t n, std::int64_t head, T a, const T* x,
                                              const T* y, T* out) {
  using V = vec16_t<T>;
  constexpr int kUnroll = Vector16UnrolledPolicy::vectors_per_thread;
  const std::int64_t vectors = (n - head) / kLanes<T>;
  const V* xv = reinterpret_cast<const V*>(x + head);
  const V* yv = reinterpret_cast<const V*>(y + head);
  V* outv = reinterpret_cast<V*>(out + head);
  // A block's tile: kUnroll x blockDim vectors, vector k of a thread at k x blockDim + threadIdx,
  // so that each of the kUnroll loads of a warp is one coalesced 512-byte access.
  const std::int64_t tile = std::int64_t{blockDim.x} * kUnroll;
  for (std::int64_t base = std::int64_t{blockIdx.x} * tile; base < vectors;
       base += std::int64_t{gridDim.x} * tile) {
    V xs[kUnroll] = {}, ys[kUnroll] = {};  // (kUnroll) 16-byte values of x and of y
    // Every load first, then every store: all 2 x kUnroll loads are in flight before the thread
    // waits. (The compiler cannot move a store above a later load: out may be y.)
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t v = base + k * blockDim.x + threadIdx.x;
      if (v < vectors) {
        xs[k] = xv[v];
        ys[k] = yv[v];
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t v = base + k * blockDim.x + threadIdx.x;
      if (v < vectors) outv[v] = fused_axpy(a, xs[k], ys[k]);
    }
  }
  axpy_scalar_edges(n, head, vectors, a, x, y, out);
}

// Blocks for a grid-stride kernel: as many as are resident at once on the device, but no more
// than the work has (`work_per_block` items a block per pass), and at least one.
int resident_grid(const void* kernel, int threads, std::int64_t items, std::int64_t per_block) {
  const std::int64_t resident = std::int64_t{cuda::detail::current_sm_count()} *
                                cuda::detail::resident_blocks_per_sm(kernel, threads);
  const std::int64_t needed = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min(resident, needed)));
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Elements before x + head is 16-byte aligned; -1 when x, y and out are not equally misaligned
// (then no 16-byte access can serve all three).
template <class T>
std::int64_t vector_head(const T* x, const T* y, const T* out, std::int64_t n) {
  const std::uintptr_t offset = address(x) % 16;
  if (address(y) % 16 != offset || address(out) % 16 != offset) return -1;
  return std::min<std::int64_t>(n, static_cast<std::int64_t>((16 - offset) % 16 / sizeof(T)));
}

}  // namespace

template <class T>
void launch_axpy_seed(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                      StreamHandle stream) {
  // The seed's int index reaches 2^31 - 1: larger arrays go in pieces of 2^30 elements.
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  for (std::int64_t begin = 0; begin < count; begin += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - begin));
    axpy_seed_kernel<T><<<(n + kSeedThreads - 1) / kSeedThreads, kSeedThreads, 0, stream>>>(
        n, alpha, x + begin, y + begin, out + begin);
    GPUKIT_CUDA_CHECK_LAUNCH("axpy_seed_kernel");
  }
}

template <class T>
void launch_axpy_grid_stride(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                             StreamHandle stream) {
  if (count == 0) return;
  constexpr int kThreads = GridStridePolicy::threads;
  const int blocks = resident_grid(reinterpret_cast<const void*>(&axpy_grid_stride_kernel<T>),
                                   kThreads, count, kThreads);
  axpy_grid_stride_kernel<T><<<blocks, kThreads, 0, stream>>>(count, alpha, x, y, out);
  GPUKIT_CUDA_CHECK_LAUNCH("axpy_grid_stride_kernel");
}

template <class T>
void launch_axpy_vector16(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                          StreamHandle stream) {
  if (count == 0) return;
  const std::int64_t head = vector_head(x, y, out, count);
  if (head < 0) return launch_axpy_grid_stride(alpha, x, y, out, count, stream);
  constexpr int kThreads = Vector16Policy::threads;
  const std::int64_t vectors = (count - head) / kLanes<T>;
  const int blocks = resident_grid(reinterpret_cast<const void*>(&axpy_vector16_kernel<T>),
                                   kThreads, vectors, kThreads);
  axpy_vector16_kernel<T><<<blocks, kThreads, 0, stream>>>(count, head, alpha, x, y, out);
  GPUKIT_CUDA_CHECK_LAUNCH("axpy_vector16_kernel");
}

template <class T>
void launch_axpy_vector16_unrolled(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                                   StreamHandle stream) {
  if (count == 0) return;
  const std::int64_t head = vector_head(x, y, out, count);
  if (head < 0) return launch_axpy_grid_stride(alpha, x, y, out, count, stream);
  constexpr int kThreads = Vector16UnrolledPolicy::threads;
  const std::int64_t vectors = (count - head) / kLanes<T>;
  const int blocks =
      resident_grid(reinterpret_cast<const void*>(&axpy_vector16_unrolled_kernel<T>), kThreads,
                    vectors, std::int64_t{kThreads} * Vector16UnrolledPolicy::vectors_per_thread);
  axpy_vector16_unrolled_kernel<T><<<blocks, kThreads, 0, stream>>>(count, head, alpha, x, y, out);
  GPUKIT_CUDA_CHECK_LAUNCH("axpy_vector16_unrolled_kernel");
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, SaxpyLaunch, launch_axpy_seed)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, SaxpyLaunch, launch_axpy_grid_stride)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, SaxpyLaunch, launch_axpy_vector16)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, SaxpyLaunch, launch_axpy_vector16_unrolled)

}  // namespace gpukit::blas::cuda_detail
