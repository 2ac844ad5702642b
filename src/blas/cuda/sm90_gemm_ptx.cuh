#pragma once
// Internal: the Hopper (sm_90a) instructions of the warp-specialised GEMM kernels, as thin inline
// functions: shared-memory mbarriers (local and in a peer CTA of the cluster), TMA tile loads
// (cp.async.bulk.tensor, optionally multicast to the cluster), the wgmma fences and shared-memory
// matrix descriptors, register reallocation between warpgroups, and cluster helpers. Outside an
// sm_90a compilation each function compiles to nothing (or a trap where a result is expected):
// the kernels exist there but never run (the launcher checks the device).

#include <cuda_runtime.h>

#include <cstdint>

namespace gpukit::blas::cuda_detail::sm90 {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define GPUKIT_SM90A 1
#endif

__device__ __forceinline__ std::uint32_t shared_address(const void* pointer) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(pointer));
}

// ---------------------------------------------------------------------------------------------
// mbarriers.

__device__ __forceinline__ void barrier_init(std::uint64_t* barrier, std::uint32_t arrivals) {
#ifdef GPUKIT_SM90A
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)),
               "r"(arrivals)
               : "memory");
#endif
}

/// Makes barrier initialisations visible to the async proxy (TMA) and to the cluster's CTAs.
__device__ __forceinline__ void fence_barrier_init() {
#ifdef GPUKIT_SM90A
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/// One arrival that also announces `bytes` of TMA transactions the phase must wait for.
__device__ __forceinline__ void barrier_arrive_expect_bytes(std::uint64_t* barrier,
                                                            std::uint32_t bytes) {
#ifdef GPUKIT_SM90A
  asm volatile(
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)),
      "r"(bytes)
      : "memory");
#endif
}

__device__ __forceinline__ void barrier_arrive(std::uint64_t* barrier) {
#ifdef GPUKIT_SM90A
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier))
               : "memory");
#endif
}

/// One arrival on the barrier at the same shared-memory offset in CTA `cta_rank` of the cluster
/// (this CTA's own rank included), with release semantics at cluster scope.
__device__ __forceinline__ void barrier_arrive_cluster(std::uint64_t* barrier,
                                                       std::uint32_t cta_rank) {
#ifdef GPUKIT_SM90A
  asm volatile(
      "{\n .reg .b32 remote;\n"
      " mapa.shared::cluster.u32 remote, %0, %1;\n"
      " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}" ::"r"(
          shared_address(barrier)),
      "r"(cta_rank)
      : "memory");
#endif
}

/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void barrier_wait(std::uint64_t* barrier, std::uint32_t parity) {
#ifdef GPUKIT_SM90A
  std::uint32_t done = 0;
  while (done == 0) {
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(shared_address(barrier)), "r"(parity)
        : "memory");
  }
#else
  (void)barrier, (void)parity;
  __trap();
#endif
}

// ---------------------------------------------------------------------------------------------
// TMA.

/// Loads the box at (column, row) of a 2-D tensor map (column = the contiguous dimension) into
/// shared memory, completing `bytes` of transactions on `barrier`. Out-of-bounds elements are
/// written as zeros.
__device__ __forceinline__ void tma_load_2d(void* destination, const void* tensor_map,
                                            std::int32_t column, std::int32_t row,
                                            std::uint64_t* barrier) {
#ifdef GPUKIT_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];" ::"r"(shared_address(destination)),
      "l"(tensor_map), "r"(shared_address(barrier)), "r"(column), "r"(row)
      : "memory");
#endif
}

/// tma_load_2d into the same shared-memory offset of every CTA of the cluster in `cta_mask`,
/// each completing on its own barrier at `barrier`'s offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* destination, const void* tensor_map,
                                                      std::int32_t column, std::int32_t row,
                                                      std::uint64_t* barrier,
                                                      std::uint16_t cta_mask) {
#ifdef GPUKIT_SM90A
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      ".multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;" ::"r"(shared_address(destination)),
      "l"(tensor_map), "r"(shared_address(barrier)), "r"(column), "r"(row), "h"(cta_mask)
      : "memory");
#endif
}

/// Fetches a tensor map (a __grid_constant__ kernel parameter) into the constant cache before its
/// first use.
__device__ __forceinline__ void prefetch_tensor_map(const void* tensor_map) {
#ifdef GPUKIT_SM90A
  asm volatile("prefetch.tensormap [%0];" ::"l"(tensor_map) : "memory");
#endif
}

// ---------------------------------------------------------------------------------------------
// wgmma.

/// A shared-memory matrix descriptor for a K-major tile stored as rows of 128 bytes in TMA's
/// 128-byte swizzle, 1024-byte aligned: 8-row core-matrix groups 1024 bytes apart (the stride
/// byte offset), the leading byte offset unused by this layout (1, as CUTLASS sets it), swizzle
/// mode 1 (128 bytes) in bits 62-63. Advancing the start address by 32 bytes steps K by 16 bf16
/// or 8 tf32 values inside the swizzled rows.
__device__ __forceinline__ std::uint64_t smem_descriptor_k_major_128b(const void* tile) {
  const std::uint64_t address = shared_address(tile);
  return ((address & 0x3FFFF) >> 4) | (std::uint64_t{1} << 16) | (std::uint64_t{1024 >> 4} << 32) |
         (std::uint64_t{1} << 62);
}

/// Orders the warpgroup's register and shared-memory accesses before the next wgmma.
__device__ __forceinline__ void wgmma_fence() {
#ifdef GPUKIT_SM90A
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit_group() {
#ifdef GPUKIT_SM90A
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
#endif
}
/// Waits until at most kPending committed wgmma groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
#ifdef GPUKIT_SM90A
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
#endif
}

/// Keeps the compiler from moving accesses of the accumulators across a wgmma boundary.
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&registers)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(registers[i])::"memory");
}

// ---------------------------------------------------------------------------------------------
// Warpgroup registers and the cluster.

/// Gives registers back (producer warpgroup) or takes more (consumer warpgroups); the kernel
/// must be compiled with a register cap at entry (__launch_bounds__(threads, 1)).
template <int kRegisters>
__device__ __forceinline__ void release_registers() {
#ifdef GPUKIT_SM90A
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
#endif
}
template <int kRegisters>
__device__ __forceinline__ void claim_registers() {
#ifdef GPUKIT_SM90A
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
#endif
}

__device__ __forceinline__ std::uint32_t cluster_cta_rank() {
  std::uint32_t rank = 0;
#ifdef GPUKIT_SM90A
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
#endif
  return rank;
}

/// All threads of all CTAs of the cluster arrive and wait (release / acquire). Not the
/// .aligned form: the producer warp's threads may reach it at different times.
__device__ __forceinline__ void cluster_sync() {
#ifdef GPUKIT_SM90A
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;" ::: "memory");
#endif
}

}  // namespace gpukit::blas::cuda_detail::sm90
