// One MT19937 per CUDA block (mt19937_streams.hpp): the 624-word state lives in shared memory and
// is regenerated in three phases of at most 227 words, each reading all its operands before any
// thread writes, which reproduces the sequential in-place update word for word.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda/check.hpp"
#include "gpukit/rng/mt19937_recurrence.hpp"
#include "gpukit/rng/mt19937_streams.hpp"
#include "rng/cuda/rng_launchers.hpp"

namespace gpukit::rng::cuda_detail {

namespace {

using detail::kMtShift;
using detail::kMtStateWords;

constexpr int kIndependentWords = kMtStateWords - kMtShift;  // 227
constexpr int kThreadsPerBlock = 256;
static_assert(kThreadsPerBlock >= kIndependentWords);

// Word i of the new state needs old words i and i + 1 and word i + m, which is old for
// i < n - m and new (from the previous phase) otherwise; for i = n - 1 word "i + 1" is the new
// word 0. The phases [0, 227), [227, 454), [454, 624) respect all of these.
__device__ void regenerate(std::uint32_t* state) {
  for (int start = 0; start < kMtStateWords; start += kIndependentWords) {
    const int i = start + static_cast<int>(threadIdx.x);
    const bool active = threadIdx.x < kIndependentWords && i < kMtStateWords;
    std::uint32_t next = 0;
    if (active) {
      const int plus_one = i + 1 < kMtStateWords ? i + 1 : 0;
      const int plus_shift =
          i + kMtShift < kMtStateWords ? i + kMtShift : i + kMtShift - kMtStateWords;
      next = detail::mt_next_word(state[i], state[plus_one], state[plus_shift]);
    }
    __syncthreads();  // every operand read before any word of this phase changes
    if (active) state[i] = next;
    __syncthreads();
  }
}

__global__ void __launch_bounds__(kThreadsPerBlock)
    mt19937_streams_kernel(std::uint32_t* out, std::int64_t stream_count, std::int64_t per_stream,
                           std::uint64_t seed, std::uint64_t first_stream) {
  __shared__ std::uint32_t state[kMtStateWords];
  for (std::int64_t s = blockIdx.x; s < stream_count; s += gridDim.x) {
    __syncthreads();  // the previous stream's outputs are all read
    if (threadIdx.x == 0) {
      std::uint32_t key[4];
      mt19937_stream_key(seed, first_stream + static_cast<std::uint64_t>(s), key);
      detail::mt_seed_state_by_array(state, key, 4);
    }
    __syncthreads();
    std::uint32_t* stream_out = out + s * per_stream;
    for (std::int64_t produced = 0; produced < per_stream; produced += kMtStateWords) {
      regenerate(state);
      for (int i = threadIdx.x; i < kMtStateWords; i += kThreadsPerBlock) {
        if (produced + i < per_stream) stream_out[produced + i] = detail::mt_temper(state[i]);
      }
      // regenerate() reads before its first barrier and writes after it, so these reads of the
      // state are complete before any word changes.
    }
  }
}

}  // namespace

void launch_mt19937_streams(std::uint32_t* device_out, std::int64_t stream_count,
                            std::int64_t per_stream, std::uint64_t seed, std::uint64_t first_stream,
                            StreamHandle stream, int grid_blocks) {
  if (stream_count <= 0 || per_stream <= 0) return;
  // One block per stream up to a bound far above what fills the GPU; more streams loop.
  const std::int64_t grid =
      grid_blocks > 0 ? grid_blocks : std::min<std::int64_t>(stream_count, std::int64_t{1} << 20);
  mt19937_streams_kernel<<<static_cast<unsigned>(grid), kThreadsPerBlock, 0, stream>>>(
      device_out, stream_count, per_stream, seed, first_stream);
  GPUKIT_CUDA_CHECK_LAUNCH("mt19937_streams_kernel");
}

}  // namespace gpukit::rng::cuda_detail
