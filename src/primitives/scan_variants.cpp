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
#define GPUKIT_SCAN_LAUNCHERS(name) \
  &name<std::int32_t>, &name<std::int64_t>, &name<std::uint32_t>, &name<float>, &name<double>
constexpr std::int64_t kUnlimited = std::numeric_limits<std::int64_t>::max();

// Ladder order: each row is the previous one plus one idea.
// Fields: name, description, seed reference, max count, deterministic, exact integer sums,
// vendor, in place, launchers.
constexpr ScanVariant kVariants[] = {
    {"hillis-steele", "one block, double-buffered, log n steps over every element (n log n work)",
     "004: Hillis & Steele kernel", kOneBlockMaxCount, false, false, false, false,
     GPUKIT_SCAN_LAUNCHERS(launch_hillis_steele)},
    {"work-efficient", "one block, up-sweep then down-sweep of a balanced tree (2n adds)",
     "004: Harris-Sengupta-Owens prescan", kOneBlockMaxCount, false, false, false, false,
     GPUKIT_SCAN_LAUNCHERS(launch_work_efficient)},
    {"work-efficient-padded", "the same, one pad word per 32 shared-memory words",
     "004: bank conflicts and padding", kOneBlockMaxCount, false, false, false, false,
     GPUKIT_SCAN_LAUNCHERS(launch_work_efficient_padded)},
    {"multi-block", "scan 2048-element tiles, scan the tile sums recursively, add back",
     "004: arrays beyond one block (the exercise)", kUnlimited, false, false, false, false,
     GPUKIT_SCAN_LAUNCHERS(launch_multi_block)},
    {"decoupled-lookback",
     "single pass, 4096-element tiles bracketed canonically (bitwise-deterministic floats)",
     "beyond the seeds: Merrill & Garland 2016", kUnlimited, true, true, false, true,
     GPUKIT_SCAN_LAUNCHERS(launch_decoupled_lookback)},
    {"exact-lookback",
     "classic look-back, tiles of up to 64 KB loaded at once, for exact ops; float sum/product: "
     "the row above",
     "beyond the seeds: Merrill & Garland 2016", kUnlimited, true, true, false, true,
     GPUKIT_SCAN_LAUNCHERS(launch_exact_lookback)},
    {"pipelined-lookback",
     "persistent warp-specialised blocks, 32 KB tiles through six bulk-copied stages (sm_90), "
     "exact ops from 32 MB; otherwise the row above (default)",
     "beyond the seeds: Merrill & Garland 2016 on Hopper", kUnlimited, true, true, false, true,
     GPUKIT_SCAN_LAUNCHERS(launch_pipelined_lookback)},
    {"cub", "CUB DeviceScan (CUDA toolkit), the vendor baseline", "vendor", kUnlimited, false,
     false, true, false, GPUKIT_SCAN_LAUNCHERS(launch_cub_scan)},
};
#undef GPUKIT_SCAN_LAUNCHERS
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
