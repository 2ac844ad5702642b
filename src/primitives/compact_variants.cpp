#include "gpukit/primitives/compact_variants.hpp"

#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/compact_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
#define GPUKIT_COMPACT_LAUNCHERS(name) \
  &name<std::int32_t>, &name<std::int64_t>, &name<std::uint32_t>, &name<float>, &name<double>
constexpr CompactVariant kVariants[] = {
    {"single-pass", "flags counted by ballots, decoupled look-back, packed coalesced writes", false,
     GPUKIT_COMPACT_LAUNCHERS(launch_compact_single_pass)},
    {"cub-select", "CUB DeviceSelect::If (CUDA toolkit), the vendor baseline", true,
     GPUKIT_COMPACT_LAUNCHERS(launch_compact_cub)},
};
#undef GPUKIT_COMPACT_LAUNCHERS
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
