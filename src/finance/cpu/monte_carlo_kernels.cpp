// The Monte Carlo CPU backend: every (option, tile) pair in parallel (OpenMP), each tile's 32
// lanes reduced by the warp's tree, the tiles merged in order by the fixed per-option tree, so
// the bits do not depend on the thread count or the chunk size. The CUDA twin is
// cuda/monte_carlo_kernels.cu.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_normals.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::finance::mc {

namespace {

// A sample's step on one thread (European, double): 44 ns (gpukit_tune_cpu_threads costs at idle,
// 2^16 paths of one step: 39, 49). The thread rule's figure.
constexpr double kNsPerPathStep = 44;

// Blocks first_block .. first_block + block_count - 1 of `params` (block b: tiles [k block_tiles,
// (k + 1) block_tiles) of option b / per_row, k = b % per_row), each merged by the fixed tree.
template <bool kAntithetic, bool kControl, class Real>
void cpu_blocks_in(const std::vector<PathParams<Real>>& params, std::int64_t samples,
                   std::uint64_t seed, int threads, std::int64_t first_block,
                   std::int64_t block_count, std::int64_t block_tiles, std::int64_t chunk_tiles,
                   const WorkDone& work_done, std::vector<Moments<double>>& result) {
  using M = Mode<kAntithetic, kControl>;
  const std::int64_t tiles = tiles_for(samples);
  const std::int64_t per_row = (tiles + block_tiles - 1) / block_tiles;
  // Tile j of the run (0 .. all - 1) in block order: block first_block + j / block_tiles' tile
  // j % block_tiles, but the short last block of an option shifts the count; `tile_of` walks the
  // blocks instead. The (block, tile) pairs go in order, a chunk at a time: computed in parallel,
  // then pushed in order into the current block's TileTree, so memory does not grow with rows or
  // paths.
  auto block_tile_count = [&](std::int64_t b) {
    return std::min(block_tiles, tiles - (b % per_row) * block_tiles);
  };
  std::int64_t all = 0;
  for (std::int64_t b = first_block; b < first_block + block_count; ++b) all += block_tile_count(b);
  std::vector<Moments<double>> chunk(static_cast<std::size_t>(std::min(all, chunk_tiles)));
  std::vector<std::int64_t> chunk_option(chunk.size()), chunk_tile(chunk.size());
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(seed));
  result.assign(static_cast<std::size_t>(block_count), {});
  TileTree<M> tree;
  std::int64_t block = first_block, in_block = 0;  // the next tile to place
  for (std::int64_t first = 0; first < all; first += chunk_tiles) {
    const std::int64_t count = std::min(chunk_tiles, all - first);
    std::int64_t tile_steps = 0;  // times 2^11 samples: no overflow below 2^32 tiles a chunk
    for (std::int64_t j = 0; j < count; ++j) {
      chunk_option[static_cast<std::size_t>(j)] = block / per_row;
      chunk_tile[static_cast<std::size_t>(j)] = (block % per_row) * block_tiles + in_block;
      tile_steps += params[static_cast<std::size_t>(block / per_row)].steps;
      if (++in_block == block_tile_count(block)) ++block, in_block = 0;
    }
    const int team =
        cpu_threads_for({tile_steps * kMonteCarloTileSamples, kNsPerPathStep, count}, threads);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (std::int64_t j = 0; j < count; ++j) {
      const auto option = static_cast<std::size_t>(chunk_option[static_cast<std::size_t>(j)]);
      const std::int64_t tile = chunk_tile[static_cast<std::size_t>(j)];
      Moments<Real> lanes[kLanes];
      for (int lane = 0; lane < kLanes; ++lane) {
        lanes[lane] = lane_moments<false, M>(params[option], keys, samples, tile, lane);
      }
      chunk[static_cast<std::size_t>(j)] = convert<double>(merge_lanes_as_a_warp<M>(lanes, kLanes));
    }
    double steps_done = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t option = chunk_option[static_cast<std::size_t>(j)];
      const std::int64_t tile = chunk_tile[static_cast<std::size_t>(j)];
      tree.push(chunk[static_cast<std::size_t>(j)]);
      const std::int64_t b = option * per_row + tile / block_tiles;
      if (tile == tiles - 1 || (tile + 1) % block_tiles == 0) {
        result[static_cast<std::size_t>(b - first_block)] = tree.finish();
      }
      steps_done += params[static_cast<std::size_t>(option)].steps;
    }
    if (work_done) work_done(steps_done * double(kMonteCarloTileSamples));
  }
}

template <class Real>
std::vector<Moments<double>> cpu_blocks(const std::vector<PathParams<Real>>& params,
                                        std::int64_t samples, std::uint64_t seed, bool antithetic,
                                        bool control, int threads, std::int64_t first_block,
                                        std::int64_t block_count, std::int64_t block_tiles,
                                        std::int64_t chunk_tiles, const WorkDone& work_done) {
  if (chunk_tiles < 1) throw InvalidInput("monte carlo: the tile chunk must be >= 1");
  if (block_tiles < 1) throw InvalidInput("monte carlo: a block must hold a tile");
  const std::int64_t per_row = (tiles_for(samples) + block_tiles - 1) / block_tiles;
  if (first_block < 0 || block_count < 0 ||
      first_block + block_count > static_cast<std::int64_t>(params.size()) * per_row) {
    throw InvalidInput("monte carlo: blocks outside the options given");
  }
  const int t = threads > 0 ? threads : Context::cpu().effective_cpu_threads();
  std::vector<Moments<double>> result;
  const auto run = [&]<bool kA, bool kC>() {
    cpu_blocks_in<kA, kC>(params, samples, seed, t, first_block, block_count, block_tiles,
                          chunk_tiles, work_done, result);
  };
  if (antithetic && control) run.template operator()<true, true>();
  if (antithetic && !control) run.template operator()<true, false>();
  if (!antithetic && control) run.template operator()<false, true>();
  if (!antithetic && !control) run.template operator()<false, false>();
  return result;
}

}  // namespace

template <class Real>
std::vector<Moments<double>> cpu_moments(const std::vector<PathParams<Real>>& params,
                                         std::int64_t samples, std::uint64_t seed, bool antithetic,
                                         bool control, int threads, std::int64_t chunk_tiles,
                                         const WorkDone& work_done) {
  // An option is one block of all its tiles.
  return cpu_blocks(params, samples, seed, antithetic, control, threads, 0,
                    static_cast<std::int64_t>(params.size()),
                    std::max<std::int64_t>(tiles_for(samples), 1), chunk_tiles, work_done);
}

template <class Real>
std::vector<Moments<double>> cpu_block_moments(const std::vector<PathParams<Real>>& params,
                                               std::int64_t samples, std::uint64_t seed,
                                               bool antithetic, bool control, int threads,
                                               std::int64_t first_block, std::int64_t block_count,
                                               std::int64_t block_tiles, std::int64_t chunk_tiles,
                                               const WorkDone& work_done) {
  return cpu_blocks(params, samples, seed, antithetic, control, threads, first_block, block_count,
                    block_tiles, chunk_tiles, work_done);
}

#define GPUKIT_MC_INSTANTIATE(Real)                                                                \
  template std::vector<Moments<double>> cpu_moments<Real>(const std::vector<PathParams<Real>>&,    \
                                                          std::int64_t, std::uint64_t, bool, bool, \
                                                          int, std::int64_t, const WorkDone&);     \
  template std::vector<Moments<double>> cpu_block_moments<Real>(                                   \
      const std::vector<PathParams<Real>>&, std::int64_t, std::uint64_t, bool, bool, int,          \
      std::int64_t, std::int64_t, std::int64_t, std::int64_t, const WorkDone&);
GPUKIT_MC_INSTANTIATE(float)
GPUKIT_MC_INSTANTIATE(double)
#undef GPUKIT_MC_INSTANTIATE

}  // namespace gpukit::finance::mc
