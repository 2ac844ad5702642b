#pragma once
// The one bracketing every gpukit scan evaluates, so that floating-point scans give the same bits
// on the CPU and the GPU, for every thread count, run and launch.
//
// The input is cut into tiles of kTile = 4096 elements; tile k covers [k*kTile, (k+1)*kTile).
// A tile is kWarps = 8 warp segments of kRows = 4 rows of kLanes = 32 lanes x kVec = 4 elements
// (element e of a tile: warp e / 512, row (e / 128) % 4, lane (e / 4) % 32, slot e % 4), which is
// how the CUDA engine holds it in registers. Elements past n are the identity.
// - slot fold: local[j] = x[0] ⊕ ... ⊕ x[j] over a lane's four elements, left to right;
// - lane scan: a Kogge-Stone scan of the 32 lanes' totals (at distance d = 1, 2, 4, 8, 16, lane
//   l >= d becomes s[l-d] ⊕ s[l]); lane_excl[l] = s[l-1] (identity for lane 0); the row total is
//   s[31];
// - row and warp prefixes: left folds of the row totals within a warp segment, and of the warp
//   totals within the tile, each starting from the identity; the tile aggregate is the fold of all
//   eight warp totals;
// - tile prefixes, in groups of kGroupTiles = 32 consecutive tiles: S[0..31] is the Kogge-Stone
//   scan (as for lanes) of a group's tile aggregates (the identity past the last tile);
//   Q[-1] = carry (initial_value below unless a previous chunk carries in) and
//   Q[m] = Q[m-1] ⊕ S[31] over the groups, left to right (an operation with a `clamp_carry`
//   member, the exact integer sums, saturates each Q[m] through it); tile i of group m has the
//   exclusive prefix E = Q[m-1] (i = 0) or Q[m-1] ⊕ S[i-1]. (A group sum is a shuffle tree on
//   the GPU, so its look-back costs a few shuffles per 32 tiles, not a 32-step fold.)
// - output: prefix = ((E ⊕ warp_prefix) ⊕ row_prefix) ⊕ lane_excl, then
//   inclusive y = prefix ⊕ local[j]; exclusive y = prefix (j = 0) or prefix ⊕ local[j-1].
//
// An operation is a type with `Input`, `Acc`, `Acc identity() const`, `Acc load(Input) const` and
// `Acc operator()(Acc, Acc) const` (the Operation concept, operation.hpp), associative (not
// necessarily commutative) with a true identity. `scan_with` below is the generic operator of the
// C++ API on the CPU; the device engines (cuda/scan.cuh, device::deterministic_scan) take the
// same operation types.

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/core/cpu_threads.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives::canonical_scan {

inline constexpr int kLanes = 32;
inline constexpr int kVec = 4;
inline constexpr int kRows = 4;
inline constexpr int kWarps = 8;
inline constexpr int kRowElements = kLanes * kVec;          // 128
inline constexpr int kWarpElements = kRows * kRowElements;  // 512
inline constexpr int kTile = kWarps * kWarpElements;        // 4096
inline constexpr int kGroupTiles = 32;

/// The Kogge-Stone inclusive scan of 32 values in place: at distance d = 1, 2, 4, 8, 16, element
/// l >= d becomes s[l-d] ⊕ s[l] (the order in which a warp's shuffles combine them).
template <class Op, class Array>
void kogge_stone_scan(const Op& op, Array& s) {
  for (int d = 1; d < kLanes; d *= 2) {
    for (int l = kLanes - 1; l >= d; --l) s[l] = op(s[l - d], s[l]);  // reads the previous level
  }
}

/// P[-1] of a scan nothing carries into: op.initial() when the operation has one (sums start
/// from +0.0, not the identity -0.0), else the identity.
template <class Op>
GPUKIT_HD_INLINE typename Op::Acc initial_value(const Op& op) {
  if constexpr (requires { op.initial(); }) {
    return op.initial();
  } else {
    return op.identity();
  }
}

/// One row of 128 elements (the first `valid` real, the rest the identity): each lane's slot
/// fold in `local`, each lane's exclusive prefix in `lane_excl`; returns the row total.
template <class Op>
typename Op::Acc scan_row(const Op& op, const typename Op::Input* x, int valid,
                          std::array<std::array<typename Op::Acc, kVec>, kLanes>& local,
                          std::array<typename Op::Acc, kLanes>& lane_excl) {
  using Acc = typename Op::Acc;
  std::array<Acc, kLanes> s;
  for (int l = 0; l < kLanes; ++l) {
    for (int j = 0; j < kVec; ++j) {
      const int e = l * kVec + j;
      const Acc v = e < valid ? op.load(x[e]) : op.identity();
      local[l][j] = j == 0 ? v : op(local[l][j - 1], v);
    }
    s[l] = local[l][kVec - 1];
  }
  kogge_stone_scan(op, s);
  lane_excl[0] = op.identity();
  for (int l = 1; l < kLanes; ++l) lane_excl[l] = s[l - 1];
  return s[kLanes - 1];
}

/// The aggregate of one tile of `valid` elements (1 <= valid <= kTile).
template <class Op>
typename Op::Acc tile_aggregate(const Op& op, const typename Op::Input* x, int valid) {
  using Acc = typename Op::Acc;
  std::array<std::array<Acc, kVec>, kLanes> local;
  std::array<Acc, kLanes> lane_excl;
  Acc tile = op.identity();
  for (int w = 0; w < kWarps; ++w) {
    Acc warp = op.identity();
    for (int r = 0; r < kRows; ++r) {
      const int begin = w * kWarpElements + r * kRowElements;
      warp = op(warp, scan_row(op, x + begin, std::clamp(valid - begin, 0, kRowElements), local,
                               lane_excl));
    }
    tile = op(tile, warp);
  }
  return tile;
}

/// Scans one tile of `valid` elements whose exclusive prefix is `tile_prefix`; emit(e, value)
/// receives each output, e counted from the tile's start. Reads a row before writing it, so
/// the output may alias the input.
template <class Op, class Emit>
void scan_tile(const Op& op, const typename Op::Input* x, int valid, typename Op::Acc tile_prefix,
               ScanKind kind, Emit&& emit) {
  using Acc = typename Op::Acc;
  std::array<std::array<Acc, kVec>, kLanes> local;
  std::array<Acc, kLanes> lane_excl;
  Acc warp_prefix = op.identity();
  for (int w = 0; w < kWarps && w * kWarpElements < valid; ++w) {
    const Acc base = op(tile_prefix, warp_prefix);
    Acc row_prefix = op.identity();
    for (int r = 0; r < kRows; ++r) {
      const int begin = w * kWarpElements + r * kRowElements;
      const int row_valid = std::clamp(valid - begin, 0, kRowElements);
      const Acc row_total = scan_row(op, x + begin, row_valid, local, lane_excl);
      const Acc row_base = op(base, row_prefix);
      for (int e = 0; e < row_valid; ++e) {
        const int l = e / kVec, j = e % kVec;
        const Acc prefix = op(row_base, lane_excl[l]);
        if (kind == ScanKind::inclusive) {
          emit(begin + e, op(prefix, local[l][j]));
        } else {
          emit(begin + e, j == 0 ? prefix : op(prefix, local[l][j - 1]));
        }
      }
      row_prefix = op(row_prefix, row_total);
    }
    warp_prefix = op(warp_prefix, row_prefix);
  }
}

/// An element of the CPU scan (both passes) on one thread: 3.2 ns for a double sum
/// (gpukit_tune_cpu_threads costs at idle, 2^22 doubles: 3.2, 3.3). The thread rule's figure.
inline constexpr double kCpuNsPerElement = 3.2;

/// The whole canonical scan of n elements on OpenMP threads: tile aggregates in parallel, the
/// tile prefixes group by group, then every tile's outputs in parallel. Returns Q of the last
/// group, the total including `carry`. emit(i, value) is called once per element, from several
/// threads: as many as the thread rule (core/cpu_threads.hpp) gives for n elements and `threads`
/// (<= 0: the OpenMP default).
template <class Op, class Emit>
typename Op::Acc scan_canonical(const Op& op, const typename Op::Input* x, std::int64_t n,
                                ScanKind kind, typename Op::Acc carry, Emit&& emit,
                                int threads = 0) {
  using Acc = typename Op::Acc;
  const std::int64_t tiles = (n + kTile - 1) / kTile;
  std::vector<Acc> prefix(static_cast<std::size_t>(tiles));
  const auto valid_in = [n](std::int64_t k) {
    return static_cast<int>(std::min<std::int64_t>(kTile, n - k * kTile));
  };
#if defined(_OPENMP)
  const int team = cpu_threads_for({n, kCpuNsPerElement, tiles}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
#else
  (void)threads;
#endif
  for (std::int64_t k = 0; k < tiles; ++k) {
    prefix[static_cast<std::size_t>(k)] = tile_aggregate(op, x + k * kTile, valid_in(k));
  }
  // prefix[k] becomes the exclusive prefix of tile k, group by group.
  Acc group_prefix = carry;
  for (std::int64_t group_begin = 0; group_begin < tiles; group_begin += kGroupTiles) {
    std::array<Acc, kLanes> s;
    for (int i = 0; i < kLanes; ++i) {
      const std::int64_t k = group_begin + i;
      s[i] = k < tiles ? prefix[static_cast<std::size_t>(k)] : op.identity();
    }
    kogge_stone_scan(op, s);
    for (int i = 0; i < kLanes && group_begin + i < tiles; ++i) {
      prefix[static_cast<std::size_t>(group_begin + i)] =
          i == 0 ? group_prefix : op(group_prefix, s[i - 1]);
    }
    group_prefix = op(group_prefix, s[kLanes - 1]);
    if constexpr (requires { op.clamp_carry(group_prefix); }) {
      group_prefix = op.clamp_carry(group_prefix);
    }
  }
  const Acc running = group_prefix;
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) num_threads(team)
#endif
  for (std::int64_t k = 0; k < tiles; ++k) {
    const std::int64_t base = k * kTile;
    scan_tile(op, x + base, valid_in(k), prefix[static_cast<std::size_t>(k)], kind,
              [&](int e, Acc value) { emit(base + e, value); });
  }
  return running;
}

/// An operation made of a value type, a binary function and its identity (Acc = Input = T).
template <class T, class Combine>
struct ValueOp {
  using Input = T;
  using Acc = T;
  Combine combine;
  T identity_value;
  T identity() const { return identity_value; }
  T load(const T& x) const { return x; }
  T operator()(const T& a, const T& b) const { return combine(a, b); }
};

}  // namespace gpukit::primitives::canonical_scan

namespace gpukit::primitives {

/// The generic operator of the C++ API (CPU, OpenMP): scans `input` into `output` (the same
/// span, or disjoint) with `combine`, an associative, not necessarily commutative function of
/// two T with identity `identity`. The canonical bracketing above, so a floating-point operation
/// gives the same bits for every thread count.
template <class T, class Combine>
void scan_with(std::span<const T> input, std::span<T> output, Combine combine, T identity,
               ScanKind kind) {
  if (output.size() != input.size()) {
    throw InvalidInput("scan_with: the output size differs from the input size");
  }
  const canonical_scan::ValueOp<T, Combine> op{combine, identity};
  T* out = output.data();
  canonical_scan::scan_canonical(op, input.data(), static_cast<std::int64_t>(input.size()), kind,
                                 identity, [out](std::int64_t i, const T& v) { out[i] = v; });
}

}  // namespace gpukit::primitives
