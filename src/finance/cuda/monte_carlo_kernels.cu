// Monte Carlo kernels: a warp computes a tile (32 lanes accumulating in registers, then the fixed
// shuffle-down tree), and an option's tiles are merged by the fixed stride-doubling tree, either
// by the block that computed them (one block per option: small problems, one launch) or by a
// merge kernel after a grid-stride tile kernel (large problems). Same tiles, same trees: the same
// bits whichever shape runs (the seed's problem-size study, 000 slides 26-37, without its
// dependence of the result on the launch).

#include <algorithm>
#include <type_traits>

#include <string>
#include "core/cuda/check.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"

namespace gpukit::finance::mc {

namespace {

template <class T>
__device__ __forceinline__ T shuffle_down(T value, int offset) {
  return __shfl_down_sync(0xFFFFFFFFu, value, offset);
}

template <class M, class T>
__device__ __forceinline__ Moments<T> shuffle_down(const Moments<T>& m, int offset) {
  Moments<T> r;
  r.count = shuffle_down(m.count, offset);
  r.mean_x = shuffle_down(m.mean_x, offset);
  r.m2_x = shuffle_down(m.m2_x, offset);
  if constexpr (M::control) {
    r.mean_c = shuffle_down(m.mean_c, offset);
    r.m2_c = shuffle_down(m.m2_c, offset);
    r.co_xc = shuffle_down(m.co_xc, offset);
  }
  if constexpr (M::antithetic) {
    r.mean_d = shuffle_down(m.mean_d, offset);
    r.m2_d = shuffle_down(m.m2_d, offset);
  }
  return r;
}

// The whole warp computes tile `tile` of the option; lane 0 returns its moments. Inlined: every
// operation's rounding is fixed (monte_carlo_paths.hpp, op::), so each kernel gets the same bits.
template <class M, PathKind kKind, class Real>
__device__ __forceinline__ Moments<double> warp_tile(const PathParams<Real>& p,
                                                     const PhiloxSchedule& keys,
                                                     std::int64_t samples, std::int64_t tile,
                                                     int lane) {
  constexpr bool kFast = std::is_same_v<Real, float>;
  Moments<Real> m = lane_moments<kFast, M, kKind>(p, keys, samples, tile, lane);
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    const Moments<Real> other = shuffle_down<M>(m, offset);
    if (lane < offset) m = merge<M>(m, other);
  }
  return convert<double>(m);
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

// Every option of the run has kind kKind (or any kind: mixed).
template <class M, class Real, PathKind kKind>
__global__ void tile_kernel(const PathParams<Real>* __restrict__ params, std::int64_t options,
                            std::int64_t samples, std::int64_t tiles, const PhiloxSchedule keys,
                            Moments<double>* __restrict__ workspace) {
  const std::int64_t warps = std::int64_t{gridDim.x} * blockDim.x / kLanes;
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  for (std::int64_t t = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / kLanes;
       t < options * tiles; t += warps) {
    const std::int64_t option = t / tiles;
    const PathParams<Real> p = params[option];
    const Moments<double> m = warp_tile<M, kKind>(p, keys, samples, t - option * tiles, lane);
    if (lane == 0) workspace[t] = m;
  }
}

// One pass of the stride-doubling tree for strides spacing .. spacing * kMergeGroup / 2: block b
// merges the aligned group of kMergeGroup tiles (taken every `spacing` tiles) of one option in
// shared memory. The merges and their order are those of merge_tiles_in_block, so the bits are
// the same; only the work is spread over many blocks.
constexpr int kMergeGroup = 256;

template <class M>
__global__ void __launch_bounds__(kMergeGroup)
    merge_pass_kernel(std::int64_t tiles, std::int64_t spacing, std::int64_t groups,
                      Moments<double>* __restrict__ workspace,
                      Moments<double>* __restrict__ moments) {
  __shared__ Moments<double> group[kMergeGroup];
  const std::int64_t option = blockIdx.x / groups;
  const std::int64_t first = (blockIdx.x % groups) * kMergeGroup * spacing;
  Moments<double>* tiles_of = workspace + option * tiles;
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
    if (groups == 1) moments[option] = group[0];
  }
}

int multiprocessors() {
  int device = 0, count = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&device));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

template <class M, class Real>
auto tile_kernel_for(PathKind kind) {
  switch (kind) {
    case PathKind::european_one_step:
      return tile_kernel<M, Real, PathKind::european_one_step>;
    case PathKind::european:
      return tile_kernel<M, Real, PathKind::european>;
    case PathKind::discrete_barrier:
      return tile_kernel<M, Real, PathKind::discrete_barrier>;
    case PathKind::continuous_barrier:
      return tile_kernel<M, Real, PathKind::continuous_barrier>;
    default:
      return tile_kernel<M, Real, PathKind::mixed>;
  }
}

template <class M, class Real>
void launch(const PathParams<Real>* params, const DeviceRun& run, Moments<double>* moments,
            void* workspace, cudaStream_t stream, const LaunchConfig& config) {
  if (run.options == 0) return;
  const int threads = config.threads_per_block;
  if (threads < kLanes || threads % kLanes != 0 || threads > 1024) {
    throw InvalidInput("monte carlo: threads per block must be a multiple of 32 in [32, 1024]");
  }
  const std::int64_t tiles = tiles_for(run.samples);
  // The round keys travel as kernel parameters: each round reads its key from the constant bank.
  const PhiloxSchedule keys = philox_schedule(rng::philox_key(run.seed));
  auto* tile_moments = static_cast<Moments<double>*>(workspace);
  const std::int64_t warps_per_block = threads / kLanes;
  LaunchShape shape = config.shape;
  if (shape == LaunchShape::automatic) {
    // The seed's rule, in tiles: when an option's tiles fit one block's warps twice over, one
    // block per option saves the merge launches; beyond that its serial merge tree costs more.
    shape = tiles <= 2 * warps_per_block ? LaunchShape::per_option : LaunchShape::multi_block;
  }
  const auto tile_kernel_of_run = tile_kernel_for<M, Real>(run.kind);
  cudaFuncAttributes attributes{};
  if (shape == LaunchShape::per_option) {
    GPUKIT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, per_option_kernel<M, Real>));
  } else {
    GPUKIT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, tile_kernel_of_run));
  }
  if (threads > attributes.maxThreadsPerBlock) {
    throw InvalidInput("monte carlo: this kernel takes at most " +
                       std::to_string(attributes.maxThreadsPerBlock) + " threads per block");
  }
  if (shape == LaunchShape::per_option) {
    per_option_kernel<M, Real><<<static_cast<unsigned>(run.options), threads, 0, stream>>>(
        params, run.samples, tiles, keys, tile_moments, moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo per_option_kernel");
    return;
  }
  // One wave of resident blocks, each warp striding over the tiles: no block waits for a slot.
  int resident = 0;
  GPUKIT_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, tile_kernel_of_run, threads, 0));
  const std::int64_t wanted = (run.options * tiles + warps_per_block - 1) / warps_per_block;
  const std::int64_t cap = config.max_blocks > 0
                               ? config.max_blocks
                               : std::int64_t{multiprocessors()} * std::max(resident, 1);
  const auto blocks = static_cast<unsigned>(std::min(wanted, cap));
  tile_kernel_of_run<<<blocks, threads, 0, stream>>>(params, run.options, run.samples, tiles, keys,
                                                     tile_moments);
  GPUKIT_CUDA_CHECK_LAUNCH("monte carlo tile_kernel");
  std::int64_t spacing = 1;
  do {
    const std::int64_t groups = (tiles + spacing * kMergeGroup - 1) / (spacing * kMergeGroup);
    merge_pass_kernel<M><<<static_cast<unsigned>(run.options * groups), kMergeGroup, 0, stream>>>(
        tiles, spacing, groups, tile_moments, moments);
    GPUKIT_CUDA_CHECK_LAUNCH("monte carlo merge_pass_kernel");
    spacing *= kMergeGroup;
  } while (spacing < tiles);
}

}  // namespace

std::int64_t workspace_bytes(const DeviceRun& run) {
  return run.options * tiles_for(run.samples) * static_cast<std::int64_t>(sizeof(Moments<double>));
}

template <class Real>
void launch_monte_carlo(const PathParams<Real>* params, const DeviceRun& run,
                        Moments<double>* moments, void* workspace, StreamHandle stream,
                        const LaunchConfig& config) {
  if (run.antithetic && run.control) {
    launch<Mode<true, true>>(params, run, moments, workspace, stream, config);
  } else if (run.antithetic) {
    launch<Mode<true, false>>(params, run, moments, workspace, stream, config);
  } else if (run.control) {
    launch<Mode<false, true>>(params, run, moments, workspace, stream, config);
  } else {
    launch<Mode<false, false>>(params, run, moments, workspace, stream, config);
  }
}

template void launch_monte_carlo<float>(const PathParams<float>*, const DeviceRun&,
                                        Moments<double>*, void*, StreamHandle, const LaunchConfig&);
template void launch_monte_carlo<double>(const PathParams<double>*, const DeviceRun&,
                                         Moments<double>*, void*, StreamHandle,
                                         const LaunchConfig&);

}  // namespace gpukit::finance::mc
