// Monte Carlo kernels: a warp computes a tile (32 lanes accumulating in registers, then the fixed
// shuffle-down tree), and an option's tiles are merged by the fixed stride-doubling tree, either
// by the block that computed them (one block per option: small problems, one launch) or by a
// merge kernel after a grid-stride tile kernel (large problems). For long paths on few tiles a
// block of 16 warps computes each tile (one quad of every lane per warp, staged in shared memory
// and accumulated in order by one warp). Same tiles, same sums, same trees: the same bits
// whichever shape runs (the seed's problem-size study, 000 slides 26-37, without its dependence
// of the result on the launch), and whichever path kind a kernel is specialized for.

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>

#include "core/cuda/check.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "finance/cuda/monte_carlo_warp_tiles.cuh"
#include "finance/monte_carlo_normals.hpp"
#include "finance/monte_carlo_path_params.hpp"
#include "finance/monte_carlo_paths.hpp"
#include "finance/monte_carlo_statistics.hpp"
#include "finance/monte_carlo_tiles.hpp"

namespace gpukit::finance::mc {

namespace {

__device__ __forceinline__ bool full_tile(std::int64_t samples, std::int64_t tile) {
  return (tile + 1) * kMonteCarloTileSamples <= samples;
}

// The whole warp computes tile `tile` of the option; lane 0 returns its moments. Inlined: every
// operation's rounding is fixed (monte_carlo_paths.hpp, rounded::), so each kernel gets the same
// bits.
template <class M, PathKind kKind, class Real>
__device__ __forceinline__ Moments<double> warp_tile(const PathParams<Real>& p,
                                                     const PhiloxSchedule& keys,
                                                     std::int64_t samples, std::int64_t tile,
                                                     int lane) {
  constexpr bool kFast = std::is_same_v<Real, float>;
  return reduce_tile<M>(lane_moments<kFast, M, kKind>(p, keys, samples, tile, lane), lane,
                        full_tile(samples, tile));
}

template <class M>
__device__ __noinline__ Moments<double> merge_device(const Moments<double> a,
                                                     const Moments<double> b) {
  return merge<M>(a, b);
}

template <class M>
__device__ __forceinline__ void merge_tiles_in_block(Moments<double>* tiles, std::int64_t count) {
  for (std::int64_t stride = 1; stride < count; stride *= 2) {
    const std::int64_t pairs = (count + 2 * stride - 1) / (2 * stride);
    for (std::int64_t k = threadIdx.x; k < pairs; k += blockDim.x) {
      const std::int64_t i = 2 * stride * k;
      if (i + stride < count) tiles[i] = merge_device<M>(tiles[i], tiles[i + stride]);
    }
    __syncthreads();
  }
}

template <class M, class Real>
__global__ void per_option_kernel(const PathParams<Real>* __restrict__ params, std::int64_t samples,
                                  std::int64_t tiles, const PhiloxSchedule keys,
                                  Moments<double>* __restrict__ workspace,
                                  Moments<double>* __restrict__ moments) {
  const std::int64_t option = blockIdx.x;
  const PathParams<Real> p = params[option];
  Moments<double>* tiles_of = workspace + option * tiles;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  for (std::int64_t tile = threadIdx.x / kLanes; tile < tiles; tile += blockDim.x / kLanes) {
    const Moments<double> m = warp_tile<M, PathKind::mixed>(p, keys, samples, tile, lane);
    if (lane == 0) tiles_of[tile] = m;
  }
  __syncthreads();
  merge_tiles_in_block<M>(tiles_of, tiles);
  if (threadIdx.x == 0) moments[option] = tiles_of[0];
}

// The float one-step plain kernel is issue-bound: it is held to 32 registers (a full SM of warps;
// ptxas then recomputes a few per-option constants per quad). Measured on the H200 against 40
// registers (48 warps per SM, no recomputation): 647 vs 655 G paths/s at 2^28 paths, but 442 vs
// 336 G paths/s at 2^24, where one tile per warp beats two.
template <class M, class Real, PathKind kKind>
inline constexpr bool kIssueBound =
    std::is_same_v<Real, float>&& kKind == PathKind::european_one_step && !M::antithetic &&
    !M::control;

// Every option of the run has kind kKind (or any kind: mixed).
template <class M, class Real, PathKind kKind>
__global__ void __launch_bounds__(kIssueBound<M, Real, kKind> ? 1024 : 256,
                                  kIssueBound<M, Real, kKind> ? 2 : 1)
    tile_kernel(const PathParams<Real>* __restrict__ params, std::int64_t options,
                std::int64_t samples, std::int64_t first_tile, std::int64_t tiles,
                const PhiloxSchedule keys, Moments<double>* __restrict__ workspace) {
  // Each warp takes a contiguous run of (option, tile) pairs: one division and one load of the
  // option per run, not per tile.
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / kLanes;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kLanes;
  const std::int64_t all = options * tiles;
  const std::int64_t per_warp = (all + warps - 1) / warps;
  std::int64_t t = warp * per_warp;
  const std::int64_t end = std::min(all, t + per_warp);
  if (t >= end) return;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  std::int64_t option = t / tiles, tile = t - option * tiles;
  PathParams<Real> p = params[option];
  for (;;) {
    const Moments<double> m = warp_tile<M, kKind>(p, keys, samples, first_tile + tile, lane);
    if (lane == 0) workspace[t] = m;
    if (++t == end) break;
    if (++tile == tiles) tile = 0, p = params[++option];
  }
}

// Long paths on few tiles (barriers: a quad is 4 paths x `steps` steps): one block of
// kQuadsPerLane warps per tile, warp i computing quad i of every lane, the samples staged in
// shared memory and accumulated in order by warp 0. The lane sums are lane_moments' to the bit,
// with kQuadsPerLane times as many warps to hide the latencies.
constexpr int kStagedThreads = kQuadsPerLane * kLanes;

template <class M, class Real, PathKind kKind>
__global__ void __launch_bounds__(kStagedThreads)
    staged_tile_kernel(const PathParams<Real>* __restrict__ params, std::int64_t options,
                       std::int64_t samples, std::int64_t first_tile, std::int64_t tiles,
                       const PhiloxSchedule keys, Moments<double>* __restrict__ workspace) {
  constexpr bool kFast = std::is_same_v<Real, float>;
  constexpr int kValues = 4 * (1 + int{M::control} + int{M::antithetic});
  constexpr int kControlAt = 4, kDifferenceAt = M::control ? 8 : 4;
  __shared__ Real staged[kQuadsPerLane][kValues][kLanes];
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const int warp = static_cast<int>(threadIdx.x / kLanes);
  for (std::int64_t t = blockIdx.x; t < options * tiles; t += gridDim.x) {
    const std::int64_t option = t / tiles;
    const PathParams<Real> p = params[option];
    const std::int64_t tile = first_tile + (t - option * tiles);
    const LaneQuads q = lane_quads(samples, tile, lane);
    if (warp < q.quads) {
      const PathConstants<Real> c = path_constants(p);
      const QuadSamples<Real> s = quad_samples_of<kFast, M, kKind>(
          p, c, keys, static_cast<std::uint32_t>(q.first_quad + std::int64_t{warp} * kLanes));
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        staged[warp][j][lane] = s.x[j];
        if constexpr (M::control) staged[warp][kControlAt + j][lane] = s.control[j];
        if constexpr (M::antithetic) staged[warp][kDifferenceAt + j][lane] = s.half_difference[j];
      }
    }
    __syncthreads();
    if (warp == 0) {
      const Moments<Real> m = accumulate_lane<M, Real>(q, [&](int i) {
        QuadSamples<Real> s;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          s.x[j] = staged[i][j][lane];
          s.control[j] = M::control ? staged[i][kControlAt + j][lane] : Real(0);
          s.half_difference[j] = M::antithetic ? staged[i][kDifferenceAt + j][lane] : Real(0);
        }
        return s;
      });
      const Moments<double> tile_moments = reduce_tile<M>(m, lane, full_tile(samples, tile));
      if (lane == 0) workspace[t] = tile_moments;
    }
    __syncthreads();
  }
}

// Where the tree's segments lie in the tile workspace: segment o is `length(o)` consecutive tile
// moments from `base(o)`, its root goes to moments[o]. WholeOptions: one segment per option
// (`tiles` each). Blocks: `per_row` segments per option of `row_tiles` tiles, each
// `block_tiles` long but the option's last (kMonteCarloBlockTiles blocks, monte_carlo_blocks.hpp).
struct WholeOptions {
  std::int64_t tiles;
  __device__ std::int64_t base(std::int64_t o) const { return o * tiles; }
  __device__ std::int64_t length(std::int64_t) const { return tiles; }
};

struct Blocks {
  std::int64_t row_tiles, per_row, block_tiles;
  __device__ std::int64_t base(std::int64_t o) const {
    return (o / per_row) * row_tiles + (o % per_row) * block_tiles;
  }
  __device__ std::int64_t length(std::int64_t o) const {
    const std::int64_t left = row_tiles - (o % per_row) * block_tiles;
    return left < block_tiles ? left : block_tiles;
  }
};

// One pass of the stride-doubling tree for strides spacing .. spacing * kMergeGroup / 2: block b
// merges the aligned group of kMergeGroup tiles (taken every `spacing` tiles) of one segment in
// shared memory. The merges and their order are those of merge_tiles_in_block, so the bits are
// the same; only the work is spread over many blocks.
constexpr int kMergeGroup = 256;

template <class M, class Segments>
__global__ void __launch_bounds__(kMergeGroup)
    merge_pass_kernel(Segments segments, std::int64_t spacing, std::int64_t groups,
                      Moments<double>* __restrict__ workspace,
                      Moments<double>* __restrict__ moments) {
  __shared__ Moments<double> group[kMergeGroup];
  const std::int64_t option = blockIdx.x / groups;
  const std::int64_t first = (blockIdx.x % groups) * kMergeGroup * spacing;
  Moments<double>* tiles_of = workspace + segments.base(option);
  const std::int64_t tiles = segments.length(option);
  if (first >= tiles) return;  // a short segment (Blocks' last) has fewer groups
  const std::int64_t count =
      std::min<std::int64_t>(kMergeGroup, (tiles - first + spacing - 1) / spacing);
  if (threadIdx.x < count) group[threadIdx.x] = tiles_of[first + threadIdx.x * spacing];
  __syncthreads();
  for (int stride = 1; stride < kMergeGroup; stride *= 2) {
    const int i = 2 * stride * static_cast<int>(threadIdx.x);
    if (i + stride < count) group[i] = merge_device<M>(group[i], group[i + stride]);
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    tiles_of[first] = group[0];
    if (spacing * kMergeGroup >= tiles) moments[option] = group[0];
  }
}

int multiprocessors() {
  int device = 0, count = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

#define GPUKIT_MC_KERNEL_FOR(name)                          \
  template <class M, class Real>                            \
  auto name##_for(PathKind kind) {                          \
    switch (kind) {                                         \
      case PathKind::european_one_step:                     \
        return name<M, Real, PathKind::european_one_step>;  \
      case PathKind::european:                              \
        return name<M, Real, PathKind::european>;           \
      case PathKind::discrete_barrier:                      \
        return name<M, Real, PathKind::discrete_barrier>;   \
      case PathKind::continuous_barrier:                    \
        return name<M, Real, PathKind::continuous_barrier>; \
      case PathKind::asian_arithmetic:                      \
        return name<M, Real, PathKind::asian_arithmetic>;   \
      case PathKind::asian_geometric:                       \
        return name<M, Real, PathKind::asian_geometric>;    \
      case PathKind::heston:                                \
        return name<M, Real, PathKind::heston>;             \
      default:                                              \
        return name<M, Real, PathKind::mixed>;              \
    }                                                       \
  }
GPUKIT_MC_KERNEL_FOR(tile_kernel)
GPUKIT_MC_KERNEL_FOR(staged_tile_kernel)
#undef GPUKIT_MC_KERNEL_FOR

// Blocks of `kernel` one SM holds, cached per device, kernel and block size (the query costs
// microseconds, as much as a small launch).
template <class Kernel>
int resident_blocks(Kernel kernel, int threads) {
  static std::mutex mutex;
  static std::map<std::tuple<int, const void*, int>, int> cache;
  int device = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::tuple{device, reinterpret_cast<const void*>(kernel), threads};
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto found = cache.find(key); found != cache.end()) return found->second;
  int blocks = 0;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, 0));
  return cache[key] = std::max(blocks, 1);
}

template <class Kernel>
void check_block_size(Kernel kernel, int threads) {
  cudaFuncAttributes attributes{};
  GPUKIT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
  if (threads > attributes.maxThreadsPerBlock) {
    throw InvalidInput("monte carlo: this kernel takes at most " +
                       std::to_string(attributes.maxThreadsPerBlock) + " threads per block");
  }
}

// The fixed tree over each segment of the workspace (`longest`: the longest segment's tiles),
// roots to moments[segment].
template <class M, class Segments>
void merge_segments(std::int64_t segments, std::int64_t longest, const Segments& map,
                    Moments<double>* tile_moments, Moments<double>* moments, cudaStream_t stream) {
  std::int64_t spacing = 1;
  do {
    const std::int64_t groups = (longest + spacing * kMergeGroup - 1) / (spacing * kMergeGroup);
    merge_pass_kernel<M><<<static_cast<unsigned>(segments * groups), kMergeGroup, 0, stream>>>(
        map, spacing, groups, tile_moments, moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo merge_pass_kernel");
    spacing *= kMergeGroup;
  } while (spacing < longest);
}

template <class M>
void merge_tiles(std::int64_t options, std::int64_t tiles, Moments<double>* tile_moments,
                 Moments<double>* moments, cudaStream_t stream) {
  merge_segments<M>(options, tiles, WholeOptions{tiles}, tile_moments, moments, stream);
}

// The launch shape for tiles first_tile .. first_tile + tiles - 1 of each of run.options options.
template <class M, class Real>
LaunchShape choose_shape(const DeviceRun& run, std::int64_t first_tile, std::int64_t tiles,
                         const LaunchConfig& config) {
  const int threads = config.threads_per_block;
  const std::int64_t all_tiles = run.options * tiles;
  const std::int64_t warps_per_block = threads / kLanes;
  LaunchShape shape = config.shape;
  if (shape == LaunchShape::automatic) {
    // Every kind but the one-step European loops over its steps.
    const bool long_paths = run.kind != PathKind::european_one_step && run.kind != PathKind::mixed;
    const std::int64_t sms = multiprocessors();
    const auto lane_kernel = tile_kernel_for<M, Real>(run.kind);
    if (long_paths && all_tiles < sms * resident_blocks(lane_kernel, threads) * warps_per_block) {
      // A warp per tile would leave the device short of warps; quads are costly enough to
      // spread a tile over a block.
      shape = LaunchShape::staged;
    } else {
      // The seed's rule, in tiles: when an option's tiles fit one block's warps twice over, one
      // block per option saves the merge launches; beyond that its serial merge tree costs more.
      shape = tiles <= 2 * warps_per_block ? LaunchShape::per_option : LaunchShape::multi_block;
    }
  }
  if (first_tile != 0 || tiles != tiles_for(run.samples)) {
    // A chunk of an option: per_option computes whole options only.
    if (shape == LaunchShape::per_option) shape = LaunchShape::multi_block;
  }
  return shape;
}

// Computes the moments of tiles first_tile .. first_tile + tiles - 1 of each of run.options
// options into the workspace, option-major (`tiles` a row), with the staged or the multi_block
// kernel (`shape`, never per_option).
template <class M, class Real>
void compute_tiles(const PathParams<Real>* params, const DeviceRun& run, std::int64_t first_tile,
                   std::int64_t tiles, LaunchShape shape, void* workspace, cudaStream_t stream,
                   const LaunchConfig& config) {
  const int threads = config.threads_per_block;
  const std::int64_t all_tiles = run.options * tiles;
  // The round keys travel as kernel parameters: each round reads its key from the constant bank.
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(run.seed));
  auto* tile_moments = static_cast<Moments<double>*>(workspace);
  const std::int64_t warps_per_block = threads / kLanes;
  const std::int64_t sms = multiprocessors();
  if (shape == LaunchShape::staged) {
    const auto staged_kernel = staged_tile_kernel_for<M, Real>(run.kind);
    // Always kQuadsPerLane warps per block (config.threads_per_block does not apply).
    const std::int64_t cap = config.max_blocks > 0
                                 ? config.max_blocks
                                 : sms * resident_blocks(staged_kernel, kStagedThreads);
    const auto blocks = static_cast<unsigned>(std::min(all_tiles, cap));
    staged_kernel<<<blocks, kStagedThreads, 0, stream>>>(params, run.options, run.samples,
                                                         first_tile, tiles, keys, tile_moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo staged_tile_kernel");
  } else {
    const auto lane_kernel = tile_kernel_for<M, Real>(run.kind);
    check_block_size(lane_kernel, threads);
    // One wave of resident blocks, each warp striding over the tiles: no block waits for a slot.
    const std::int64_t wanted = (all_tiles + warps_per_block - 1) / warps_per_block;
    const std::int64_t cap =
        config.max_blocks > 0 ? config.max_blocks : sms * resident_blocks(lane_kernel, threads);
    const auto blocks = static_cast<unsigned>(std::min(wanted, cap));
    lane_kernel<<<blocks, threads, 0, stream>>>(params, run.options, run.samples, first_tile, tiles,
                                                keys, tile_moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo tile_kernel");
  }
}

// Tiles first_tile .. first_tile + tiles - 1 of each of run.options options (all of them, or one
// option's aligned chunk), merged by the fixed tree into moments[option].
template <class M, class Real>
void launch_tiles(const PathParams<Real>* params, const DeviceRun& run, std::int64_t first_tile,
                  std::int64_t tiles, Moments<double>* moments, void* workspace,
                  cudaStream_t stream, const LaunchConfig& config) {
  const LaunchShape shape = choose_shape<M, Real>(run, first_tile, tiles, config);
  auto* tile_moments = static_cast<Moments<double>*>(workspace);
  if (shape == LaunchShape::per_option) {
    const int threads = config.threads_per_block;
    const PhiloxSchedule keys = philox_schedule(rng::philox_key(run.seed));
    check_block_size(per_option_kernel<M, Real>, threads);
    per_option_kernel<M, Real><<<static_cast<unsigned>(run.options), threads, 0, stream>>>(
        params, run.samples, tiles, keys, tile_moments, moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo per_option_kernel");
    return;
  }
  compute_tiles<M>(params, run, first_tile, tiles, shape, workspace, stream, config);
  merge_tiles<M>(run.options, tiles, tile_moments, moments, stream);
}

// The blocks of block_tiles tiles (a power of two) that cover tiles first_tile .. first_tile +
// tiles - 1 (first_tile a multiple of block_tiles) of each of run.options options, each merged by
// the fixed tree to its node of the option's tree: ceil(tiles / block_tiles) roots an option, in
// order, to block_moments.
template <class M, class Real>
void launch_block_tiles(const PathParams<Real>* params, const DeviceRun& run,
                        std::int64_t first_tile, std::int64_t tiles, std::int64_t block_tiles,
                        Moments<double>* block_moments, void* workspace, cudaStream_t stream,
                        const LaunchConfig& config) {
  LaunchShape shape = choose_shape<M, Real>(run, first_tile, tiles, config);
  if (shape == LaunchShape::per_option) shape = LaunchShape::multi_block;
  compute_tiles<M>(params, run, first_tile, tiles, shape, workspace, stream, config);
  const std::int64_t per_row = (tiles + block_tiles - 1) / block_tiles;
  merge_segments<M>(run.options * per_row, std::min(tiles, block_tiles),
                    Blocks{tiles, per_row, block_tiles}, static_cast<Moments<double>*>(workspace),
                    block_moments, stream);
}

// The workspace holds at most kMonteCarloDeviceWorkspaceTiles tile moments: whole options in
// groups whose tiles fit, or an option with more tiles in aligned chunks of that many (a power of
// two), each merged to the node of the fixed tree that covers it, the chunks' nodes then merged by
// the same tree (they follow the workspace). The same merges in the same order: the same bits.
template <class M, class Real>
void launch(const PathParams<Real>* params, const DeviceRun& run, Moments<double>* moments,
            void* workspace, cudaStream_t stream, const LaunchConfig& config,
            const TilesDone& tiles_done) {
  const std::int64_t held = config.workspace_tiles;
  if (held < 1 || (held & (held - 1)) != 0) {
    throw InvalidInput("monte carlo: the workspace's tile count must be a power of two");
  }
  if (run.options == 0) return;
  const int threads = config.threads_per_block;
  if (threads < kLanes || threads % kLanes != 0 || threads > 1024) {
    throw InvalidInput("monte carlo: threads per block must be a multiple of 32 in [32, 1024]");
  }
  auto report = [&](std::int64_t tiles) {
    if (!tiles_done) return;
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    tiles_done(tiles);
  };
  const std::int64_t tiles = tiles_for(run.samples);
  if (tiles <= held) {
    const std::int64_t group = held / tiles;
    for (std::int64_t first = 0; first < run.options; first += group) {
      DeviceRun part = run;
      part.options = std::min(group, run.options - first);
      launch_tiles<M>(params + first, part, 0, tiles, moments + first, workspace, stream, config);
      report(part.options * tiles);
    }
    return;
  }
  auto* chunk_nodes = static_cast<Moments<double>*>(workspace) + held;
  const std::int64_t chunks = (tiles + held - 1) / held;
  DeviceRun one = run;
  one.options = 1;
  for (std::int64_t option = 0; option < run.options; ++option) {
    for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
      const std::int64_t count = std::min(held, tiles - chunk * held);
      launch_tiles<M>(params + option, one, chunk * held, count, chunk_nodes + chunk, workspace,
                      stream, config);
      report(count);
    }
    merge_tiles<M>(1, chunks, chunk_nodes, moments + option, stream);
  }
}

// Blocks first_block .. first_block + block_count - 1 of the options at `params` (block b is
// block b % per_row of option b / per_row, per_row = ceil(tiles / block_tiles)): whole options
// grouped as `launch` groups them where an option is one block, else whole options in groups
// whose tiles fit the workspace, or runs of one option's blocks that fit it. Each block's root is
// its node of the option's fixed tree, so the bits do not depend on how the blocks are grouped.
template <class M, class Real>
void launch_blocks(const PathParams<Real>* params, const DeviceRun& run, std::int64_t first_block,
                   std::int64_t block_count, std::int64_t block_tiles,
                   Moments<double>* block_moments, void* workspace, cudaStream_t stream,
                   const LaunchConfig& config, const TilesDone& tiles_done) {
  const std::int64_t held = config.workspace_tiles;
  if (block_tiles < 1 || (block_tiles & (block_tiles - 1)) != 0 || block_tiles > held) {
    throw InvalidInput(
        "monte carlo: a block's tiles must be a power of two no larger than the workspace");
  }
  if (block_count <= 0) return;
  const std::int64_t tiles = tiles_for(run.samples);
  const std::int64_t per_row = (tiles + block_tiles - 1) / block_tiles;
  if (first_block < 0 || first_block + block_count > run.options * per_row) {
    throw InvalidInput("monte carlo: blocks outside the options given");
  }
  if (per_row == 1) {
    DeviceRun whole = run;
    whole.options = block_count;
    launch<M>(params + first_block, whole, block_moments, workspace, stream, config, tiles_done);
    return;
  }
  auto report = [&](std::int64_t done) {
    if (!tiles_done) return;
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    tiles_done(done);
  };
  const std::int64_t end = first_block + block_count;
  for (std::int64_t b = first_block; b < end;) {
    const std::int64_t row = b / per_row, k = b % per_row;
    DeviceRun part = run;
    if (k == 0 && end - b >= per_row && tiles <= held) {
      part.options = std::min((end - b) / per_row, held / tiles);
      launch_block_tiles<M>(params + row, part, 0, tiles, block_tiles,
                            block_moments + (b - first_block), workspace, stream, config);
      report(part.options * tiles);
      b += part.options * per_row;
    } else {
      const std::int64_t n = std::min({per_row - k, end - b, held / block_tiles});
      const std::int64_t first_tile = k * block_tiles;
      const std::int64_t count = std::min(tiles, (k + n) * block_tiles) - first_tile;
      part.options = 1;
      launch_block_tiles<M>(params + row, part, first_tile, count, block_tiles,
                            block_moments + (b - first_block), workspace, stream, config);
      report(count);
      b += n;
    }
  }
}

}  // namespace

std::int64_t workspace_bytes(const DeviceRun& run, std::int64_t workspace_tiles) {
  const std::int64_t tiles = tiles_for(run.samples);
  const std::int64_t cap = std::max<std::int64_t>(workspace_tiles, 1);
  const std::int64_t held = tiles > cap ? cap : std::min(run.options * tiles, cap);
  const std::int64_t chunk_nodes = tiles > cap ? (tiles + cap - 1) / cap : 0;
  return (held + chunk_nodes) * static_cast<std::int64_t>(sizeof(Moments<double>));
}

template <class Real>
void launch_monte_carlo(const PathParams<Real>* params, const DeviceRun& run,
                        Moments<double>* moments, void* workspace, StreamHandle stream,
                        const LaunchConfig& config, const TilesDone& tiles_done) {
  if (run.antithetic && run.control) {
    launch<Mode<true, true>>(params, run, moments, workspace, stream, config, tiles_done);
  } else if (run.antithetic) {
    launch<Mode<true, false>>(params, run, moments, workspace, stream, config, tiles_done);
  } else if (run.control) {
    launch<Mode<false, true>>(params, run, moments, workspace, stream, config, tiles_done);
  } else {
    launch<Mode<false, false>>(params, run, moments, workspace, stream, config, tiles_done);
  }
}

template <class Real>
void launch_monte_carlo_blocks(const PathParams<Real>* params, const DeviceRun& run,
                               std::int64_t first_block, std::int64_t block_count,
                               std::int64_t block_tiles, Moments<double>* block_moments,
                               void* workspace, StreamHandle stream, const LaunchConfig& config,
                               const TilesDone& tiles_done) {
  const auto go = [&]<class M>(M) {
    launch_blocks<M>(params, run, first_block, block_count, block_tiles, block_moments, workspace,
                     stream, config, tiles_done);
  };
  if (run.antithetic && run.control) {
    go(Mode<true, true>{});
  } else if (run.antithetic) {
    go(Mode<true, false>{});
  } else if (run.control) {
    go(Mode<false, true>{});
  } else {
    go(Mode<false, false>{});
  }
}

template void launch_monte_carlo<float>(const PathParams<float>*, const DeviceRun&,
                                        Moments<double>*, void*, StreamHandle, const LaunchConfig&,
                                        const TilesDone&);
template void launch_monte_carlo<double>(const PathParams<double>*, const DeviceRun&,
                                         Moments<double>*, void*, StreamHandle, const LaunchConfig&,
                                         const TilesDone&);

template void launch_monte_carlo_blocks<float>(const PathParams<float>*, const DeviceRun&,
                                               std::int64_t, std::int64_t, std::int64_t,
                                               Moments<double>*, void*, StreamHandle,
                                               const LaunchConfig&, const TilesDone&);
template void launch_monte_carlo_blocks<double>(const PathParams<double>*, const DeviceRun&,
                                                std::int64_t, std::int64_t, std::int64_t,
                                                Moments<double>*, void*, StreamHandle,
                                                const LaunchConfig&, const TilesDone&);

}  // namespace gpukit::finance::mc
