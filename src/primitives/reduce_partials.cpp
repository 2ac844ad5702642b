// A reduction in fixed blocks (gpukit/primitives/reduce_partials.hpp): the split, each block's
// partial on the CPU (the canonical tiles on OpenMP threads) or a CUDA device (the deterministic
// engine's tile kernel, then for level 1 one block per group of tile sums), and the levels above
// the partials on the CPU.

#include "gpukit/primitives/reduce_partials.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/reduce_dispatch.hpp"

#if GPUKIT_HAVE_CUDA
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/cuda/reduce_host_pipeline.hpp"
#include "primitives/cuda/reduce_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

using canonical::kTile;

// The part covers whole blocks from a block boundary (the array's last block may be short) and
// `partials` has room for exactly their partials.
void check_part(const ReduceSplit& split, std::int64_t first_block, std::int64_t part_count,
                std::size_t partial_bytes_given) {
  if (first_block < 0 || part_count < 0 || first_block > split.blocks) {
    throw InvalidInput(fmt::format("reduce: block {} is outside the array's {} blocks", first_block,
                                   split.blocks));
  }
  if (part_count > 0) {
    const std::int64_t begin = first_block * split.block_elements;
    const std::int64_t end = begin + part_count;
    if (end > split.count || (end != split.count && part_count % split.block_elements != 0)) {
      throw InvalidInput(fmt::format(
          "reduce: elements [{}, {}) are not whole blocks of {} elements of the {}-element array",
          begin, end, split.block_elements, split.count));
    }
  }
  const std::size_t wanted =
      static_cast<std::size_t>(split.blocks_of(part_count)) * split.partial_bytes;
  if (partial_bytes_given != wanted) {
    throw InvalidInput(fmt::format("reduce: {} blocks need {} bytes of partials, got {}",
                                   split.blocks_of(part_count), wanted, partial_bytes_given));
  }
}

template <class Acc>
void store(std::span<std::byte> partials, std::int64_t index, const Acc& value) {
  std::memcpy(partials.data() + static_cast<std::size_t>(index) * sizeof(Acc), &value, sizeof(Acc));
}

template <class T>
void cpu_partials(int threads, std::span<const T> part, const ReduceSplit& split, ReduceOp op,
                  const ReduceOptions& options, std::span<std::byte> partials) {
  const auto count = static_cast<std::int64_t>(part.size());
  const int team =
      cpu_threads_for({count, canonical::kCpuNsPerElement, canonical::tile_count(count)}, threads);
  detail::with_canonical_op<T>(op, options.accurate_sum, split.count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    const auto load = [](T x) { return Op::load(x); };
    const std::int64_t tiles = canonical::tile_count(count);
    if (split.level == 0) {
#pragma omp parallel for schedule(static) num_threads(team)
      for (std::int64_t t = 0; t < tiles; ++t) {
        store(partials, t,
              canonical::reduce_tile(part.data() + t * kTile, std::min(kTile, count - t * kTile),
                                     op_functor, load));
      }
      return;
    }
    // Level 1: the tile values, then each group of kTile of them as one tile of the level above
    // (a group of one value too: op(identity, value), as the tree has it).
    std::vector<Acc> values(static_cast<std::size_t>(tiles));
#pragma omp parallel for schedule(static) num_threads(team)
    for (std::int64_t t = 0; t < tiles; ++t) {
      values[static_cast<std::size_t>(t)] = canonical::reduce_tile(
          part.data() + t * kTile, std::min(kTile, count - t * kTile), op_functor, load);
    }
    const std::int64_t groups = canonical::tile_count(tiles);
    for (std::int64_t g = 0; g < groups; ++g) {
      store(partials, g,
            canonical::reduce_tile(values.data() + g * kTile, std::min(kTile, tiles - g * kTile),
                                   op_functor, [](const Acc& a) { return a; }));
    }
  });
}

}  // namespace

template <class T>
ReduceSplit reduce_split(std::int64_t count, ReduceOp op, const ReduceOptions& options, int level) {
  detail::validate_reduce_arguments<T>(op, count);
  if (level < -1 || level > 1 || (level == 1 && count <= kTile)) {
    throw InvalidInput(fmt::format("reduce: no split of {} elements at level {}", count, level));
  }
  ReduceSplit split;
  split.count = count;
  split.level = level >= 0 ? level : count >= kReduceLevelOneFrom ? 1 : 0;
  split.block_elements = split.level == 0 ? kTile : kTile * kTile;
  split.blocks = split.blocks_of(count);
  split.partial_bytes = detail::with_canonical_op<T>(
      op, options.accurate_sum, count,
      [](auto op_functor) { return sizeof(typename decltype(op_functor)::Acc); });
  return split;
}

template <class T>
void reduce_partials(const Context& context, std::span<const T> part, const ReduceSplit& split,
                     std::int64_t first_block, ReduceOp op, const ReduceOptions& options,
                     std::span<std::byte> partials) {
  detail::validate_reduce_arguments<T>(op, split.count);
  check_part(split, first_block, static_cast<std::int64_t>(part.size()), partials.size());
  if (part.empty()) return;
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    detail::partials_through_device(context, part, op, options, split, partials);
    return;
#else
    throw DeviceUnavailable("reduce: this gpukit was built without CUDA");
#endif
  }
  cpu_partials(context.cpu_threads, part, split, op, options, partials);
}

template <class T>
void reduce_partials_on_device(const T* device_part, std::int64_t part_count,
                               const ReduceSplit& split, std::int64_t first_block, ReduceOp op,
                               const ReduceOptions& options, std::span<std::byte> partials,
                               ReduceWorkspace& workspace, StreamHandle stream) {
  detail::validate_reduce_arguments<T>(op, split.count);
  check_part(split, first_block, part_count, partials.size());
  if (part_count == 0) return;
#if GPUKIT_HAVE_CUDA
  const std::int64_t tiles = canonical::tile_count(part_count);
  // Tile sums, then (level 1) the group values on a 256-byte boundary after them.
  const std::size_t sums_bytes =
      (static_cast<std::size_t>(tiles) * split.partial_bytes + 255) / 256 * 256;
  workspace.reserve(sums_bytes + partials.size());
  auto* sums = static_cast<unsigned char*>(workspace.scratch());
  cuda_detail::launch_deterministic_chunk(device_part, part_count, op, options.accurate_sum,
                                          split.count, sums, 0, stream);
  const unsigned char* values = sums;
  if (split.level == 1) {
    cuda_detail::launch_deterministic_groups<T>(sums, tiles, op, options.accurate_sum, split.count,
                                                sums + sums_bytes, stream);
    values = sums + sums_bytes;
  }
  cuda::copy_to_host_async(partials.data(), values, partials.size(), stream);
  cuda::synchronize_stream(stream);
#else
  (void)device_part, (void)options, (void)workspace, (void)stream;
  throw DeviceUnavailable("reduce: this gpukit was built without CUDA");
#endif
}

template <class T>
reduce_result_t<T> reduce_from_partials(std::span<const std::byte> partials,
                                        const ReduceSplit& split, ReduceOp op,
                                        const ReduceOptions& options, int threads) {
  detail::validate_reduce_arguments<T>(op, split.count);
  if (partials.size() != static_cast<std::size_t>(split.blocks) * split.partial_bytes) {
    throw InvalidInput(fmt::format("reduce: {} blocks need {} bytes of partials, got {}",
                                   split.blocks, split.blocks * split.partial_bytes,
                                   partials.size()));
  }
  if (split.count == 0) return reduce_result_t<T>(0);  // the empty sum is +0 (reduce())
  return detail::with_canonical_op<T>(op, options.accurate_sum, split.count, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    if (sizeof(Acc) != split.partial_bytes) {
      throw InvalidInput("reduce: the partials were made for another operation or type");
    }
    std::vector<Acc> values(static_cast<std::size_t>(split.blocks));
    std::memcpy(values.data(), partials.data(), partials.size());
    // One block is the root itself; more make the next level's input (reduce_canonical.hpp).
    const Acc root = split.blocks == 1 ? values[0]
                                       : canonical::reduce_canonical(
                                             values.data(), split.blocks, op_functor,
                                             [](const Acc& a) { return a; }, threads);
    bool overflow = false;
    const auto value = detail::finalize<T>(root, overflow);
    return detail::checked<T>(value, overflow);
  });
}

#define GPUKIT_INSTANTIATE_REDUCE_PARTIALS(T)                                                   \
  template ReduceSplit reduce_split<T>(std::int64_t, ReduceOp, const ReduceOptions&, int);      \
  template void reduce_partials<T>(const Context&, std::span<const T>, const ReduceSplit&,      \
                                   std::int64_t, ReduceOp, const ReduceOptions&,                \
                                   std::span<std::byte>);                                       \
  template void reduce_partials_on_device<T>(                                                   \
      const T*, std::int64_t, const ReduceSplit&, std::int64_t, ReduceOp, const ReduceOptions&, \
      std::span<std::byte>, ReduceWorkspace&, StreamHandle);                                    \
  template reduce_result_t<T> reduce_from_partials<T>(                                          \
      std::span<const std::byte>, const ReduceSplit&, ReduceOp, const ReduceOptions&, int);

GPUKIT_INSTANTIATE_REDUCE_PARTIALS(std::int32_t)
GPUKIT_INSTANTIATE_REDUCE_PARTIALS(std::int64_t)
GPUKIT_INSTANTIATE_REDUCE_PARTIALS(std::uint32_t)
GPUKIT_INSTANTIATE_REDUCE_PARTIALS(float)
GPUKIT_INSTANTIATE_REDUCE_PARTIALS(double)
#undef GPUKIT_INSTANTIATE_REDUCE_PARTIALS

}  // namespace gpukit::primitives
