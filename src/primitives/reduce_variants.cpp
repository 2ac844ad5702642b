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

// A reduction reads each element once; its one result is not counted.
constexpr TrafficModel kOneRead{.reads_per_element = 1, .writes_per_element = 0};

// Ladder order: within each group, each row is the previous one plus one idea.
constexpr ReduceVariant kVariants[] = {
    {.info = {.name = "interleaved-divergent",
              .description = "kernel 1: interleaved addressing, `tid % (2*s)` diverges",
              .seed_reference = "000 slides 63-96, 001: kernel 1",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of(
         []<class T> { return &launch_seed_kernel<T, SeedReduceKernel::interleaved_divergent>; })},
    {.info = {.name = "interleaved-bank-conflicts",
              .description = "kernel 2: strided index, no divergence, bank conflicts",
              .seed_reference = "000 slides 63-96, 001: kernel 2",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of([]<class T> {
       return &launch_seed_kernel<T, SeedReduceKernel::interleaved_bank_conflicts>;
     })},
    {.info = {.name = "sequential-addressing",
              .description = "kernel 3: reversed loop, threadID-based indexing, conflict free",
              .seed_reference = "000 slides 63-96, 001: kernel 3",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of(
         []<class T> { return &launch_seed_kernel<T, SeedReduceKernel::sequential_addressing>; })},
    {.info = {.name = "first-add-during-load",
              .description = "kernel 4: two elements per thread, added while loading",
              .seed_reference = "000 slides 63-96, 001: kernel 4",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of(
         []<class T> { return &launch_seed_kernel<T, SeedReduceKernel::first_add_during_load>; })},
    {.info = {.name = "unroll-last-warp",
              .description = "kernel 5: the last six steps unrolled in one warp (with __syncwarp)",
              .seed_reference = "000 slides 63-96, 001: kernel 5",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of(
         []<class T> { return &launch_seed_kernel<T, SeedReduceKernel::unroll_last_warp>; })},
    {.info = {.name = "completely-unrolled",
              .description = "kernel 6: the whole tree unrolled for a template block size",
              .seed_reference = "000 slides 63-96, 001: kernel 6",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_completely_unrolled<T>; })},
    {.info = {.name = "multiple-elements-per-thread",
              .description = "kernel 7: grid-stride adds per thread, 64 blocks x 128",
              .seed_reference = "000 slides 63-96, 001: kernel 7",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers =
         ReduceLaunchers::of([]<class T> { return &launch_multiple_elements_per_thread<T>; })},
    {.info = {.name = "consecutive-work-blocks",
              .description = "CS 152 method 0: each thread sums 64 consecutive elements",
              .seed_reference = "003 method 0",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_consecutive_work_blocks<T>; })},
    {.info = {.name = "work-blocks-tree",
              .description = "CS 152 method 4: 8 consecutive elements per thread, then a tree",
              .seed_reference = "003 method 4",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_work_blocks_tree<T>; })},
    {.info = {.name = "grid-stride-consecutive",
              .description = "CS 152 method 5: grid-stride loop, 8192 blocks x 1024",
              .seed_reference = "003 method 5",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_grid_stride_consecutive<T>; })},
    {.info = {.name = "vector-loads",
              .description = "SM-count grid, 4 x 16-byte loads in flight per thread, two passes",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_vector_loads<T>; })},
    {.info = {.name = "warp-shuffle-one-pass",
              .description = "as vector-loads, shuffle/redux.sync tree, last-block finish",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::step,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_warp_shuffle_one_pass<T>; })},
    {.info = {.name = "deterministic-tiles",
              .description = "fixed 16384-element tiles and a fixed tree, one launch (default)",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::best,
              .traffic = kOneRead,
              .deterministic = true},
     .exact_integer_sums = true,
     .takes_block_threads = true,
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_deterministic<T>; })},
    {.info = {.name = "cub",
              .description = "CUB DeviceReduce (CUDA toolkit), the vendor baseline",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kOneRead},
     .launchers = ReduceLaunchers::of([]<class T> { return &launch_cub<T>; })},
};
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
