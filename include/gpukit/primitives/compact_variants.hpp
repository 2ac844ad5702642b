#pragma once
// The registry of CUDA stream-compaction kernels: gpukit's single pass and CUB's DeviceSelect.
// Tests and `gpukit bench scan` iterate over it.

#include <cstdint>
#include <span>
#include <string_view>

#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/primitives/compact.hpp"

namespace gpukit::primitives {

/// A CUDA launcher: compacts `count` elements at `input` into `output` (device memory, disjoint)
/// on `stream` and writes the number kept to `device_count`; nothing waits.
template <class T>
using CompactLaunch = void(const T* input, T* output, std::int64_t count, KeepPredicate keep,
                           std::int64_t* device_count, ScanWorkspace& workspace,
                           StreamHandle stream);
using CompactLaunchers = PerType<CompactLaunch, PrimitiveTypes>;

struct CompactVariant {
  /// Traffic: one value read per element and one written per kept element.
  VariantInfo info;
  CompactLaunchers launchers;

  template <class T>
  void launch(const T* input, T* output, std::int64_t count, KeepPredicate keep,
              std::int64_t* device_count, ScanWorkspace& workspace, StreamHandle stream) const {
    launchers.get<T>()(input, output, count, keep, device_count, workspace, stream);
  }
};

/// The single pass (the API's default) and CUB; empty without CUDA.
std::span<const CompactVariant> compact_variants();
const CompactVariant& find_compact_variant(std::string_view name);

}  // namespace gpukit::primitives
