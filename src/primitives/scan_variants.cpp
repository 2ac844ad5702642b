#include "gpukit/primitives/scan_variants.hpp"

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/scan_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;

// A scan reads each element once and writes each once.
constexpr TrafficModel kReadAndWrite{.reads_per_element = 1, .writes_per_element = 1};

// Ladder order: each row is the previous one plus one idea.
constexpr ScanVariant kVariants[] = {
    {.info = {.name = "hillis-steele",
              .description =
                  "one block, double-buffered, log n steps over every element (n log n work)",
              .seed_reference = "004: Hillis & Steele kernel",
              .role = VariantRole::step,
              .traffic = kReadAndWrite},
     .max_count = kOneBlockMaxCount,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_hillis_steele<T>; })},
    {.info = {.name = "work-efficient",
              .description = "one block, up-sweep then down-sweep of a balanced tree (2n adds)",
              .seed_reference = "004: Harris-Sengupta-Owens prescan",
              .role = VariantRole::step,
              .traffic = kReadAndWrite},
     .max_count = kOneBlockMaxCount,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_work_efficient<T>; })},
    {.info = {.name = "work-efficient-padded",
              .description = "the same, one pad word per 32 shared-memory words",
              .seed_reference = "004: bank conflicts and padding",
              .role = VariantRole::step,
              .traffic = kReadAndWrite},
     .max_count = kOneBlockMaxCount,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_work_efficient_padded<T>; })},
    {.info = {.name = "multi-block",
              .description = "scan 2048-element tiles, scan the tile sums recursively, add back",
              .seed_reference = "004: arrays beyond one block (the exercise)",
              .role = VariantRole::step,
              .traffic = kReadAndWrite},
     .launchers = ScanLaunchers::of([]<class T> { return &launch_multi_block<T>; })},
    {.info = {.name = "decoupled-lookback",
              .description = "single pass, 4096-element tiles bracketed canonically "
                             "(bitwise-deterministic floats)",
              .seed_reference = "beyond the seeds: Merrill & Garland 2016",
              .role = VariantRole::step,
              .traffic = kReadAndWrite,
              .deterministic = true,
              .in_place = true},
     .exact_integer_sums = true,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_decoupled_lookback<T>; })},
    {.info = {.name = "exact-lookback",
              .description = "classic look-back, tiles of up to 64 KB loaded at once, for "
                             "exact ops; float sum/product: the row above",
              .seed_reference = "beyond the seeds: Merrill & Garland 2016",
              .role = VariantRole::step,
              .traffic = kReadAndWrite,
              .deterministic = true,
              .in_place = true},
     .exact_integer_sums = true,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_exact_lookback<T>; })},
    {.info = {.name = "pipelined-lookback",
              .description = "persistent warp-specialised blocks, 32 KB tiles through six "
                             "bulk-copied stages (sm_90), exact ops from 32 MB; otherwise the "
                             "row above (default)",
              .seed_reference = "beyond the seeds: Merrill & Garland 2016 on Hopper",
              .role = VariantRole::best,
              .traffic = kReadAndWrite,
              .deterministic = true,
              .in_place = true},
     .exact_integer_sums = true,
     .launchers = ScanLaunchers::of([]<class T> { return &launch_pipelined_lookback<T>; })},
    {.info = {.name = "cub",
              .description = "CUB DeviceScan (CUDA toolkit), the vendor baseline",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kReadAndWrite},
     .launchers = ScanLaunchers::of([]<class T> { return &launch_cub_scan<T>; })},
};
constexpr std::string_view kDefaultVariant = "pipelined-lookback";
#endif

}  // namespace

std::span<const ScanVariant> scan_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const ScanVariant& default_scan_variant() {
#if GPUKIT_HAVE_CUDA
  return find_scan_variant(kDefaultVariant);
#else
  throw DeviceUnavailable("scan CUDA variants: this gpukit was built without CUDA");
#endif
}

const ScanVariant& find_scan_variant(std::string_view name) {
  return find_variant(scan_variants(), name, "scan");
}

}  // namespace gpukit::primitives
