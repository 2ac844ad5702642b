#pragma once
// Internal: the Monte Carlo kernels' launchers (data on the device), used by the dispatch in
// monte_carlo.cpp, the GPU tests (which force each launch shape) and `gpukit bench monte_carlo`.

#include <cstdint>
#include <functional>
#include <span>

#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance::mc {

/// How the tiles are spread over the GPU. The bits of the result never depend on it.
enum class LaunchShape {
  automatic,    // staged for long paths on few tiles, else per_option when an option's tiles
                // fit a block twice over, else multi_block
  per_option,   // one block per option computes its tiles and merges them (one kernel)
  multi_block,  // a grid-stride loop of warps over every (option, tile), then a merge kernel
  staged,       // a block of 16 warps per tile (one quad of each lane per warp), then the merge
                // kernel: long paths on few tiles (always 512 threads per block)
};

struct LaunchConfig {
  LaunchShape shape = LaunchShape::automatic;
  int threads_per_block = 256;  // a multiple of 32, at most 1024
  int max_blocks = 0;           // multi_block grid cap; 0 = enough to fill the device
  /// Tile moments the workspace holds at most (a power of two); smaller values force the grouped
  /// and chunked launches (the tests), with the same bits.
  std::int64_t workspace_tiles = kMonteCarloDeviceWorkspaceTiles;
};

struct DeviceRun {
  std::int64_t options = 0;
  std::int64_t samples = 0;  // per option (antithetic: pairs)
  std::uint64_t seed = 0;
  bool antithetic = false;
  bool control = false;
  /// The kind of every option (common_path_kind), which selects a kernel specialized for it;
  /// mixed always works. A wrong kind gives wrong results: it is the caller's promise.
  PathKind kind = PathKind::mixed;
};

/// The run of the book rows `part`, `samples` each, with options' seed and variance reduction,
/// on the kernel specialized for the rows' common path kind.
template <class Real>
DeviceRun part_run(std::span<const PathParams<Real>> part, std::int64_t samples,
                   const MonteCarloOptions& options) {
  return {static_cast<std::int64_t>(part.size()),
          samples,
          options.seed,
          options.antithetic,
          options.control_variate,
          common_path_kind(part.data(), part.size())};
}

/// Bytes of the tile workspace a run needs: one Moments<double> per tile of every option, at most
/// kMonteCarloDeviceWorkspaceTiles of them (options are launched in groups whose tiles fit, an
/// option with more tiles in aligned chunks), plus one per chunk of such an option. At most about
/// 64 MiB plus 512 bytes at kMonteCarloMaxPaths, whatever the rows and paths.
std::int64_t workspace_bytes(const DeviceRun& run,
                             std::int64_t workspace_tiles = kMonteCarloDeviceWorkspaceTiles);

/// Told the tiles just computed (the launcher then waits for the stream: set only for progress).
using TilesDone = std::function<void(std::int64_t tiles)>;

/// Computes the merged moments of each option into `moments` (device, run.options entries).
/// `params` and `workspace` (workspace_bytes) are device memory; float runs use the hardware's
/// approximations (monte_carlo_normals.hpp, quad_normals<true>). The bits do not depend on the
/// groups and chunks: each chunk is a whole subtree of the fixed per-option tree.
template <class Real>
void launch_monte_carlo(const PathParams<Real>* params, const DeviceRun& run,
                        Moments<double>* moments, void* workspace, StreamHandle stream,
                        const LaunchConfig& config = {}, const TilesDone& tiles_done = {});

/// The moments of fixed blocks of `block_tiles` tiles (a power of two, at most
/// config.workspace_tiles): block b of the options at `params` is tiles [k block_tiles, (k + 1)
/// block_tiles) of option b / per_row, k = b % per_row, per_row = ceil(tiles / block_tiles) (the
/// last block of an option is short). Blocks first_block .. first_block + block_count - 1 go to
/// `block_moments` (device, block_count entries), each its node of the option's fixed tree, so
/// that merging an option's block moments in the same tree gives launch_monte_carlo's bits.
/// `workspace` as for launch_monte_carlo with `run` (workspace_bytes).
template <class Real>
void launch_monte_carlo_blocks(const PathParams<Real>* params, const DeviceRun& run,
                               std::int64_t first_block, std::int64_t block_count,
                               std::int64_t block_tiles, Moments<double>* block_moments,
                               void* workspace, StreamHandle stream,
                               const LaunchConfig& config = {}, const TilesDone& tiles_done = {});

}  // namespace gpukit::finance::mc
