// The seed's prefix scans (004, "Parallel Prefix Scan", ME964 March 8 2011; Harris, Sengupta and
// Owens, GPU Gems 3 ch. 39, 2007), written for any scan operation and accumulator:
// - Hillis-Steele, double-buffered, O(n log n) work ("Hillis & Steele: Kernel Function");
// - the work-efficient up-sweep/down-sweep prescan ("Picture and Pseudocode", "The Down-Sweep
//   Phase", the `prescan` kernel);
// - the same with one pad word per 32 shared-memory banks ("Use Padding to Reduce Conflicts");
// - the multi-block scan the seed leaves as the exercise ("you will have to think how to handle the
//   16,777,216 elements case"): scan tiles, scan the tiles' totals, add them back (GPU Gems 3
//   39.2.4).
// They keep the seed's shapes, including what makes them slow today. Changes forced by
// correctness: any count (not only powers of two: the tree is padded with the identity), any
// associative operation (operands keep their left-to-right order), 64-bit global indices, and the
// Hillis-Steele step reads both operands from the input buffer (the slide's `+=` reads the output
// buffer's stale value, the book's known erratum).
//
// Every kernel reads all of its elements before its first barrier and writes them after its last,
// and blocks touch disjoint elements, so all four launchers also work in place (input == output).
// Integer sums and products wrap (the registry's exact_integer_sums is false for them).

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "primitives/cuda/scan_launchers.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cuda_detail {

namespace {

constexpr int kMaxBlockThreads = 1024;
/// Every block-level scan here gives each thread two elements, so one block holds 2048.
constexpr int kElementsPerThread = 2;
static_assert(kOneBlockMaxCount == std::int64_t{kMaxBlockThreads} * kElementsPerThread);
/// The multi-block scan's tile: one full block of the padded work-efficient scan.
constexpr int kTileElements = static_cast<int>(kOneBlockMaxCount);
/// 32 banks of 4-byte words on every GPU since Fermi (the seed's 2011 GPUs had 16: `>> 4`).
constexpr int kLogNumBanks = 5;
/// Scan levels of the multi-block scan: 2048^6 = 2^66 elements covers every int64 count.
constexpr int kMaxLevels = 6;
/// Each level's tile totals start on their own 256-byte boundary (full memory transactions).
constexpr std::size_t kLevelAlignment = 256;

constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

/// The block's dynamic shared memory viewed as Acc (16-byte aligned for every Acc).
template <class Acc>
__device__ __forceinline__ Acc* shared_accumulators() {
  extern __shared__ __align__(16) unsigned char scan_dynamic_shared[];
  return reinterpret_cast<Acc*>(scan_dynamic_shared);
}

template <class Op>
__device__ __forceinline__ typename Op::Acc load_or_identity(const typename Op::Input* input,
                                                             std::int64_t count, std::int64_t i) {
  return i < count ? Op::load(input[i]) : Op::identity();
}

/// The seed's bank-conflict padding: one extra word after every 32 (`address += address >> 5`).
/// It counts elements, as the seed does, so for 8-byte accumulators (two banks each) it removes
/// fewer conflicts than for 4-byte ones.
__device__ __forceinline__ int conflict_free_offset(int address) { return address >> kLogNumBanks; }

// --- Hillis-Steele -------------------------------------------------------------------------------

// One block, `n` <= 2 * blockDim.x elements; thread `thid` owns elements thid and thid +
// blockDim.x. Two buffers of n accumulators in shared memory. The seed shifts the input right by
// one on load (exclusive scan); here each thread writes its own element one slot to the right, so
// every element is read once and kept for the inclusive output.
template <class Op>
__global__ void __launch_bounds__(kMaxBlockThreads)
    hillis_steele_block_kernel(const typename Op::Input* input, typename Op::Input* output, int n,
                               bool inclusive) {
  using Acc = typename Op::Acc;
  Acc* temp = shared_accumulators<Acc>();
  const Op op;
  const int thid = threadIdx.x;
  Acc own[kElementsPerThread];
#pragma unroll
  for (int j = 0; j < kElementsPerThread; ++j) {
    const int k = thid + j * static_cast<int>(blockDim.x);
    if (k < n) {
      own[j] = Op::load(input[k]);
      if (k + 1 < n) temp[k + 1] = own[j];
      if (k == 0) temp[0] = canonical_scan::initial_value(Op{});  // sums start at +0.0
    }
  }
  __syncthreads();

  int pout = 0;
  int pin = 1;
  for (int offset = 1; offset < n; offset <<= 1) {
    pout = 1 - pout;  // swap double buffer indices
    pin = 1 - pout;
#pragma unroll
    for (int j = 0; j < kElementsPerThread; ++j) {
      const int k = thid + j * static_cast<int>(blockDim.x);
      if (k < n) {
        temp[pout * n + k] =
            k >= offset ? op(temp[pin * n + k - offset], temp[pin * n + k]) : temp[pin * n + k];
      }
    }
    __syncthreads();
  }

#pragma unroll
  for (int j = 0; j < kElementsPerThread; ++j) {
    const int k = thid + j * static_cast<int>(blockDim.x);
    if (k < n) {
      const Acc exclusive = temp[pout * n + k];
      output[k] = Op::store(inclusive ? op(exclusive, own[j]) : exclusive);
    }
  }
}

// --- work-efficient (up-sweep / down-sweep) ------------------------------------------------------

// The seed's `prescan` in one block of n / 2 threads, n a power of two >= count; elements past
// `count` are the identity. Interleaved loads (2*thid, 2*thid+1) as on the slide, with the
// bank conflicts the next slides discuss.
template <class Op>
__global__ void __launch_bounds__(kMaxBlockThreads)
    work_efficient_block_kernel(const typename Op::Input* input, typename Op::Input* output,
                                int count, int n, bool inclusive) {
  using Acc = typename Op::Acc;
  Acc* temp = shared_accumulators<Acc>();
  const Op op;
  const int thid = threadIdx.x;
  const Acc x_even = load_or_identity<Op>(input, count, 2 * thid);
  const Acc x_odd = load_or_identity<Op>(input, count, 2 * thid + 1);
  temp[2 * thid] = x_even;
  temp[2 * thid + 1] = x_odd;

  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {  // build the reduction in place up the tree
    __syncthreads();
    if (thid < d) {
      const int ai = offset * (2 * thid + 1) - 1;
      const int bi = offset * (2 * thid + 2) - 1;
      temp[bi] = op(temp[ai], temp[bi]);
    }
    offset <<= 1;
  }

  if (thid == 0) temp[n - 1] = canonical_scan::initial_value(Op{});  // clear the root

  for (int d = 1; d < n; d *= 2) {  // traverse down the tree, building the scan
    offset >>= 1;
    __syncthreads();
    if (thid < d) {
      const int ai = offset * (2 * thid + 1) - 1;
      const int bi = offset * (2 * thid + 2) - 1;
      const Acc left = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] = op(temp[bi], left);  // prefix on the left: correct for non-commutative ops
    }
  }
  __syncthreads();

  if (2 * thid < count) {
    output[2 * thid] = Op::store(inclusive ? op(temp[2 * thid], x_even) : temp[2 * thid]);
  }
  if (2 * thid + 1 < count) {
    const Acc exclusive = temp[2 * thid + 1];
    output[2 * thid + 1] = Op::store(inclusive ? op(exclusive, x_odd) : exclusive);
  }
}

/// Shared-memory words of an n-element padded tree.
constexpr int padded_words(int n) { return n + ((n - 1) >> kLogNumBanks); }

// Block b scans the tile [b*n, b*n + n) with the padded work-efficient prescan, n / 2 threads,
// one element from each half of the tile ("Initial Bank Conflicts on Load"), which also makes
// the global loads coalesced. With `tile_totals`, thread 0 saves the root (the tile's total)
// before clearing it, as GPU Gems 3 39.2.4 does. The one-block variant is grid 1 with n the
// power of two above count; the multi-block scan runs it with n = kTileElements.
template <class Op>
__global__ void __launch_bounds__(kMaxBlockThreads)
    work_efficient_padded_tile_kernel(const typename Op::Input* input, typename Op::Input* output,
                                      std::int64_t count, int n, bool inclusive,
                                      typename Op::Acc* tile_totals) {
  using Acc = typename Op::Acc;
  Acc* temp = shared_accumulators<Acc>();
  const Op op;
  const int thid = threadIdx.x;
  const std::int64_t base = std::int64_t{blockIdx.x} * n;
  const int a = thid;
  const int b = thid + (n >> 1);
  const int a_padded = a + conflict_free_offset(a);
  const int b_padded = b + conflict_free_offset(b);
  const Acc x_a = load_or_identity<Op>(input, count, base + a);
  const Acc x_b = load_or_identity<Op>(input, count, base + b);
  temp[a_padded] = x_a;
  temp[b_padded] = x_b;

  int offset = 1;
  for (int d = n >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += conflict_free_offset(ai);
      bi += conflict_free_offset(bi);
      temp[bi] = op(temp[ai], temp[bi]);
    }
    offset <<= 1;
  }

  if (thid == 0) {
    const int root = n - 1 + conflict_free_offset(n - 1);
    if (tile_totals != nullptr) tile_totals[blockIdx.x] = temp[root];
    temp[root] = canonical_scan::initial_value(Op{});
  }

  for (int d = 1; d < n; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (thid < d) {
      int ai = offset * (2 * thid + 1) - 1;
      int bi = offset * (2 * thid + 2) - 1;
      ai += conflict_free_offset(ai);
      bi += conflict_free_offset(bi);
      const Acc left = temp[ai];
      temp[ai] = temp[bi];
      temp[bi] = op(temp[bi], left);
    }
  }
  __syncthreads();

  if (base + a < count) {
    const Acc exclusive = temp[a_padded];
    output[base + a] = Op::store(inclusive ? op(exclusive, x_a) : exclusive);
  }
  if (base + b < count) {
    const Acc exclusive = temp[b_padded];
    output[base + b] = Op::store(inclusive ? op(exclusive, x_b) : exclusive);
  }
}

// --- multi-block -----------------------------------------------------------------------------

/// The operation on a level of tile totals: input and output are already accumulators.
template <class Op>
struct TileTotalsOp : Op {
  using Input = typename Op::Acc;
  __host__ __device__ __forceinline__ static Input load(Input a) { return a; }
  __host__ __device__ __forceinline__ static Input store(Input a) { return a; }
};

// Tile b + 1 (tile 0's prefix is the identity) gets the scanned total of the tiles before it,
// combined on the left of each of its already scanned elements ("uniform add"). Storing and
// reloading an output is lossless: every wrapping Acc has the width of T.
template <class Op>
__global__ void __launch_bounds__(kMaxBlockThreads)
    uniform_add_kernel(typename Op::Input* data, std::int64_t count, int tile_elements,
                       const typename Op::Acc* scanned_tile_totals) {
  const Op op;
  const std::int64_t tile = std::int64_t{blockIdx.x} + 1;
  const typename Op::Acc prefix = scanned_tile_totals[tile];
  const std::int64_t base = tile * tile_elements;
  for (int j = threadIdx.x; j < tile_elements; j += blockDim.x) {
    const std::int64_t i = base + j;
    if (i < count) data[i] = Op::store(op(prefix, Op::load(data[i])));
  }
}

template <class Op>
void launch_padded_tiles(const typename Op::Input* input, typename Op::Input* output,
                         std::int64_t count, int n, std::int64_t tiles, bool inclusive,
                         typename Op::Acc* tile_totals, StreamHandle stream) {
  const std::size_t shared_bytes = padded_words(n) * sizeof(typename Op::Acc);
  work_efficient_padded_tile_kernel<Op>
      <<<static_cast<unsigned>(tiles), n / 2, shared_bytes, stream>>>(input, output, count, n,
                                                                      inclusive, tile_totals);
  GPUKIT_CUDA_CHECK_LAUNCH("work_efficient_padded_tile_kernel");
}

// One level of the multi-block scan: scan the level's tiles, and when there is more than one,
// scan their totals (exclusive, in place, one level down) and add them back.
// `tile_totals[level]` holds the next level's input.
template <class Op, class LevelOp>
void scan_level(const typename LevelOp::Input* input, typename LevelOp::Input* output,
                std::int64_t count, bool inclusive, typename Op::Acc* const* tile_totals,
                StreamHandle stream) {
  const std::int64_t tiles = ceil_div(count, kTileElements);
  typename Op::Acc* totals = tiles > 1 ? tile_totals[0] : nullptr;
  launch_padded_tiles<LevelOp>(input, output, count, kTileElements, tiles, inclusive, totals,
                               stream);
  if (tiles == 1) return;
  scan_level<Op, TileTotalsOp<Op>>(totals, totals, tiles, /*inclusive=*/false, tile_totals + 1,
                                   stream);
  uniform_add_kernel<LevelOp><<<static_cast<unsigned>(tiles - 1), kMaxBlockThreads, 0, stream>>>(
      output, count, kTileElements, totals);
  GPUKIT_CUDA_CHECK_LAUNCH("uniform_add_kernel");
}

/// Where each level's tile totals live in the one workspace allocation.
struct TileTotalsLayout {
  std::array<std::size_t, kMaxLevels> offsets{};
  int levels = 0;
  std::size_t bytes = 0;
};

TileTotalsLayout tile_totals_layout(std::int64_t count, std::size_t acc_bytes) {
  TileTotalsLayout layout;
  for (std::int64_t level_count = count; level_count > kTileElements; ++layout.levels) {
    level_count = ceil_div(level_count, kTileElements);
    layout.offsets[layout.levels] = layout.bytes;
    const std::size_t level_bytes = static_cast<std::size_t>(level_count) * acc_bytes;
    layout.bytes += (level_bytes + kLevelAlignment - 1) / kLevelAlignment * kLevelAlignment;
  }
  return layout;
}

// --- launch checks -------------------------------------------------------------------------------

/// Throws InvalidInput for a negative count, or one over `max_count`; false for nothing to do.
bool check_count(std::int64_t count, std::int64_t max_count, const char* variant) {
  if (count < 0) {
    throw InvalidInput(std::string("scan ") + variant + ": negative count " +
                       std::to_string(count));
  }
  if (count > max_count) {
    throw InvalidInput(std::string("scan ") + variant + ": " + std::to_string(count) +
                       " elements exceed one block's " + std::to_string(max_count) +
                       "; use the multi-block scan");
  }
  return count > 0;
}

/// The power of two the tree scans hold (at least 2: one thread with two elements).
int tree_size(std::int64_t count) {
  return static_cast<int>(std::bit_ceil(static_cast<std::uint64_t>(count < 2 ? 2 : count)));
}

}  // namespace

// One thread per element up to 1024 elements (as the seed), then 1024 threads with two each.
template <class T>
void launch_hillis_steele(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                          ScanWorkspace&, StreamHandle stream) {
  if (!check_count(count, kOneBlockMaxCount, "hillis-steele")) return;
  const int n = static_cast<int>(count);
  const int threads = std::min((n + 31) / 32 * 32, kMaxBlockThreads);
  detail::with_scan_op<T, /*kExact=*/false>(op, [&](auto functor) {
    using Op = decltype(functor);
    const std::size_t shared_bytes = 2 * static_cast<std::size_t>(n) * sizeof(typename Op::Acc);
    hillis_steele_block_kernel<Op>
        <<<1, threads, shared_bytes, stream>>>(input, output, n, kind == ScanKind::inclusive);
    GPUKIT_CUDA_CHECK_LAUNCH("hillis_steele_block_kernel");
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_hillis_steele)

template <class T>
void launch_work_efficient(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                           ScanWorkspace&, StreamHandle stream) {
  if (!check_count(count, kOneBlockMaxCount, "work-efficient")) return;
  const int n = tree_size(count);
  detail::with_scan_op<T, /*kExact=*/false>(op, [&](auto functor) {
    using Op = decltype(functor);
    const std::size_t shared_bytes = static_cast<std::size_t>(n) * sizeof(typename Op::Acc);
    work_efficient_block_kernel<Op><<<1, n / 2, shared_bytes, stream>>>(
        input, output, static_cast<int>(count), n, kind == ScanKind::inclusive);
    GPUKIT_CUDA_CHECK_LAUNCH("work_efficient_block_kernel");
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_work_efficient)

template <class T>
void launch_work_efficient_padded(const T* input, T* output, std::int64_t count, ScanOp op,
                                  ScanKind kind, ScanWorkspace&, StreamHandle stream) {
  if (!check_count(count, kOneBlockMaxCount, "work-efficient-padded")) return;
  detail::with_scan_op<T, /*kExact=*/false>(op, [&](auto functor) {
    using Op = decltype(functor);
    launch_padded_tiles<Op>(input, output, count, tree_size(count), /*tiles=*/1,
                            kind == ScanKind::inclusive, /*tile_totals=*/nullptr, stream);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_work_efficient_padded)

// Any count: 2048-element tiles, the tiles' totals scanned recursively (a level per factor of
// 2048), then added back. The totals of every level sit in one workspace reservation. Works in
// place.
template <class T>
void launch_multi_block(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                        ScanWorkspace& workspace, StreamHandle stream) {
  constexpr std::int64_t kMaxCount = std::int64_t{INT_MAX} * kTileElements;  // grid.x limit
  if (count < 0 || count > kMaxCount) {
    throw InvalidInput("scan multi-block: count " + std::to_string(count) + " is outside [0, " +
                       std::to_string(kMaxCount) + "]");
  }
  if (count == 0) return;
  detail::with_scan_op<T, /*kExact=*/false>(op, [&](auto functor) {
    using Op = decltype(functor);
    using Acc = typename Op::Acc;
    static_assert(std::is_same_v<decltype(Op::store(std::declval<Acc>())), T>);
    const TileTotalsLayout layout = tile_totals_layout(count, sizeof(Acc));
    std::array<Acc*, kMaxLevels> tile_totals{};
    if (layout.bytes > 0) {
      auto* scratch = static_cast<unsigned char*>(workspace.reserve(layout.bytes));
      for (int level = 0; level < layout.levels; ++level) {
        tile_totals[level] = reinterpret_cast<Acc*>(scratch + layout.offsets[level]);
      }
    }
    scan_level<Op, Op>(input, output, count, kind == ScanKind::inclusive, tile_totals.data(),
                       stream);
  });
}
GPUKIT_INSTANTIATE_PER_TYPE(PrimitiveTypes, ScanLaunch, launch_multi_block)

}  // namespace gpukit::primitives::cuda_detail
