#pragma once
// Internal: the PTX the engines need that CUDA C++ does not spell (any GPU the library builds
// for): relaxed, acquire and release accesses at GPU scope for the tile status, cp.async copies
// for the tile loads, and loads through L2 for values other blocks of the launch wrote.

#include <cuda_runtime.h>

#include <cstring>

namespace gpukit::primitives::device::detail {

// --- GPU-scope status accesses ---------------------------------------------------------------

/// A relaxed 8-byte store at GPU scope (a whole aligned word is single-copy atomic).
__device__ __forceinline__ void store_relaxed_gpu(unsigned long long* address,
                                                  unsigned long long word) {
  asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(address), "l"(word) : "memory");
}

/// A relaxed 8-byte load at GPU scope.
__device__ __forceinline__ unsigned long long load_relaxed_gpu(const unsigned long long* address) {
  unsigned long long word;
  asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(word) : "l"(address) : "memory");
  return word;
}

/// A release store of a 4-byte flag at GPU scope: what the thread wrote before is visible to
/// whoever acquires the flag.
__device__ __forceinline__ void store_release_gpu(unsigned* address, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(address), "r"(value) : "memory");
}

/// An acquire load of a 4-byte flag at GPU scope.
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* address) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(address) : "memory");
  return value;
}

// --- asynchronous copies (cp.async, sm_80) -----------------------------------------------------

__device__ __forceinline__ void cp_async_16(void* shared, const void* global) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(address), "l"(global) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}
/// Waits for all but the most recent group of this thread's copies.
__device__ __forceinline__ void cp_async_wait_previous() {
  asm volatile("cp.async.wait_group 1;" ::: "memory");
}

__device__ __forceinline__ void cp_async_wait_all() {
  asm volatile("cp.async.wait_all;" ::: "memory");
}

/// Waits until at most `kPending` of this thread's most recent copy groups are in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(kPending) : "memory");
}

// --- loads of values other blocks wrote --------------------------------------------------------

/// Reads a value another block wrote in this launch: through L2 (ld.global.cg), never a stale L1.
template <class T>
__device__ __forceinline__ T load_through_l2(const T* p) {
  static_assert(sizeof(T) % 4 == 0, "values must be a multiple of 4 bytes");
  constexpr int kWords = sizeof(T) / 4;
  unsigned words[kWords];
  const auto* source = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __ldcg(source + w);
  T result;
  std::memcpy(&result, words, sizeof(T));
  return result;
}

}  // namespace gpukit::primitives::device::detail
