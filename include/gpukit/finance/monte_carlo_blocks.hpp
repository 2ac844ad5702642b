#pragma once
// Monte Carlo in fixed blocks: the pieces a book is priced in across GPUs and processes
// (gpukit/distributed), with the bits of price_monte_carlo_book on one device.
//
// Each row's samples are cut into blocks of kMonteCarloBlockTiles tiles (the last block of a row
// is short); every row has the same number of blocks, blocks_per_row = ceil(tiles / block
// tiles), and block b is block b % blocks_per_row of row b / blocks_per_row. A block's moments
// are the node of the row's fixed tile tree (monte_carlo.hpp, "Statistics") that covers its
// tiles: the tree is the stride-doubling tree over the tile index and the blocks are aligned
// subtrees (a power of two of tiles), so merging a row's block moments by the same tree gives the
// row's moments, bit for bit. Where a block is computed, and by whom, does not enter its bits;
// only the backend does (the GPU's merges fuse their multiply-adds, the CPU's round twice), and
// monte_carlo_result_from_blocks merges the blocks as that backend would.
//
// With the sobol sampler a block is one replicate of a row (blocks_per_row = replicates, whatever
// the paths): a replicate's moments come from its own tile tree, and the result is formed from the
// replicates as one device forms it. An early-exercise row (Longstaff-Schwartz) travels whole: its
// first block carries its pass 2 moments in every scenario, computed by one worker (the regression
// needs every path of pass 1), its other blocks are empty and weigh nothing.
//
// The block boundaries depend on the paths alone, never on the number of GPUs or processes: that
// is the rule that makes a book priced on N GPUs equal the book priced on one.
//
// Use: every process computes monte_carlo_blocks(book, options) (cheap, the same everywhere),
// each worker prices a contiguous range of blocks with price_monte_carlo_blocks, the ranges'
// moments are concatenated in block order, and one process forms the result with
// monte_carlo_result_from_blocks. gpukit/scale_out/monte_carlo.hpp does this over the GPUs of a
// process and the ranks of an MPI job (docs/scale-out.md).

#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance {

/// Tiles per block, a power of two: 2^10 tiles, 2^21 samples. Small enough that 2^32 paths make
/// 2048 blocks to share, large enough that a block's moments (64 bytes a scenario) are a
/// negligible share of what crosses between processes. The bits do not depend on it.
inline constexpr std::int64_t kMonteCarloBlockTiles = std::int64_t{1} << 10;

/// The fixed blocks of a book priced with `options`: `blocks_per_row` blocks a row, row-major,
/// and each block's weight (the path-steps it simulates, padding of the last tile included; an
/// early-exercise row's both passes in its first block), by which work is shared out. Throws InvalidInput where price_monte_carlo_book would for the
/// options (paths, antithetic pairs, the row count); rows are checked where they are priced.
struct MonteCarloBlocks {
  std::int64_t rows = 0;
  std::int64_t blocks_per_row = 0;
  std::vector<double> weight;  // rows * blocks_per_row entries, block order
  std::int64_t count() const { return rows * blocks_per_row; }
};
MonteCarloBlocks monte_carlo_blocks(const MonteCarloBookView& book,
                                    const MonteCarloOptions& options);

/// The scenarios (books) each block is simulated in: 1, or with options.greeks the book and the
/// books its Greeks need (monte_carlo.hpp, "Greeks"): 5, or 6 where a heston row is European or
/// Asian (its pathwise delta, the two deltas of its gamma and the two variances of its vega). Reads
/// the book's model and barrier_type columns only.
int monte_carlo_scenarios(const MonteCarloBookView& book, const MonteCarloOptions& options);

/// One block's moments in one scenario: the statistics its tiles reduce to (count, mean and M2
/// of the sample, of the control and of the antithetic half difference, the co-moment of sample
/// and control). Plain data, 64 bytes, moved between processes as bytes: the hosts of a job must
/// share the double format and byte order (every x86-64 and AArch64 Linux host does).
struct MonteCarloBlockMoments {
  double count = 0;
  double mean_x = 0, m2_x = 0;
  double mean_c = 0, m2_c = 0, co_xc = 0;
  double mean_d = 0, m2_d = 0;
};

/// Prices blocks [first_block, first_block + block_count) of `book` on `context` and returns
/// their moments, block-major: block first_block + j's scenario s at j * scenarios + s. Only the
/// rows those blocks belong to are read and checked (InvalidInput for a bad row, as
/// price_monte_carlo_book); InvalidInput for a range outside the book's blocks; CudaError,
/// OutOfMemory and DeviceUnavailable from the device. options.progress, when set, is called from
/// the calling thread with the fraction of this call's work done. Memory: 64 bytes a block and
/// scenario beyond price_monte_carlo_book's. Any split of the blocks into ranges, priced anywhere
/// on one backend, gives the same moments (tests/finance/monte_carlo_blocks_test.cpp).
std::vector<MonteCarloBlockMoments> price_monte_carlo_blocks(const Context& context,
                                                             const MonteCarloBookView& book,
                                                             const MonteCarloOptions& options,
                                                             std::int64_t first_block,
                                                             std::int64_t block_count);

/// The book's result from the moments of all its blocks, in block order (what
/// price_monte_carlo_blocks returns for consecutive ranges, concatenated), merged per row by the
/// fixed tree with the arithmetic of `computed_on` (the backend that computed them): bitwise
/// price_monte_carlo_book on that backend. Blocks computed on both backends give a result within
/// the check bound of either, whose bits depend on which block ran where. Throws InvalidInput for
/// a bad row or a count of moments other than blocks.count() * scenarios.
MonteCarloBookResult monte_carlo_result_from_blocks(const MonteCarloBookView& book,
                                                    const MonteCarloOptions& options,
                                                    std::span<const MonteCarloBlockMoments> moments,
                                                    Backend computed_on);

}  // namespace gpukit::finance
