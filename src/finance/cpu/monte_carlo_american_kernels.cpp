// The early-exercise engine's CPU backend: pass 1's paths (OpenMP over quads), the backward
// induction (OpenMP over tiles, each tile's sums by the tile tree, the tiles folded in the fixed
// order, the small solve on one thread) and pass 2 (OpenMP over tiles, the tiles merged in order
// by Monte Carlo's fixed tree). No sum depends on the thread count. The CUDA twin is
// cuda/monte_carlo_american_kernels.cu.

#include <algorithm>
#include <cstdint>
#include <vector>

#include "finance/monte_carlo_american.hpp"
#include "finance/monte_carlo_american_paths.hpp"
#include "finance/monte_carlo_normals.hpp"
#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::finance::mc {

namespace {

// A path's date on one thread (double, Philox and exp): about the European engine's 44 ns.
constexpr double kNsPerPathDate = 44;
// Pass 2's tile moments computed before they are merged in order (256 KiB): also how often a
// row reports its progress (4096 tiles of 1024 paths on 50 dates: about a second on 2 cores).
constexpr std::int64_t kPricingChunkTiles = 4096;

int team_for(std::int64_t path_dates, std::int64_t pieces, int threads) {
  return cpu_threads_for({path_dates, kNsPerPathDate, pieces}, threads);
}

// The mean of a tile's `count` valid values from the tile tree's sum, then their squares about
// it through the same tree.
void tile_mean_and_squares(const double (&values)[kAmericanTileQuads][4],
                           const bool (&valid)[kAmericanTileQuads][4], double count, double& mean,
                           double& m2) {
  double leaves[kAmericanTileQuads];
  for (int i = 0; i < kAmericanTileQuads; ++i) {
    const double* v = values[i];
    leaves[i] = quad_leaf(v[0], v[1], v[2], v[3]);
  }
  mean = tile_tree(leaves) / count;
  for (int i = 0; i < kAmericanTileQuads; ++i) {
    double square[4];
    for (int j = 0; j < 4; ++j) {
      const double d = rounded::sub(values[i][j], mean);
      square[j] = valid[i][j] ? rounded::mul(d, d) : 0.0;
    }
    leaves[i] = quad_leaf(square[0], square[1], square[2], square[3]);
  }
  m2 = tile_tree(leaves);
}

// Pass 2's moments of tile `tile` of samples (count, mean, centred sum of squares; with
// antithetic variates also the half differences').
template <class Real>
Moments<double> pricing_tile(const AmericanPlan<Real>& plan, const PhiloxSchedule& keys,
                             std::int64_t tile) {
  const std::int64_t samples = pricing_samples(plan.params, plan.paths);
  double value[kAmericanTileQuads][4], half_difference[kAmericanTileQuads][4];
  bool valid[kAmericanTileQuads][4];
  for (int i = 0; i < kAmericanTileQuads; ++i) {
    const std::int64_t quad = tile * kAmericanTileQuads + i;
    double x[4] = {0, 0, 0, 0}, d[4] = {0, 0, 0, 0};
    if (4 * quad < samples) {
      quad_samples<false>(plan.params, keys, plan.rules.data(), static_cast<std::uint32_t>(quad), x,
                          d);
    }
    for (int j = 0; j < 4; ++j) {
      valid[i][j] = 4 * quad + j < samples;
      value[i][j] = valid[i][j] ? x[j] : 0.0;
      half_difference[i][j] = valid[i][j] ? d[j] : 0.0;
    }
  }
  Moments<double> m;
  m.count = static_cast<double>(std::min(kAmericanTilePaths, samples - tile * kAmericanTilePaths));
  tile_mean_and_squares(value, valid, m.count, m.mean_x, m.m2_x);
  if (plan.params.antithetic) {
    tile_mean_and_squares(half_difference, valid, m.count, m.mean_d, m.m2_d);
  }
  return m;
}

}  // namespace

void fold_regression_sums(const double* partials, std::int64_t tiles, int count, double sums[]) {
  double slots[kAmericanFoldSlots];
  for (int k = 0; k < count; ++k) {
    const double* sum_k = partials + k * tiles;
    for (int slot = 0; slot < kAmericanFoldSlots; ++slot) {
      double acc = 0;
      for (std::int64_t t = slot; t < tiles; t += kAmericanFoldSlots)
        acc = rounded::add(acc, sum_k[t]);
      slots[slot] = acc;
    }
    sums[k] = tile_tree(slots);
  }
}

Moments<double> merge_chunk_roots_as_the_device(const std::vector<Moments<double>>& roots,
                                                std::int64_t chunk_tiles) {
  if (roots.size() == 1) return roots[0];
  int level = 0;
  while ((std::int64_t{1} << level) < chunk_tiles) ++level;
  TileTree<AmericanMode, FusedMulAdd> tree;
  for (const Moments<double>& root : roots) tree.push(root, level);
  return tree.finish();
}

template <class Real>
Moments<double> american_moments_cpu(AmericanPlan<Real>& plan, int threads,
                                     const WorkDone& work_done) {
  const int t = threads > 0 ? threads : Context::cpu().effective_cpu_threads();
  const AmericanParams<Real>& p = plan.params;
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(plan.seed));
  const std::int64_t dates = p.dates;

  if (dates > 1) {
    // Pass 1: every regression path's spot (and on heston rows its variance) on every date
    // (date-major, a tile-padded stride), and V, the value of the cash flows from maturity back,
    // initially the payoff at maturity.
    const std::int64_t tiles =
        (plan.regression_paths + kAmericanTilePaths - 1) / kAmericanTilePaths;
    const std::int64_t stride = tiles * kAmericanTilePaths;
    std::vector<Real> spots(static_cast<std::size_t>(stride * dates));
    std::vector<Real> variances(p.heston ? static_cast<std::size_t>(stride * dates) : 0);
    std::vector<Real> value(static_cast<std::size_t>(stride));
    const int paths_team = team_for(stride * dates, stride / 4, t);
#pragma omp parallel for schedule(static) num_threads(paths_team)
    for (std::int64_t quad = 0; quad < stride / 4; ++quad) {
      AmericanQuad<Real> q(p);
      for (std::int64_t date = 0; date < dates; ++date) {
        advance_quad<false>(p, keys, static_cast<std::uint32_t>(quad),
                            kAmericanRegressionStepOffset, static_cast<std::uint32_t>(date), q);
        for (int j = 0; j < 4; ++j) {
          const auto at = static_cast<std::size_t>(date * stride + 4 * quad + j);
          spots[at] = q.s[j];
          if (p.heston) variances[at] = q.variance[j];
        }
      }
      for (int j = 0; j < 4; ++j)
        value[static_cast<std::size_t>(4 * quad + j)] = intrinsic(p, q.s[j]);
    }
    // Pass 1's path-dates count half for the paths, half for the dates' regressions.
    const double pass_one = double(plan.regression_paths) * double(dates);
    if (work_done) work_done(0.5 * pass_one);

    // Backwards: at date d, apply date d + 1's rule (fitted in the previous round), discount V to
    // date d, and form date d's regression sums over its in-the-money paths.
    const int sum_count = american_sums(p);
    const int basis = p.heston ? kAmericanHestonBasis : kAmericanBasis;
    const auto variance_at = [&](std::int64_t at) {
      return p.heston ? variances[static_cast<std::size_t>(at)] : Real(0);
    };
    std::vector<double> partials(static_cast<std::size_t>(tiles * sum_count));
    const int tiles_team = team_for(stride, tiles, t);
    for (std::int64_t date = dates - 2; date >= 0; --date) {
      const bool apply_next = date + 1 < dates - 1;
      const DateRule<Real> next = plan.rules[static_cast<std::size_t>(date + 1)];
#pragma omp parallel for schedule(static) num_threads(tiles_team)
      for (std::int64_t tile = 0; tile < tiles; ++tile) {
        double leaves[kAmericanHestonSums][kAmericanTileQuads];
        for (int i = 0; i < kAmericanTileQuads; ++i) {
          const std::int64_t first = (tile * kAmericanTileQuads + i) * 4;
          Real s[4], variance[4], v[4];
          bool in[4];
          for (int j = 0; j < 4; ++j) {
            Real& path_value = value[static_cast<std::size_t>(first + j)];
            if (apply_next) {
              const std::int64_t at = (date + 1) * stride + first + j;
              const Real s_next = spots[static_cast<std::size_t>(at)];
              const Real h_next = intrinsic(p, s_next);
              if (exercises(p, next, s_next, variance_at(at), h_next)) path_value = h_next;
            }
            path_value = rounded::mul(path_value, p.discount_dt);
            s[j] = spots[static_cast<std::size_t>(date * stride + first + j)];
            variance[j] = variance_at(date * stride + first + j);
            v[j] = path_value;
            in[j] = first + j < plan.regression_paths && intrinsic(p, s[j]) > Real(0);
          }
          double leaf[kAmericanHestonSums];
          quad_regression_leaves(p, s, variance, v, in, leaf);
          for (int k = 0; k < sum_count; ++k) leaves[k][i] = leaf[k];
        }
        for (int k = 0; k < sum_count; ++k) {
          partials[static_cast<std::size_t>(k * tiles + tile)] = tile_tree(leaves[k]);
        }
      }
      double sums[kAmericanHestonSums], beta[kAmericanHestonBasis];
      fold_regression_sums(partials.data(), tiles, sum_count, sums);
      solve_regression(sums, basis, beta);
      DateRule<Real>& rule = plan.rules[static_cast<std::size_t>(date)];
      for (int k = 0; k < basis; ++k) rule.beta[k] = static_cast<Real>(beta[k]);
      if (work_done) work_done(0.5 * pass_one / double(dates - 1));
    }
  }

  // Pass 2: new paths under the fitted rule, tile moments merged in order by the fixed tree.
  const std::int64_t samples = pricing_samples(p, plan.paths);
  const std::int64_t tiles = (samples + kAmericanTilePaths - 1) / kAmericanTilePaths;
  TileTree<AmericanMode> tree;
  std::vector<Moments<double>> chunk(static_cast<std::size_t>(std::min(tiles, kPricingChunkTiles)));
  for (std::int64_t first = 0; first < tiles; first += kPricingChunkTiles) {
    const std::int64_t count = std::min(kPricingChunkTiles, tiles - first);
    const int team = team_for(count * kAmericanTilePaths * dates, count, t);
#pragma omp parallel for schedule(dynamic, 1) num_threads(team)
    for (std::int64_t j = 0; j < count; ++j) {
      chunk[static_cast<std::size_t>(j)] = pricing_tile(plan, keys, first + j);
    }
    for (std::int64_t j = 0; j < count; ++j) tree.push(chunk[static_cast<std::size_t>(j)]);
    if (work_done) {
      const std::int64_t done =
          std::min(samples, (first + count) * kAmericanTilePaths) - first * kAmericanTilePaths;
      work_done(double(done) * (p.antithetic ? 2.0 : 1.0) * double(dates));  // paths
    }
  }
  return tree.finish();
}

template Moments<double> american_moments_cpu<float>(AmericanPlan<float>&, int, const WorkDone&);
template Moments<double> american_moments_cpu<double>(AmericanPlan<double>&, int, const WorkDone&);

}  // namespace gpukit::finance::mc
