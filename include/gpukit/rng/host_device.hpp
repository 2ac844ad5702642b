#pragma once
// Marks the rng functions that are compiled for the CPU (any C++ compiler) and for CUDA kernels
// (nvcc), so the CPU backend, the kernels and a user's own kernel share one body of arithmetic.
// Public headers may not include src/, hence this copy of core's GPUKIT_HD under an rng name.

#if defined(__CUDACC__)
#define GPUKIT_RNG_HD __host__ __device__ __forceinline__
#else
#define GPUKIT_RNG_HD inline
#endif
