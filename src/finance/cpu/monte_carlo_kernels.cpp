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
#include "gpukit/core/error.hpp"

namespace gpukit::finance::mc {

namespace {

template <bool kAntithetic, bool kControl, class Real>
void cpu_moments_in(const std::vector<PathParams<Real>>& params, std::int64_t samples,
                    std::uint64_t seed, int threads, std::int64_t chunk_tiles,
                    const WorkDone& work_done, std::vector<Moments<double>>& result) {
  using M = Mode<kAntithetic, kControl>;
  const auto options = static_cast<std::int64_t>(params.size());
  const std::int64_t tiles = tiles_for(samples);
  const std::int64_t all = options * tiles;
  // The (option, tile) pairs in order, a chunk at a time: computed in parallel, then pushed in
  // order into the current option's TileTree, so memory does not grow with rows or paths.
  std::vector<Moments<double>> chunk(static_cast<std::size_t>(std::min(all, chunk_tiles)));
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(seed));
  result.assign(static_cast<std::size_t>(options), {});
  TileTree<M> tree;
  for (std::int64_t first = 0; first < all; first += chunk_tiles) {
    const std::int64_t count = std::min(chunk_tiles, all - first);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t t = first + j;
      const std::int64_t option = t / tiles, tile = t % tiles;
      Moments<Real> lanes[kLanes];
      for (int lane = 0; lane < kLanes; ++lane) {
        lanes[lane] = lane_moments<false, M>(params[static_cast<std::size_t>(option)], keys,
                                             samples, tile, lane);
      }
      // The warp's shuffle-down tree: lane l absorbs lane l + offset.
      for (int offset = kLanes / 2; offset > 0; offset /= 2) {
        for (int lane = 0; lane < offset; ++lane)
          lanes[lane] = merge<M>(lanes[lane], lanes[lane + offset]);
      }
      chunk[static_cast<std::size_t>(j)] = convert<double>(lanes[0]);
    }
    double steps_done = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t t = first + j;
      const std::int64_t option = t / tiles;
      tree.push(chunk[static_cast<std::size_t>(j)]);
      if (t % tiles == tiles - 1) result[static_cast<std::size_t>(option)] = tree.finish();
      steps_done += params[static_cast<std::size_t>(option)].steps;
    }
    if (work_done) work_done(steps_done * double(kMonteCarloTileSamples));
  }
}

}  // namespace

template <class Real>
std::vector<Moments<double>> cpu_moments(const std::vector<PathParams<Real>>& params,
                                         std::int64_t samples, std::uint64_t seed, bool antithetic,
                                         bool control, int threads, std::int64_t chunk_tiles,
                                         const WorkDone& work_done) {
  if (chunk_tiles < 1) throw InvalidInput("monte carlo: the tile chunk must be >= 1");
  const int t = threads > 0 ? threads : Context::cpu().effective_cpu_threads();
  std::vector<Moments<double>> result;
  const std::int64_t c = chunk_tiles;
  if (antithetic && control)
    cpu_moments_in<true, true>(params, samples, seed, t, c, work_done, result);
  if (antithetic && !control)
    cpu_moments_in<true, false>(params, samples, seed, t, c, work_done, result);
  if (!antithetic && control)
    cpu_moments_in<false, true>(params, samples, seed, t, c, work_done, result);
  if (!antithetic && !control)
    cpu_moments_in<false, false>(params, samples, seed, t, c, work_done, result);
  return result;
}

#define GPUKIT_MC_INSTANTIATE(Real)                                                                \
  template std::vector<Moments<double>> cpu_moments<Real>(const std::vector<PathParams<Real>>&,    \
                                                          std::int64_t, std::uint64_t, bool, bool, \
                                                          int, std::int64_t, const WorkDone&);
GPUKIT_MC_INSTANTIATE(float)
GPUKIT_MC_INSTANTIATE(double)
#undef GPUKIT_MC_INSTANTIATE

}  // namespace gpukit::finance::mc
