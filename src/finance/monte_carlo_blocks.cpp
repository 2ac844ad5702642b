// Monte Carlo in fixed blocks (gpukit/finance/monte_carlo_blocks.hpp): the block layout, a range
// of blocks priced on the CPU backend (cpu/monte_carlo_kernels.cpp) or a CUDA device
// (cuda/monte_carlo_kernels.cu), and the result of a book from its blocks' moments, merged by the
// rows' fixed trees with the arithmetic of the backend that computed them.

#include "gpukit/finance/monte_carlo_blocks.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::finance {

namespace {

using mc::Moments;
using mc::OptionInputs;
using mc::PathParams;

static_assert(kMonteCarloBlockTiles > 0 &&
                  (kMonteCarloBlockTiles & (kMonteCarloBlockTiles - 1)) == 0,
              "blocks must be aligned subtrees of the stride-doubling tile tree");
static_assert(kMonteCarloDeviceWorkspaceTiles % kMonteCarloBlockTiles == 0,
              "a device's workspace holds whole blocks");

MonteCarloBlockMoments to_public(const Moments<double>& m) {
  return {m.count, m.mean_x, m.m2_x, m.mean_c, m.m2_c, m.co_xc, m.mean_d, m.m2_d};
}

Moments<double> from_public(const MonteCarloBlockMoments& m) {
  Moments<double> r;
  r.count = m.count, r.mean_x = m.mean_x, r.m2_x = m.m2_x;
  r.mean_c = m.mean_c, r.m2_c = m.m2_c, r.co_xc = m.co_xc;
  r.mean_d = m.mean_d, r.m2_d = m.m2_d;
  return r;
}

// The moments of blocks [first_block, first_block + count) of the rows whose parameters are
// `params` (block numbers relative to params[0]'s first block), on `context`.
template <class Real>
std::vector<Moments<double>> block_moments_on(const Context& context,
                                              const std::vector<PathParams<Real>>& params,
                                              std::int64_t samples, std::int64_t first_block,
                                              std::int64_t count, std::int64_t block_tiles,
                                              const MonteCarloOptions& options,
                                              const mc::WorkDone& work_done) {
  if (context.backend == Backend::cpu) {
    const std::int64_t chunk =
        work_done ? mc::cpu_progress_chunk_tiles<Real>(params, context.effective_cpu_threads())
                  : kMonteCarloCpuChunkTiles;
    return mc::cpu_block_moments(params, samples, options.seed, options.antithetic,
                                 options.control_variate, context.cpu_threads, first_block, count,
                                 block_tiles, chunk, work_done);
  }
#if GPUKIT_HAVE_CUDA
  cuda::set_device(context.cuda_device);
  cuda::Stream stream;
  const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
  // Pieces of at most kMonteCarloDevicePartRows blocks, so that the device holds a bounded number
  // of rows and block moments whatever the range; the launcher bounds the tile workspace.
  const std::int64_t piece = std::min(count, kMonteCarloDevicePartRows);
  const std::int64_t most_rows = std::min<std::int64_t>(static_cast<std::int64_t>(params.size()),
                                                        (piece + per_row - 1) / per_row + 1);
  cuda::DeviceBuffer<PathParams<Real>> device_params(static_cast<std::size_t>(most_rows));
  cuda::DeviceBuffer<Moments<double>> device_moments(static_cast<std::size_t>(piece));
  const mc::DeviceRun largest{
      most_rows,          samples, options.seed, options.antithetic, options.control_variate,
      mc::PathKind::mixed};
  cuda::DeviceBuffer<unsigned char> workspace(
      static_cast<std::size_t>(mc::workspace_bytes(largest)));
  std::vector<Moments<double>> result(static_cast<std::size_t>(count));
  for (std::int64_t done = 0; done < count; done += piece) {
    const std::int64_t first = first_block + done, n = std::min(piece, count - done);
    const std::int64_t row = first / per_row, rows = (first + n - 1) / per_row + 1 - row;
    const std::span<const PathParams<Real>> part(params.data() + row,
                                                 static_cast<std::size_t>(rows));
    const mc::DeviceRun run = mc::part_run(part, samples, options);
    const mc::TilesDone tiles_done = mc::tile_progress(part, work_done);
    device_params.copy_from_host(part);
    mc::launch_monte_carlo_blocks<Real>(device_params.data(), run, first - row * per_row, n,
                                        block_tiles, device_moments.data(), workspace.data(),
                                        stream.handle(), {}, tiles_done);
    stream.synchronize();
    device_moments.copy_to_host(
        std::span<Moments<double>>(result.data() + done, static_cast<std::size_t>(n)));
  }
  return result;
#else
  (void)params, (void)samples, (void)first_block, (void)count, (void)block_tiles, (void)options,
      (void)work_done;
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

template <class Real>
std::vector<MonteCarloBlockMoments> blocks_in(const Context& context,
                                              const MonteCarloBookView& book,
                                              const MonteCarloOptions& options,
                                              std::int64_t first_block, std::int64_t count,
                                              std::int64_t block_tiles) {
  const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
  const std::int64_t samples = mc::samples_per_option(options);
  if (count == 0) return {};
  // The rows the range touches, priced as a book of their own keyed as in the whole book.
  const std::int64_t row = first_block / per_row;
  const std::int64_t rows = (first_block + count - 1) / per_row + 1 - row;
  const MonteCarloBookView part = book_rows(book, row, rows);
  MonteCarloOptions part_options = options;
  part_options.first_option_index += static_cast<std::uint32_t>(row);
  part_options.progress = {};
  const std::vector<OptionInputs> inputs = mc::book_inputs<Real>(part);
  const mc::Scenarios scenarios = mc::scenarios(inputs, options.greeks);
  const auto kinds = static_cast<std::int64_t>(scenarios.rows.size());
  const std::int64_t local_first = first_block - row * per_row;

  // Progress in path-steps, the tiles' padding included (what the backends report).
  const std::int64_t tiles = mc::tiles_for(samples);
  double work_total = 0, work_so_far = 0;
  for (std::int64_t b = local_first; b < local_first + count; ++b) {
    const std::int64_t in_block = std::min(block_tiles, tiles - (b % per_row) * block_tiles);
    work_total += double(in_block) * double(kMonteCarloTileSamples) *
                  inputs[static_cast<std::size_t>(b / per_row)].steps;
  }
  work_total *= double(kinds);
  mc::WorkDone work_done;
  if (options.progress) {
    work_done = [&](double path_steps) {
      work_so_far += path_steps;
      options.progress(work_total > 0 ? std::min(1.0, work_so_far / work_total) : 1.0);
    };
  }

  std::vector<MonteCarloBlockMoments> result(static_cast<std::size_t>(count * kinds));
  for (std::int64_t s = 0; s < kinds; ++s) {
    const std::vector<PathParams<Real>> params =
        mc::book_path_params<Real>(part, scenarios.rows[static_cast<std::size_t>(s)], part_options);
    const std::vector<Moments<double>> moments = block_moments_on(
        context, params, samples, local_first, count, block_tiles, part_options, work_done);
    for (std::int64_t j = 0; j < count; ++j) {
      result[static_cast<std::size_t>(j * kinds + s)] =
          to_public(moments[static_cast<std::size_t>(j)]);
    }
  }
  return result;
}

// A row's moments from its blocks' (`stride` apart in `moments`), by the fixed tree.
template <class M, class MulAdd>
Moments<double> fold_row(const MonteCarloBlockMoments* moments, std::int64_t blocks,
                         std::int64_t stride) {
  mc::TileTree<M, MulAdd> tree;
  for (std::int64_t k = 0; k < blocks; ++k) tree.push(from_public(moments[k * stride]));
  return tree.finish();
}

template <class MulAdd>
Moments<double> fold_row(const MonteCarloOptions& options, const MonteCarloBlockMoments* moments,
                         std::int64_t blocks, std::int64_t stride) {
  using mc::Mode;
  if (options.antithetic && options.control_variate)
    return fold_row<Mode<true, true>, MulAdd>(moments, blocks, stride);
  if (options.antithetic) return fold_row<Mode<true, false>, MulAdd>(moments, blocks, stride);
  if (options.control_variate) return fold_row<Mode<false, true>, MulAdd>(moments, blocks, stride);
  return fold_row<Mode<false, false>, MulAdd>(moments, blocks, stride);
}

template <class Real>
MonteCarloBookResult result_in(const MonteCarloBookView& book, const MonteCarloOptions& options,
                               std::span<const MonteCarloBlockMoments> moments, Backend computed_on,
                               std::int64_t block_tiles) {
  const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
  const std::vector<OptionInputs> inputs = mc::book_inputs<Real>(book);
  const mc::Scenarios scenarios = mc::scenarios(inputs, options.greeks);
  const auto kinds = static_cast<std::int64_t>(scenarios.rows.size());
  if (static_cast<std::int64_t>(moments.size()) != book.count * per_row * kinds) {
    throw InvalidInput(
        fmt::format("monte carlo: {} block moments given for a book of {} blocks in {} scenario{}",
                    moments.size(), book.count * per_row, kinds, kinds == 1 ? "" : "s"));
  }
  std::vector<std::vector<Moments<double>>> rows(static_cast<std::size_t>(kinds),
                                                 std::vector<Moments<double>>(inputs.size()));
  for (std::int64_t s = 0; s < kinds; ++s) {
    for (std::int64_t i = 0; i < book.count; ++i) {
      const MonteCarloBlockMoments* first = moments.data() + (i * per_row) * kinds + s;
      rows[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)] =
          computed_on == Backend::cuda
              ? fold_row<mc::FusedMulAdd>(options, first, per_row, kinds)
              : fold_row<mc::BackendMulAdd>(options, first, per_row, kinds);
    }
  }
  return mc::result_from_moments(scenarios, rows, options);
}

}  // namespace

namespace mc {

std::int64_t blocks_per_row(const MonteCarloOptions& options, std::int64_t block_tiles) {
  const std::int64_t tiles = tiles_for(samples_per_option(options));
  return (tiles + block_tiles - 1) / block_tiles;
}

void check_block_tiles(std::int64_t block_tiles) {
  if (block_tiles < 1 || (block_tiles & (block_tiles - 1)) != 0 ||
      block_tiles > kMonteCarloDeviceWorkspaceTiles) {
    throw InvalidInput(
        fmt::format("monte carlo: {} tiles a block; a power of two up to {} is needed", block_tiles,
                    kMonteCarloDeviceWorkspaceTiles));
  }
}

std::vector<MonteCarloBlockMoments> price_blocks(const Context& context,
                                                 const MonteCarloBookView& book,
                                                 const MonteCarloOptions& options,
                                                 std::int64_t first_block, std::int64_t block_count,
                                                 std::int64_t block_tiles) {
  check_book_and_options(book, options);
  check_block_tiles(block_tiles);
  const std::int64_t total = book.count * blocks_per_row(options, block_tiles);
  if (first_block < 0 || block_count < 0 || first_block > total - block_count) {
    throw InvalidInput(fmt::format("monte carlo: blocks [{}, {}) outside the book's {} blocks",
                                   first_block, first_block + block_count, total));
  }
  return options.precision == Precision::float32
             ? blocks_in<float>(context, book, options, first_block, block_count, block_tiles)
             : blocks_in<double>(context, book, options, first_block, block_count, block_tiles);
}

MonteCarloBookResult result_from_blocks(const MonteCarloBookView& book,
                                        const MonteCarloOptions& options,
                                        std::span<const MonteCarloBlockMoments> moments,
                                        Backend computed_on, std::int64_t block_tiles) {
  check_book_and_options(book, options);
  check_block_tiles(block_tiles);
  return options.precision == Precision::float32
             ? result_in<float>(book, options, moments, computed_on, block_tiles)
             : result_in<double>(book, options, moments, computed_on, block_tiles);
}

}  // namespace mc

MonteCarloBlocks monte_carlo_blocks(const MonteCarloBookView& book,
                                    const MonteCarloOptions& options) {
  mc::check_book_and_options(book, options);
  MonteCarloBlocks blocks;
  blocks.rows = book.count;
  blocks.blocks_per_row = mc::blocks_per_row(options, kMonteCarloBlockTiles);
  const std::int64_t tiles = mc::tiles_for(mc::samples_per_option(options));
  blocks.weight.resize(static_cast<std::size_t>(blocks.count()));
  const double kinds = monte_carlo_scenarios(options);
  for (std::int64_t i = 0; i < book.count; ++i) {
    // Rows are checked where they are priced; an out-of-range count weighs as one step here.
    const std::uint32_t steps =
        book.steps != nullptr && book.steps[i] >= 1 && book.steps[i] <= kMonteCarloMaxSteps
            ? book.steps[i]
            : 1;
    for (std::int64_t k = 0; k < blocks.blocks_per_row; ++k) {
      const std::int64_t in_block =
          std::min(kMonteCarloBlockTiles, tiles - k * kMonteCarloBlockTiles);
      blocks.weight[static_cast<std::size_t>(i * blocks.blocks_per_row + k)] =
          double(in_block) * double(kMonteCarloTileSamples) * steps * kinds;
    }
  }
  return blocks;
}

int monte_carlo_scenarios(const MonteCarloOptions& options) { return options.greeks ? 5 : 1; }

std::vector<MonteCarloBlockMoments> price_monte_carlo_blocks(const Context& context,
                                                             const MonteCarloBookView& book,
                                                             const MonteCarloOptions& options,
                                                             std::int64_t first_block,
                                                             std::int64_t block_count) {
  return mc::price_blocks(context, book, options, first_block, block_count, kMonteCarloBlockTiles);
}

MonteCarloBookResult monte_carlo_result_from_blocks(const MonteCarloBookView& book,
                                                    const MonteCarloOptions& options,
                                                    std::span<const MonteCarloBlockMoments> moments,
                                                    Backend computed_on) {
  return mc::result_from_blocks(book, options, moments, computed_on, kMonteCarloBlockTiles);
}

}  // namespace gpukit::finance
