// The Sobol sampler's CPU backend: every (replicate, tile) pair in parallel (OpenMP), each tile's
// 32 lanes reduced by the warp's tree, the tiles merged in order by the fixed per-replicate tree,
// so the bits do not depend on the thread count. The CUDA twin is
// cuda/monte_carlo_sobol_kernels.cu.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "finance/monte_carlo_sobol.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"

namespace gpukit::finance::mc {

namespace {

template <bool kAntithetic, bool kControl, class Real>
std::vector<Moments<double>> cpu_sobol_in(const SobolBook<Real>& book, int threads,
                                          const WorkDone& work_done) {
  using M = Mode<kAntithetic, kControl>;
  const SobolTables<Real> tables{book.directions.data(), book.bridge.data()};
  const std::int64_t tiles = tiles_for(book.samples);
  const std::int64_t all = static_cast<std::int64_t>(book.rows.size()) * tiles;
  std::vector<Moments<double>> result(book.rows.size());
  std::vector<Moments<double>> chunk(
      static_cast<std::size_t>(std::min(all, kMonteCarloCpuChunkTiles)));
  TileTree<M> tree;
  for (std::int64_t first = 0; first < all; first += kMonteCarloCpuChunkTiles) {
    const std::int64_t count = std::min(kMonteCarloCpuChunkTiles, all - first);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t row = (first + j) / tiles, tile = (first + j) % tiles;
      Moments<Real> lanes[kLanes];
      for (int lane = 0; lane < kLanes; ++lane) {
        lanes[lane] = sobol_lane_moments<M>(book.rows[static_cast<std::size_t>(row)], tables,
                                            book.samples, tile, lane);
      }
      chunk[static_cast<std::size_t>(j)] = convert<double>(merge_lanes_as_a_warp<M>(lanes, kLanes));
    }
    double steps_done = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t row = (first + j) / tiles, tile = (first + j) % tiles;
      tree.push(chunk[static_cast<std::size_t>(j)]);
      if (tile == tiles - 1) result[static_cast<std::size_t>(row)] = tree.finish();
      steps_done += book.rows[static_cast<std::size_t>(row)].params.steps;
    }
    if (work_done) work_done(steps_done * double(kMonteCarloTileSamples));
  }
  return result;
}

}  // namespace

template <class Real>
std::vector<Moments<double>> cpu_sobol_moments(const SobolBook<Real>& book, bool antithetic,
                                               bool control, int threads,
                                               const WorkDone& work_done) {
  if (antithetic && control) return cpu_sobol_in<true, true>(book, threads, work_done);
  if (antithetic) return cpu_sobol_in<true, false>(book, threads, work_done);
  if (control) return cpu_sobol_in<false, true>(book, threads, work_done);
  return cpu_sobol_in<false, false>(book, threads, work_done);
}

template std::vector<Moments<double>> cpu_sobol_moments<float>(const SobolBook<float>&, bool, bool,
                                                               int, const WorkDone&);
template std::vector<Moments<double>> cpu_sobol_moments<double>(const SobolBook<double>&, bool,
                                                                bool, int, const WorkDone&);

}  // namespace gpukit::finance::mc
