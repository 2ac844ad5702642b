#pragma once
// Internal: how the Monte Carlo samples of an option are cut into tiles and lanes, shared by the
// CPU backend and the CUDA kernels.
//
// A tile is 32 lanes x kQuadsPerLane quads x 4 samples. Lane l of tile t takes quads
// t * 32 * kQuadsPerLane + i * 32 + l for i = 0 .. kQuadsPerLane - 1 and their samples 4q .. 4q+3
// in that order; its moments (monte_carlo_statistics.hpp) do not depend on who computes them.

#include <cstdint>

#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_paths.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

/// Which quads lane `lane` of tile `tile` takes: first_quad + 32 i for i < quads, all 4 samples
/// of each but the last, which has last_valid (quads == 0: none).
struct LaneQuads {
  std::int64_t first_quad = 0;
  int quads = 0;
  int last_valid = 0;
};

GPUKIT_HD_INLINE LaneQuads lane_quads(std::int64_t samples, std::int64_t tile, int lane) {
  constexpr std::int64_t kLaneStride = 4 * kLanes;  // samples between a lane's quads
  LaneQuads q;
  q.first_quad = tile * (kLanes * kQuadsPerLane) + lane;
  const std::int64_t left = samples - 4 * q.first_quad;
  if (left <= 0) return q;
  q.quads = left > kLaneStride * (kQuadsPerLane - 1)
                ? kQuadsPerLane
                : static_cast<int>((left + kLaneStride - 1) / kLaneStride);
  const std::int64_t in_last = left - kLaneStride * (q.quads - 1);
  q.last_valid = in_last >= 4 ? 4 : static_cast<int>(in_last);
  return q;
}

/// A lane's moments over its quads, in order; quad_source(i) gives quad i's samples (computed
/// there, or read back from where another warp computed them: the same bits either way).
template <class M, class Real, class QuadSource>
GPUKIT_HD_INLINE Moments<Real> accumulate_lane(const LaneQuads& q, QuadSource&& quad_source) {
  if (q.quads == 0) return {};
  LaneSums<M, Real> sums;
  for (int i = 0; i < q.quads; ++i) {
    const QuadSamples<Real> s = quad_source(i);
    if (i == 0) sums.set_shift(s.x[0], s.control[0], s.half_difference[0]);
    if (i + 1 < q.quads || q.last_valid == 4) {
      for (int j = 0; j < 4; ++j) sums.add(s.x[j], s.control[j], s.half_difference[j]);
    } else {
      for (int j = 0; j < 4; ++j) {  // fixed indices: the arrays stay in registers
        if (j < q.last_valid) sums.add(s.x[j], s.control[j], s.half_difference[j]);
      }
    }
  }
  return sums.moments(static_cast<Real>(4 * (q.quads - 1) + q.last_valid));
}

/// The moments of one lane of tile `tile` of an option with `samples` samples: for the option's
/// kind kKind, or dispatched on it (mixed).
template <bool kFast, class M, PathKind kKind = PathKind::mixed, class Real>
GPUKIT_HD_INLINE Moments<Real> lane_moments(const PathParams<Real>& p, const PhiloxSchedule& keys,
                                            std::int64_t samples, std::int64_t tile, int lane) {
  if constexpr (kKind == PathKind::mixed) {
    // One dispatch per lane, not per quad.
    switch (path_kind(p)) {
      case PathKind::european_one_step:
        return lane_moments<kFast, M, PathKind::european_one_step>(p, keys, samples, tile, lane);
      case PathKind::european:
        return lane_moments<kFast, M, PathKind::european>(p, keys, samples, tile, lane);
      case PathKind::discrete_barrier:
        return lane_moments<kFast, M, PathKind::discrete_barrier>(p, keys, samples, tile, lane);
      case PathKind::asian_arithmetic:
        return lane_moments<kFast, M, PathKind::asian_arithmetic>(p, keys, samples, tile, lane);
      case PathKind::asian_geometric:
        return lane_moments<kFast, M, PathKind::asian_geometric>(p, keys, samples, tile, lane);
      case PathKind::heston:
        return lane_moments<kFast, M, PathKind::heston>(p, keys, samples, tile, lane);
      default:
        return lane_moments<kFast, M, PathKind::continuous_barrier>(p, keys, samples, tile, lane);
    }
  } else {
    const LaneQuads q = lane_quads(samples, tile, lane);
    const PathConstants<Real> c = path_constants(p);
    const auto first = static_cast<std::uint32_t>(q.first_quad);  // below 2^32
    return accumulate_lane<M, Real>(q, [&](int i) {
      return quad_samples<kFast, M, kKind>(c, keys, first + static_cast<std::uint32_t>(i) * kLanes);
    });
  }
}

/// Tiles an option with `samples` samples has.
GPUKIT_HD_INLINE std::int64_t tiles_for(std::int64_t samples) {
  return (samples + kMonteCarloTileSamples - 1) / kMonteCarloTileSamples;
}

}  // namespace gpukit::finance::mc
