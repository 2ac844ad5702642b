// Monte Carlo in fixed blocks (gpukit/finance/monte_carlo_blocks.hpp): the block layout, a range
// of blocks priced on the CPU backend (cpu/monte_carlo_kernels.cpp) or a CUDA device
// (cuda/monte_carlo_kernels.cu), and the result of a book from its blocks' moments, merged by the
// rows' fixed trees with the arithmetic of the backend that computed them.

#include "gpukit/finance/monte_carlo_blocks.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_american.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "finance/monte_carlo_sobol.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include <cstring>
#include <optional>

#include "core/worker_lanes.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::finance {

namespace {

using mc::Moments;
using mc::OptionInputs;
using mc::PathParams;

// Row i's GreekMethod read from the view (its model and barrier; unchecked values are refused
// where the row is priced).
mc::GreekMethod row_greek_method(const MonteCarloBookView& book, std::int64_t i,
                                 const MonteCarloOptions& options) {
  if (mc::is_early_exercise(book, i)) return mc::GreekMethod::differences;  // its engine's
  return mc::greek_method(book.model != nullptr ? book.model[i] : AssetModel::black_scholes,
                          book.barrier_type != nullptr ? book.barrier_type[i] : BarrierType::none,
                          options.sampler);
}

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

#if GPUKIT_HAVE_CUDA
// What pricing a range of blocks needs on a device besides the kernels: a stream, the rows' path
// parameters and the block moments on both sides of PCIe (pinned on the host, so that the copies
// are asynchronous and one wait ends a piece), and the tile workspace. A worker lane keeps one
// from call to call (core/worker_lanes.hpp), so that a multi-GPU call makes no stream and no
// allocation and frees nothing (cudaFree waits for the device); any other caller makes one for
// its call. Buffers only grow.
struct DeviceBlockScratch {
  int device = -1;
  std::optional<cuda::Stream> stream;
  cuda::DeviceBuffer<unsigned char> device_params, workspace;
  cuda::DeviceBuffer<Moments<double>> device_moments;
  cuda::PinnedBuffer<unsigned char> host_params;
  cuda::PinnedBuffer<Moments<double>> host_moments;

  // Ready on `on_device` (the current device) with at least the sizes given; a call that failed
  // part-way may have left work in flight on the stream, which is waited for first.
  void prepare(int on_device, std::size_t params_bytes, std::size_t moments,
               std::size_t workspace_bytes) {
    if (device != on_device) *this = DeviceBlockScratch{};
    device = on_device;
    if (stream) {
      stream->synchronize();
    } else {
      stream.emplace();
    }
    grow(device_params, params_bytes);
    grow(host_params, params_bytes);
    grow(device_moments, moments);
    grow(host_moments, moments);
    grow(workspace, workspace_bytes);
  }

  template <class Buffer>
  static void grow(Buffer& buffer, std::size_t count) {
    if (buffer.size() >= count) return;
    buffer = Buffer{};  // release before allocating the larger one
    buffer = Buffer(count);
  }
};
#endif

// The moments of blocks [first_block, first_block + count) of the rows whose parameters are
// `params` (block numbers relative to params[0]'s first block), on `context`, to out[j * stride]
// for block first_block + j.
template <class Real>
void block_moments_on(const Context& context, const std::vector<PathParams<Real>>& params,
                      std::int64_t samples, std::int64_t first_block, std::int64_t count,
                      std::int64_t block_tiles, const MonteCarloOptions& options,
                      const mc::WorkDone& work_done, MonteCarloBlockMoments* out,
                      std::int64_t stride) {
  if (context.backend == Backend::cpu) {
    const std::int64_t chunk =
        work_done ? mc::cpu_progress_chunk_tiles<Real>(params, context.effective_cpu_threads())
                  : kMonteCarloCpuChunkTiles;
    const std::vector<Moments<double>> moments = mc::cpu_block_moments(
        params, samples, options.seed, options.antithetic, options.control_variate,
        context.cpu_threads, first_block, count, block_tiles, chunk, work_done);
    for (std::int64_t j = 0; j < count; ++j) {
      out[j * stride] = to_public(moments[static_cast<std::size_t>(j)]);
    }
    return;
  }
#if GPUKIT_HAVE_CUDA
  cuda::set_device(context.cuda_device);
  const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
  // Pieces of at most kMonteCarloDevicePartRows blocks, so that the device holds a bounded number
  // of rows and block moments whatever the range; the launcher bounds the tile workspace.
  const std::int64_t piece = std::min(count, kMonteCarloDevicePartRows);
  const std::int64_t most_rows = std::min<std::int64_t>(static_cast<std::int64_t>(params.size()),
                                                        (piece + per_row - 1) / per_row + 1);
  const mc::DeviceRun largest{
      most_rows,          samples, options.seed, options.antithetic, options.control_variate,
      mc::PathKind::mixed};
  DeviceBlockScratch own;
  gpukit::detail::LaneCache* lane = gpukit::detail::current_lane_cache();
  DeviceBlockScratch& scratch = lane != nullptr ? lane->get<DeviceBlockScratch>() : own;
  scratch.prepare(
      context.cuda_device, static_cast<std::size_t>(most_rows) * sizeof(PathParams<Real>),
      static_cast<std::size_t>(piece), static_cast<std::size_t>(mc::workspace_bytes(largest)));
  const StreamHandle stream = scratch.stream->handle();
  auto* device_params = reinterpret_cast<PathParams<Real>*>(scratch.device_params.data());
  for (std::int64_t done = 0; done < count; done += piece) {
    const std::int64_t first = first_block + done, n = std::min(piece, count - done);
    const std::int64_t row = first / per_row, rows = (first + n - 1) / per_row + 1 - row;
    const std::span<const PathParams<Real>> part(params.data() + row,
                                                 static_cast<std::size_t>(rows));
    const mc::DeviceRun run = mc::part_run(part, samples, options);
    const mc::TilesDone tiles_done = mc::tile_progress(part, work_done);
    std::memcpy(scratch.host_params.data(), part.data(), part.size_bytes());
    cuda::copy_to_device_async(device_params, scratch.host_params.data(), part.size_bytes(),
                               stream);
    mc::launch_monte_carlo_blocks<Real>(device_params, run, first - row * per_row, n, block_tiles,
                                        scratch.device_moments.data(), scratch.workspace.data(),
                                        stream, {}, tiles_done);
    cuda::copy_to_host_async(scratch.host_moments.data(), scratch.device_moments.data(),
                             static_cast<std::size_t>(n) * sizeof(Moments<double>), stream);
    scratch.stream->synchronize();
    for (std::int64_t j = 0; j < n; ++j) {
      out[(done + j) * stride] = to_public(scratch.host_moments[static_cast<std::size_t>(j)]);
    }
  }
#else
  (void)params, (void)samples, (void)first_block, (void)count, (void)block_tiles, (void)options,
      (void)work_done, (void)out, (void)stride;
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

// Sobol books: a block is one replicate of a row (blocks_per_row = replicates): the moments of
// the entries [first_block, first_block + count) of the rows' sobol_book (row-major, replicates
// inner), to out[j * stride].
template <class Real>
void sobol_blocks_on(const Context& context, const std::vector<OptionInputs>& inputs,
                     const std::vector<PathParams<Real>>& params, std::int64_t first_block,
                     std::int64_t count, const MonteCarloOptions& options,
                     const mc::WorkDone& work_done, MonteCarloBlockMoments* out,
                     std::int64_t stride) {
  mc::SobolBook<Real> book = mc::sobol_book(inputs, params, options);
  book.rows.erase(book.rows.begin() + first_block + count, book.rows.end());
  book.rows.erase(book.rows.begin(), book.rows.begin() + first_block);
  const std::vector<Moments<double>> moments =
      mc::sobol_moments_on(context, book, options, work_done, nullptr);
  for (std::int64_t j = 0; j < count; ++j) {
    out[j * stride] = to_public(moments[static_cast<std::size_t>(j)]);
  }
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
  mc::check_rows<Real>(book, row, rows, options);  // errors name rows of `book`
  const MonteCarloBookView part = book_rows(book, row, rows);
  MonteCarloOptions part_options = options;
  part_options.first_option_index += static_cast<std::uint32_t>(row);
  part_options.progress = {};
  const std::vector<OptionInputs> inputs = mc::book_inputs<Real>(part);
  // The whole book's count of books, which a part's rows may not need all of.
  const mc::Scenarios scenarios =
      mc::scenarios(inputs, options, monte_carlo_scenarios(book, options));
  const auto kinds = static_cast<std::int64_t>(scenarios.rows.size());
  const std::int64_t local_first = first_block - row * per_row;
  const bool sobol = options.sampler == MonteCarloSampler::sobol;

  // Progress in path-steps, the tiles' padding included (what the backends report); an
  // early-exercise row's first block weighs its whole pricing, its other blocks nothing.
  const std::int64_t tiles = mc::tiles_for(sobol ? samples / options.replicates : samples);
  double work_total = 0, work_so_far = 0;
  for (std::int64_t b = local_first; b < local_first + count; ++b) {
    const std::int64_t i = b / per_row;
    if (mc::is_early_exercise(part, i)) {
      if (b % per_row == 0) {
        work_total += double(kinds) *
                      mc::american_work(options.paths, inputs[static_cast<std::size_t>(i)].steps);
      }
      continue;
    }
    const std::int64_t in_block =
        sobol ? tiles : std::min(block_tiles, tiles - (b % per_row) * block_tiles);
    for (const std::vector<OptionInputs>& scenario_rows : scenarios.rows) {
      work_total += double(in_block) * double(kMonteCarloTileSamples) *
                    scenario_rows[static_cast<std::size_t>(i)].steps;
    }
  }
  mc::WorkDone work_done;
  if (options.progress) {
    work_done = [&](double path_steps) {
      work_so_far += path_steps;
      options.progress(work_total > 0 ? std::min(1.0, work_so_far / work_total) : 1.0);
    };
  }

  std::vector<MonteCarloBlockMoments> result(static_cast<std::size_t>(count * kinds));
  // Early-exercise rows: the first block carries the row's moments in every scenario (both
  // passes: the regression needs all of pass 1), the others stay empty.
  std::vector<bool> early(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) {
    early[static_cast<std::size_t>(i)] = mc::is_early_exercise(part, i);
    const std::int64_t block = i * per_row - local_first;
    if (!early[static_cast<std::size_t>(i)] || block < 0 || block >= count) continue;
    const std::vector<Moments<double>> moments =
        mc::american_scenario_moments<Real>(context, book, row + i, options);
    // Its books are central differences' (5 with Greeks); a book the whole book needs beyond
    // them (a heston row's pathwise delta elsewhere) stays empty: it is not read.
    for (std::size_t s = 0; s < moments.size(); ++s) {
      result[static_cast<std::size_t>(block * kinds) + s] = to_public(moments[s]);
    }
    if (work_done) {
      work_done(double(kinds) *
                mc::american_work(options.paths, inputs[static_cast<std::size_t>(i)].steps));
    }
  }
  for (std::int64_t s = 0; s < kinds; ++s) {
    const std::vector<PathParams<Real>> all_params =
        mc::book_path_params<Real>(part, scenarios.rows[static_cast<std::size_t>(s)], part_options);
    // Runs of consecutive European rows, each priced as the rows' blocks of the range.
    for (std::int64_t i = 0; i < rows;) {
      if (early[static_cast<std::size_t>(i)]) {
        ++i;
        continue;
      }
      std::int64_t end = i;
      while (end < rows && !early[static_cast<std::size_t>(end)]) ++end;
      const std::int64_t first = std::max(local_first, i * per_row);
      const std::int64_t last = std::min(local_first + count, end * per_row);
      const std::vector<PathParams<Real>> params(all_params.begin() + i, all_params.begin() + end);
      MonteCarloBlockMoments* out = result.data() + (first - local_first) * kinds + s;
      if (sobol) {
        const std::vector<OptionInputs> run(
            scenarios.rows[static_cast<std::size_t>(s)].begin() + i,
            scenarios.rows[static_cast<std::size_t>(s)].begin() + end);
        sobol_blocks_on(context, run, params, first - i * per_row, last - first, part_options,
                        work_done, out, kinds);
      } else {
        block_moments_on(context, params, samples, first - i * per_row, last - first, block_tiles,
                         part_options, work_done, out, kinds);
      }
      i = end;
    }
  }
  return result;
}

// One block's merge in the fold, on one core (32768 blocks took 0.6 ms on the 2-core CI
// machine's EPYC): the thread rule's figure.
constexpr double kFoldNsPerBlock = 20;

// Every row's moments from its blocks' (row i's block k of scenario s at (i * per_row + k) *
// kinds + s in `moments`), by the fixed tree, merged with MulAdd, into rows[s][i]. The rows are
// independent, and within a row each aligned piece of 2^piece_level blocks is a complete subtree
// of its tree: the pieces of every row are folded side by side on up to `threads` threads, then
// each row's tree takes its pieces whole and its last blocks one by one (TileTree::push of a
// subtree), the same merges with the same operands as block by block, so the same bits for any
// thread count and piece size.
template <class M, class MulAdd>
void fold_rows(std::span<const MonteCarloBlockMoments> moments, std::int64_t per_row,
               std::int64_t kinds, int threads, int piece_level,
               std::vector<std::vector<Moments<double>>>& rows) {
  const auto row_count = static_cast<std::int64_t>(rows.front().size());
  const std::int64_t piece = std::int64_t{1} << piece_level;
  const std::int64_t whole = per_row / piece;  // complete pieces a row
  auto block = [&](std::int64_t s, std::int64_t i, std::int64_t k) {
    return from_public(moments[static_cast<std::size_t>((i * per_row + k) * kinds + s)]);
  };
  std::vector<Moments<double>> nodes(static_cast<std::size_t>(kinds * row_count * whole));
  const auto pieces = static_cast<std::int64_t>(nodes.size());
  const int team = cpu_threads_for(
      {static_cast<std::int64_t>(moments.size()), kFoldNsPerBlock, pieces}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t t = 0; t < pieces; ++t) {
    const std::int64_t s = t / (row_count * whole), i = t / whole % row_count, j = t % whole;
    mc::TileTree<M, MulAdd> tree;
    for (std::int64_t k = j * piece; k < (j + 1) * piece; ++k) tree.push(block(s, i, k));
    nodes[static_cast<std::size_t>(t)] = tree.finish();
  }
  // Each row's tree over its pieces and its last blocks (fewer than 2^piece_level), side by side
  // too where there are many rows.
  const std::int64_t row_merges = kinds * row_count * (whole + per_row - whole * piece);
  const int row_team = cpu_threads_for({row_merges, kFoldNsPerBlock, kinds * row_count}, threads);
#pragma omp parallel for schedule(static) num_threads(row_team)
  for (std::int64_t r = 0; r < kinds * row_count; ++r) {
    const std::int64_t s = r / row_count, i = r % row_count;
    mc::TileTree<M, MulAdd> tree;
    for (std::int64_t j = 0; j < whole; ++j) {
      tree.push(nodes[static_cast<std::size_t>(r * whole + j)], piece_level);
    }
    for (std::int64_t k = whole * piece; k < per_row; ++k) tree.push(block(s, i, k));
    rows[static_cast<std::size_t>(s)][static_cast<std::size_t>(i)] = tree.finish();
  }
}

template <class MulAdd>
void fold_rows(const MonteCarloOptions& options, std::span<const MonteCarloBlockMoments> moments,
               std::int64_t per_row, std::int64_t kinds, int threads, int piece_level,
               std::vector<std::vector<Moments<double>>>& rows) {
  using mc::Mode;
  if (options.antithetic && options.control_variate) {
    fold_rows<Mode<true, true>, MulAdd>(moments, per_row, kinds, threads, piece_level, rows);
  } else if (options.antithetic) {
    fold_rows<Mode<true, false>, MulAdd>(moments, per_row, kinds, threads, piece_level, rows);
  } else if (options.control_variate) {
    fold_rows<Mode<false, true>, MulAdd>(moments, per_row, kinds, threads, piece_level, rows);
  } else {
    fold_rows<Mode<false, false>, MulAdd>(moments, per_row, kinds, threads, piece_level, rows);
  }
}

template <class Real>
MonteCarloBookResult result_in(const MonteCarloBookView& book, const MonteCarloOptions& options,
                               std::span<const MonteCarloBlockMoments> moments, Backend computed_on,
                               std::int64_t block_tiles, const mc::FoldPlan& fold) {
  const std::int64_t per_row = mc::blocks_per_row(options, block_tiles);
  const std::vector<OptionInputs> inputs = mc::book_inputs<Real>(book);
  const mc::Scenarios scenarios =
      mc::scenarios(inputs, options, monte_carlo_scenarios(book, options));
  const auto kinds = static_cast<std::int64_t>(scenarios.rows.size());
  if (static_cast<std::int64_t>(moments.size()) != book.count * per_row * kinds) {
    throw InvalidInput(
        fmt::format("monte carlo: {} block moments given for a book of {} blocks in {} scenario{}",
                    moments.size(), book.count * per_row, kinds, kinds == 1 ? "" : "s"));
  }
  const auto block = [&](std::int64_t s, std::int64_t i, std::int64_t k) {
    return from_public(moments[static_cast<std::size_t>((i * per_row + k) * kinds + s)]);
  };
  std::vector<std::vector<mc::Estimate>> estimates(static_cast<std::size_t>(kinds));
  if (options.sampler == MonteCarloSampler::sobol) {
    // A block is a replicate: the replicates' estimates as one device forms them.
    for (std::int64_t s = 0; s < kinds; ++s) {
      std::vector<Moments<double>> replicates(static_cast<std::size_t>(book.count * per_row));
      for (std::int64_t b = 0; b < book.count * per_row; ++b) {
        replicates[static_cast<std::size_t>(b)] = block(s, b / per_row, b % per_row);
      }
      estimates[static_cast<std::size_t>(s)] =
          mc::sobol_estimates(scenarios.rows[static_cast<std::size_t>(s)], replicates, options);
    }
  } else {
    std::vector<std::vector<Moments<double>>> rows(static_cast<std::size_t>(kinds),
                                                   std::vector<Moments<double>>(inputs.size()));
    // An early-exercise row's blocks after its first are empty: its fold is not read.
    if (book.count > 0) {
      if (computed_on == Backend::cuda) {
        fold_rows<mc::FusedMulAdd>(options, moments, per_row, kinds, fold.threads, fold.piece_level,
                                   rows);
      } else {
        fold_rows<mc::BackendMulAdd>(options, moments, per_row, kinds, fold.threads,
                                     fold.piece_level, rows);
      }
    }
    for (std::int64_t s = 0; s < kinds; ++s) {
      const std::vector<OptionInputs>& in = scenarios.rows[static_cast<std::size_t>(s)];
      std::vector<mc::Estimate>& e = estimates[static_cast<std::size_t>(s)];
      e.resize(in.size());
      for (std::int64_t i = 0; i < book.count; ++i) {
        const auto k = static_cast<std::size_t>(i);
        e[k] = mc::is_early_exercise(book, i)
                   ? mc::american_estimate(in[k], block(s, i, 0), options.antithetic)
                   : mc::estimate(rows[static_cast<std::size_t>(s)][k], in[k], options.antithetic,
                                  options.control_variate);
      }
    }
  }
  return mc::result_from_estimates(scenarios, estimates, options);
}

}  // namespace

namespace mc {

std::int64_t blocks_per_row(const MonteCarloOptions& options, std::int64_t block_tiles) {
  if (options.sampler == MonteCarloSampler::sobol) return options.replicates;
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
                                        Backend computed_on, std::int64_t block_tiles,
                                        const FoldPlan& fold) {
  check_book_and_options(book, options);
  check_block_tiles(block_tiles);
  if (fold.piece_level < 0 || fold.piece_level > 40) {
    throw InvalidInput("monte carlo: a fold's piece level must be in [0, 40]");
  }
  return options.precision == Precision::float32
             ? result_in<float>(book, options, moments, computed_on, block_tiles, fold)
             : result_in<double>(book, options, moments, computed_on, block_tiles, fold);
}

}  // namespace mc

MonteCarloBlocks monte_carlo_blocks(const MonteCarloBookView& book,
                                    const MonteCarloOptions& options) {
  mc::check_book_and_options(book, options);
  MonteCarloBlocks blocks;
  blocks.rows = book.count;
  blocks.blocks_per_row = mc::blocks_per_row(options, kMonteCarloBlockTiles);
  const bool sobol = options.sampler == MonteCarloSampler::sobol;
  const std::int64_t samples = mc::samples_per_option(options);
  const std::int64_t tiles = mc::tiles_for(sobol ? samples / options.replicates : samples);
  blocks.weight.resize(static_cast<std::size_t>(blocks.count()));
  const int kinds = monte_carlo_scenarios(book, options);
  for (std::int64_t i = 0; i < book.count; ++i) {
    // Rows are checked where they are priced; an out-of-range count weighs as one step here.
    const std::uint32_t steps =
        book.steps != nullptr && book.steps[i] >= 1 && book.steps[i] <= kMonteCarloMaxSteps
            ? book.steps[i]
            : 1;
    const bool early = mc::is_early_exercise(book, i);
    // The row's books: the base and its Greeks' of `steps` steps, its idle ones of one step.
    const int full = kinds == 1 ? 1 : 1 + mc::greek_books(row_greek_method(book, i, options));
    const double path_steps = double(steps) * full + double(kinds - full);
    for (std::int64_t k = 0; k < blocks.blocks_per_row; ++k) {
      double work = 0;
      if (early) {
        // The whole Longstaff-Schwartz pricing in the first block (both passes, every book).
        work = k == 0 ? double(full) *
                            mc::american_work(options.paths, std::min(steps, kAmericanMaxDates))
                      : 0;
      } else {
        const std::int64_t in_block =
            sobol ? tiles : std::min(kMonteCarloBlockTiles, tiles - k * kMonteCarloBlockTiles);
        work = double(in_block) * double(kMonteCarloTileSamples) * path_steps;
      }
      blocks.weight[static_cast<std::size_t>(i * blocks.blocks_per_row + k)] = work;
    }
  }
  return blocks;
}

int monte_carlo_scenarios(const MonteCarloBookView& book, const MonteCarloOptions& options) {
  if (!options.greeks) return 1;
  int most = 4;  // Greek books a row needs (mc::GreekMethod)
  for (std::int64_t i = 0; i < book.count; ++i) {
    most = std::max(most, mc::greek_books(row_greek_method(book, i, options)));
  }
  return 1 + most;
}

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
