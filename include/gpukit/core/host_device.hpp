#pragma once
// Marks functions compiled for both the CPU (g++) and the GPU (nvcc), so the CPU
// reference and the kernels share one body of arithmetic.

#if defined(__CUDACC__)
#define GPUKIT_HD __host__ __device__
#define GPUKIT_HD_INLINE __host__ __device__ __forceinline__
#else
#define GPUKIT_HD
#define GPUKIT_HD_INLINE inline
#endif
