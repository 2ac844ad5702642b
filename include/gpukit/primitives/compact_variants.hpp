#pragma once
// The registry of CUDA stream-compaction kernels: gpukit's single pass and CUB's DeviceSelect.
// Tests and `gpukit bench scan` iterate over it.

#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "gpukit/core/variant_registry.hpp"

#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives {

struct CompactVariant {
  /// Compacts `count` elements at `input` into `output` (device memory, disjoint) on `stream`
  /// and writes the number kept to `device_count`; nothing waits.
  template <class T>
  using Launcher = void (*)(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                            std::int64_t* device_count, ScanWorkspace& workspace,
                            StreamHandle stream);

  /// Traffic: one value read per element and one written per kept element.
  VariantInfo info;
  ElementTypeLaunchers<Launcher> launchers;

  template <class T>
  void launch(const T* input, T* output, std::int64_t count, KeepPredicate keep,
              std::int64_t* device_count, ScanWorkspace& workspace, StreamHandle stream) const {
    launcher<T>()(input, output, count, keep, device_count, workspace, stream);
  }
  template <class T>
  Launcher<T> launcher() const {
    return launchers.template for_type<T>();
  }
};

/// The single pass (the API's default) and CUB; empty without CUDA.
std::span<const CompactVariant> compact_variants();
const CompactVariant& find_compact_variant(std::string_view name);

}  // namespace gpukit::primitives
