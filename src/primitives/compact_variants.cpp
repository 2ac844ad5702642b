#include "gpukit/primitives/compact_variants.hpp"

#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/compact_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
// A compaction reads each element once and writes each kept element once.
constexpr TrafficModel kReadAndKeptWrite{.reads_per_element = 1, .writes_per_element = 1};

constexpr CompactVariant kVariants[] = {
    {.info = {.name = "single-pass",
              .description =
                  "flags counted by ballots, decoupled look-back, packed coalesced writes",
              .seed_reference = "004: stream compaction",
              .role = VariantRole::best,
              .traffic = kReadAndKeptWrite},
     .launchers = CompactLaunchers::of([]<class T> { return &launch_compact_single_pass<T>; })},
    {.info = {.name = "cub-select",
              .description = "CUB DeviceSelect::If (CUDA toolkit), the vendor baseline",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kReadAndKeptWrite},
     .launchers = CompactLaunchers::of([]<class T> { return &launch_compact_cub<T>; })},
};
#endif

}  // namespace

std::span<const CompactVariant> compact_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const CompactVariant& find_compact_variant(std::string_view name) {
  return find_variant(compact_variants(), name, "compact");
}

}  // namespace gpukit::primitives
