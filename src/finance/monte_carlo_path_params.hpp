#pragma once
// Internal: what the Monte Carlo CPU backend and CUDA kernels know of an option (PathParams,
// computed once on the host), the kinds of path loop, the compile-time statistics mode and the
// tile geometry. See include/gpukit/finance/monte_carlo.hpp for the contract.

#include <cstddef>
#include <cstdint>

#include "gpukit/core/host_device.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

inline constexpr int kLanes = 32;
inline constexpr int kQuadsPerLane = 16;
static_assert(kLanes * kQuadsPerLane * 4 == kMonteCarloTileSamples);

/// One option, precomputed on the host in double and rounded once to Real, so the CPU and the
/// GPU start from the same numbers. Log-prices are relative to the spot: y = ln(S / S0).
template <class Real>
struct PathParams {
  Real strike_over_spot = 0;  // payoffs are computed in units of the spot
  Real drift_dt = 0;          // (r - q - sigma^2/2) dt
  Real vol_sqrt_dt = 0;       // sigma sqrt(dt)
  Real log_barrier = 0;       // ln(B / S0)
  Real bridge_scale = 0;      // -2 / (sigma^2 dt): the bridge crossing exponent's factor
  std::uint32_t steps = 1;
  std::uint32_t option_index = 0;  // the Philox option word: the stream key's bits 0-31
  std::uint32_t stream_high = 0;   // the stream key's bits 32-63 (0 for row numbers)
  std::uint8_t is_put = 0;
  std::uint8_t barrier = 0;  // BarrierType
  std::uint8_t knocked_at_start = 0;
  std::uint8_t continuous = 0;
};

/// The loop a path takes. Kernels are specialized for one kind when every option of a run has it
/// (`mixed`: each tile dispatches on its option's kind); the arithmetic, hence the bits, is the
/// same either way.
enum class PathKind : std::uint8_t {
  mixed,
  european_one_step,
  european,  // several steps (only their sum matters)
  discrete_barrier,
  continuous_barrier,
};

template <class Real>
GPUKIT_HD_INLINE PathKind path_kind(const PathParams<Real>& p) {
  if (p.barrier == static_cast<std::uint8_t>(BarrierType::none)) {
    return p.steps == 1 ? PathKind::european_one_step : PathKind::european;
  }
  return p.continuous ? PathKind::continuous_barrier : PathKind::discrete_barrier;
}

/// The kind every option shares, or mixed (host side: picks the kernel of a run).
template <class Real>
inline PathKind common_path_kind(const PathParams<Real>* params, std::size_t count) {
  if (count == 0) return PathKind::mixed;
  const PathKind first = path_kind(params[0]);
  for (std::size_t i = 1; i < count; ++i) {
    if (path_kind(params[i]) != first) return PathKind::mixed;
  }
  return first;
}

/// The flags that select a kernel's statistics (all compile-time, so the plain path pays for none).
template <bool kAntithetic, bool kControl>
struct Mode {
  static constexpr bool antithetic = kAntithetic;
  static constexpr bool control = kControl;
};

}  // namespace gpukit::finance::mc
