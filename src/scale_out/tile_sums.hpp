#pragma once
// Internal to the distributed Poisson solver (poisson.hpp): the mean rule's sums
// (gpukit/pde/detail/poisson_mean_sums.hpp) over an array split into parts held by different
// processes and GPUs, computed on the fixed tree of gpukit/primitives/reduce_canonical.hpp exactly
// as one process computes them over the whole array, so that the mean, the warning and `strict` do
// not depend on the rank count.
//
// How: the tree's first level is a list of tiles of kTile consecutive elements of the whole
// array. Each part reduces the tiles it holds whole (reduce_tile, or the CUDA tile kernel, which
// evaluates the same expression) and sends the elements of the tiles it shares with a neighbour
// (at most kTile - 1 at each end) as they are. Rank 0 reassembles the shared tiles, reduces
// them, and runs the upper levels over the whole first level (reduce_canonical over the tile
// results, whose tree is the original's upper levels); the result is broadcast. Traffic: 32
// bytes per 16384 elements, plus two partial tiles per part.

#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/distributed/communicator.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"

namespace gpukit::scale_out::detail {

/// How the first-level tiles meet a part: elements [offset, offset + count) of an array of
/// `total` elements.
struct TileSplit {
  std::int64_t first_tile = 0;  // the first tile wholly inside the part
  std::int64_t tile_count = 0;  // tiles wholly inside the part
  std::int64_t head = 0;        // part elements [0, head) lie before the first whole tile
  std::int64_t tail_begin = 0;  // part elements [tail_begin, count) lie after the last one
};
/// The split (with tile_count 0, the whole part is its head and tail_begin == count).
TileSplit split_tiles(std::int64_t offset, std::int64_t count, std::int64_t total);

/// A part's share of the sums: the results of its whole tiles and its elements of shared tiles.
struct TileContribution {
  std::int64_t first_tile = 0;
  std::vector<pde::detail::MeanSums> tiles;  // reduce_tile of tiles first_tile, first_tile + 1, ...
  struct Fragment {
    std::int64_t offset = 0;     // of values[0] in the whole array
    std::vector<double> values;  // the elements, converted exactly (float and double both fit)
  };
  std::vector<Fragment> fragments;
};

/// The contribution of a part in host memory (whole tiles on `threads` OpenMP threads).
template <class Real>
TileContribution host_tile_contribution(std::span<const Real> part, std::int64_t offset,
                                        std::int64_t total, int threads);

/// The sums over [0, total) from contributions that cover it exactly once (any order): bitwise
/// host_mean_sums over the whole array. std::logic_error when the coverage is wrong.
pde::detail::MeanSums combine_tile_contributions(std::span<const TileContribution> all,
                                                 std::int64_t total);

/// Collective: every rank's contributions (its parts') gathered at rank 0, combined, and the
/// sums broadcast to every rank.
pde::detail::MeanSums distributed_mean_sums(distributed::Communicator& comm,
                                            std::span<const TileContribution> local,
                                            std::int64_t total);

}  // namespace gpukit::scale_out::detail
