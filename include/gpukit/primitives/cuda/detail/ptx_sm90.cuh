#pragma once
// Internal: sm_90's PTX for exact_scan_sm90: shared-memory mbarriers, bulk copies completing
// on them under an L2 eviction policy, and named barriers.

#include <cuda_runtime.h>

namespace gpukit::primitives::device::detail {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
// Built for an older GPU too: the kernels that use these exist there but never run (their launch
// checks the binary's architecture); the instructions below are sm_90's.
#define GPUKIT_DETAIL_SM90_UNAVAILABLE 1
#endif

__device__ __forceinline__ unsigned shared_address(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}
__device__ __forceinline__ void barrier_init(unsigned long long* barrier, unsigned arrivals) {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)),
               "r"(arrivals)
               : "memory");
#endif
}
__device__ __forceinline__ void barrier_arrive(unsigned long long* barrier) {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier))
               : "memory");
#endif
}
__device__ __forceinline__ void barrier_arrive_expect_bytes(unsigned long long* barrier,
                                                            unsigned bytes) {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(
                   shared_address(barrier)),
               "r"(bytes)
               : "memory");
#endif
}
/// Waits for the phase of parity `parity` to complete. A wait is only meaningful for the phase
/// in progress or the one before, so every waiter below waits for every phase of its barriers.
__device__ __forceinline__ void barrier_wait(unsigned long long* barrier, unsigned parity) {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  unsigned done = 0;
  while (done == 0) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
  }
#else
  __trap();
#endif
}
/// An L2 eviction policy for bulk copies: evict-last for a tile's first copy (it is read again
/// kLag tiles later), evict-first for the second (never read again).
__device__ __forceinline__ unsigned long long l2_policy(bool keep) {
  unsigned long long policy = 0;
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  if (keep) {
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  } else {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  }
#endif
  return policy;
}
/// Copies `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to shared memory
/// under the L2 policy `policy`, completing on `barrier`'s transaction count.
__device__ __forceinline__ void bulk_copy(void* shared_destination, const void* global_source,
                                          unsigned bytes, unsigned long long* barrier,
                                          unsigned long long policy) {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], "
      "[%1], %2, [%3], %4;" ::"r"(shared_address(shared_destination)),
      "l"(global_source), "r"(bytes), "r"(shared_address(barrier)), "l"(policy)
      : "memory");
#endif
}
/// A barrier among kThreads threads of the block (named barrier 1; 0 is __syncthreads').
template <int kThreads>
__device__ __forceinline__ void named_barrier_sync() {
  asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
}

/// Makes the mbarrier initialisations visible to the bulk copies (the async proxy).
__device__ __forceinline__ void fence_barrier_init() {
#ifndef GPUKIT_DETAIL_SM90_UNAVAILABLE
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

}  // namespace gpukit::primitives::device::detail
