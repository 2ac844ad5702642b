#pragma once
// How fixed blocks of work are shared out among workers (the GPUs of a process, the ranks of an
// MPI job): contiguous ranges of blocks, in order. The blocks themselves are the case study's
// (Monte Carlo: kMonteCarloBlockTiles tiles of a row; Black-Scholes: rows; reduction: tiles of
// the canonical tree) and never depend on the number of workers; a split only decides who
// computes which block, so no result depends on it (docs/scale-out.md, "The determinism rule").

#include <cstdint>
#include <span>
#include <vector>

namespace gpukit::distributed {

/// Blocks [first, first + count).
struct BlockRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return first + count; }
  friend bool operator==(const BlockRange&, const BlockRange&) = default;
};

/// Cuts blocks 0 .. weights.size() - 1 into `parts` contiguous ranges, in order: range k ends at
/// the block boundary nearest to where the running total of the weights reaches (k + 1) / parts
/// of the whole, so that each part's weight is within one block's of an equal share. Ranges may
/// be empty (more parts than blocks). All-zero weights split as split_evenly. Throws InvalidInput
/// for parts < 1 or a weight that is negative or not finite. Deterministic (the same ranges on
/// every process that computes them).
std::vector<BlockRange> split_by_weight(std::span<const double> weights, int parts);

/// `blocks` equal blocks into `parts` contiguous ranges whose sizes differ by at most one, the
/// larger first. Throws InvalidInput for parts < 1 or blocks < 0.
std::vector<BlockRange> split_evenly(std::int64_t blocks, int parts);

}  // namespace gpukit::distributed
