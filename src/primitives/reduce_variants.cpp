#include "gpukit/primitives/reduce_variants.hpp"

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/reduce_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
#define GPUKIT_REDUCE_LAUNCHERS(name) \
  &name<std::int32_t>, &name<std::int64_t>, &name<std::uint32_t>, &name<float>, &name<double>

// Ladder order: within each group, each row is the previous one plus one idea.
constexpr ReduceVariant kVariants[] = {
    {"interleaved-divergent", "kernel 1: interleaved addressing, `tid % (2*s)` diverges",
     "000 slides 63-96, 001: kernel 1", false, false, false, true,
     GPUKIT_REDUCE_LAUNCHERS(launch_interleaved_divergent)},
    {"interleaved-bank-conflicts", "kernel 2: strided index, no divergence, bank conflicts",
     "000 slides 63-96, 001: kernel 2", false, false, false, true,
     GPUKIT_REDUCE_LAUNCHERS(launch_interleaved_bank_conflicts)},
    {"sequential-addressing", "kernel 3: reversed loop, threadID-based indexing, conflict free",
     "000 slides 63-96, 001: kernel 3", false, false, false, true,
     GPUKIT_REDUCE_LAUNCHERS(launch_sequential_addressing)},
    {"first-add-during-load", "kernel 4: two elements per thread, added while loading",
     "000 slides 63-96, 001: kernel 4", false, false, false, true,
     GPUKIT_REDUCE_LAUNCHERS(launch_first_add_during_load)},
    {"unroll-last-warp", "kernel 5: the last six steps unrolled in one warp (with __syncwarp)",
     "000 slides 63-96, 001: kernel 5", false, false, false, true,
     GPUKIT_REDUCE_LAUNCHERS(launch_unroll_last_warp)},
    {"completely-unrolled", "kernel 6: the whole tree unrolled for a template block size",
     "000 slides 63-96, 001: kernel 6", false, false, false, false,
     GPUKIT_REDUCE_LAUNCHERS(launch_completely_unrolled)},
    {"multiple-elements-per-thread", "kernel 7: grid-stride adds per thread, 64 blocks x 128",
     "000 slides 63-96, 001: kernel 7", false, false, false, false,
     GPUKIT_REDUCE_LAUNCHERS(launch_multiple_elements_per_thread)},
    {"consecutive-work-blocks", "CS 152 method 0: each thread sums 64 consecutive elements",
     "003 method 0", false, false, false, false,
     GPUKIT_REDUCE_LAUNCHERS(launch_consecutive_work_blocks)},
    {"work-blocks-tree", "CS 152 method 4: 8 consecutive elements per thread, then a tree",
     "003 method 4", false, false, false, false, GPUKIT_REDUCE_LAUNCHERS(launch_work_blocks_tree)},
    {"grid-stride-consecutive", "CS 152 method 5: grid-stride loop, 8192 blocks x 1024",
     "003 method 5", false, false, false, false,
     GPUKIT_REDUCE_LAUNCHERS(launch_grid_stride_consecutive)},
    {"vector-loads", "SM-count grid, 4 x 16-byte loads in flight per thread, two passes",
     "beyond the seeds", false, false, false, false, GPUKIT_REDUCE_LAUNCHERS(launch_vector_loads)},
    {"warp-shuffle-one-pass", "as vector-loads, shuffle/redux.sync tree, last-block finish",
     "beyond the seeds", false, false, false, false,
     GPUKIT_REDUCE_LAUNCHERS(launch_warp_shuffle_one_pass)},
    {"deterministic-tiles", "fixed 16384-element tiles and a fixed tree, one launch (default)",
     "beyond the seeds", true, true, false, true, GPUKIT_REDUCE_LAUNCHERS(launch_deterministic)},
    {"cub", "CUB DeviceReduce (CUDA toolkit), the vendor baseline", "vendor", false, false, true,
     false, GPUKIT_REDUCE_LAUNCHERS(launch_cub)},
};
#undef GPUKIT_REDUCE_LAUNCHERS
constexpr std::string_view kDefaultVariant = "deterministic-tiles";
#endif

}  // namespace

std::span<const ReduceVariant> reduce_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const ReduceVariant& default_reduce_variant() {
#if GPUKIT_HAVE_CUDA
  return find_reduce_variant(kDefaultVariant);
#else
  throw DeviceUnavailable("reduction CUDA variants: this gpukit was built without CUDA");
#endif
}

const ReduceVariant& find_reduce_variant(std::string_view name) {
  return find_variant(reduce_variants(), name, "reduction");
}

}  // namespace gpukit::primitives
