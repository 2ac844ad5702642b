#pragma once
// The fixed reduction tree every deterministic gpukit reduction follows, on every backend.
//
//   level:  the input is cut into tiles of kTile = 16384 elements (the last one may be short);
//   tile:   lane l (0 <= l < 1024) combines rows r = 0..15 in order: lane_l = op(lane_l,
//   x[r*1024+l]),
//           starting from the identity (elements past the end leave the lane alone);
//           then the 1024 lanes combine as a balanced tree of adjacent pairs:
//           (l0 . l1) . (l2 . l3) ... down to one value;
//   levels: the tile results form the next level's input, until one value is left.
//
// A GPU block holds the 1024 lanes of a tile in its threads (4 lanes per thread at 256 threads,
// a warp shuffle tree, then a tree over the warps), the CPU holds them in an array it can
// vectorize over; both evaluate exactly this expression, so the results are bitwise equal.
//
// An operation is a type with `using Acc`, `static Acc identity()` and `Acc operator()(Acc, Acc)`,
// callable on the host (and, for the CUDA engine, on the device). It must be associative and
// commutative for the result to equal the plain fold: lane l gathers elements l, l + 1024, ...,
// so the tree regroups the elements of a tile. (Pairs are always combined left, right, so an op
// that is commutative only up to rounding, like floating addition, still gives one answer.)

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/host_device.hpp"

namespace gpukit::primitives::canonical {

inline constexpr int kLanes = 1024;
inline constexpr int kRows = 16;
inline constexpr std::int64_t kTile = std::int64_t{kLanes} * kRows;

/// Number of tiles (next-level elements) for `count` elements.
constexpr std::int64_t tile_count(std::int64_t count) { return (count + kTile - 1) / kTile; }

/// Combines `values[0..width)` (width a power of two) as the balanced tree of adjacent pairs,
/// in place; returns values[0].
template <class Acc, class Op>
GPUKIT_HD_INLINE Acc pairwise_tree(Acc* values, int width, const Op& op) {
  for (int step = 1; step < width; step *= 2) {
    for (int j = 0; j < width; j += 2 * step) values[j] = op(values[j], values[j + step]);
  }
  return values[0];
}

/// One tile on the CPU: `count` <= kTile elements at `source`, each turned into an Acc by `load`.
template <class Source, class Op, class Load>
typename Op::Acc reduce_tile(const Source* source, std::int64_t count, const Op& op,
                             const Load& load) {
  using Acc = typename Op::Acc;
  Acc lanes[kLanes];
  for (int l = 0; l < kLanes; ++l) lanes[l] = Op::identity();
  const int full_rows = static_cast<int>(count / kLanes);
  for (int r = 0; r < full_rows; ++r) {
    const Source* row = source + std::int64_t{r} * kLanes;
    // Independent lanes: the compiler vectorizes this loop without reassociating anything.
    for (int l = 0; l < kLanes; ++l) lanes[l] = op(lanes[l], load(row[l]));
  }
  const int tail = static_cast<int>(count - std::int64_t{full_rows} * kLanes);
  const Source* row = source + std::int64_t{full_rows} * kLanes;
  for (int l = 0; l < tail; ++l) lanes[l] = op(lanes[l], load(row[l]));
  return pairwise_tree(lanes, kLanes, op);
}

/// An element of the CPU tree on one thread: 0.67 ns for a double sum, the cheapest operation
/// (gpukit_tune_cpu_threads costs at idle, 2^22 doubles: 0.57, 0.77; the accurate sum takes 1.5,
/// so it starts its threads at twice the work the rule asks). The thread rule's figure.
inline constexpr double kCpuNsPerElement = 0.67;

/// The whole tree on the CPU, tiles of each level spread over OpenMP threads as the thread rule
/// (core/cpu_threads.hpp) gives for `count` elements and `threads` (<= 0: the OpenMP default).
/// Returns Op::identity() for count == 0.
template <class Source, class Op, class Load>
typename Op::Acc reduce_canonical(const Source* source, std::int64_t count, const Op& op,
                                  const Load& load, int threads = 0) {
  using Acc = typename Op::Acc;
  if (count == 0) return Op::identity();
  if (count <= kTile) return reduce_tile(source, count, op, load);
  std::vector<Acc> level(static_cast<std::size_t>(tile_count(count)));
  const auto tiles = static_cast<std::int64_t>(level.size());
#if defined(_OPENMP)
  const int team = cpu_threads_for({count, kCpuNsPerElement, tiles}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
#else
  (void)threads;
#endif
  for (std::int64_t t = 0; t < tiles; ++t) {
    level[static_cast<std::size_t>(t)] =
        reduce_tile(source + t * kTile, std::min(kTile, count - t * kTile), op, load);
  }
  // Upper levels hold one value per 16384 elements: a single thread does them in no time.
  std::int64_t remaining = tiles;
  while (remaining > 1) {
    const std::int64_t next = tile_count(remaining);
    for (std::int64_t t = 0; t < next; ++t) {
      level[static_cast<std::size_t>(t)] =
          reduce_tile(level.data() + t * kTile, std::min(kTile, remaining - t * kTile), op,
                      [](const Acc& a) { return a; });
    }
    remaining = next;
  }
  return level[0];
}

}  // namespace gpukit::primitives::canonical
