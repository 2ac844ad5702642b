#pragma once
// The registry of CUDA scan kernels: the seed's one-block scans (Hillis-Steele, work-efficient,
// with padding), the multi-block scan the seed leaves as the exercise, the single-pass
// deterministic engine, the exact engine (the API's default) and CUB. Tests and `gpukit bench scan`
// iterate over it, so a new entry is tested and measured with no new test or bench code.

#include <cstdint>
#include <limits>
#include <span>
#include <string_view>

#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::primitives {

/// A CUDA launcher: scans `count` elements at `input` into `output` (device memory; `output` may
/// equal `input` when the variant is `in_place`) on `stream`; nothing waits.
template <class T>
using ScanLaunch = void(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
                        ScanWorkspace& workspace, StreamHandle stream);
using ScanLaunchers = PerType<ScanLaunch, PrimitiveTypes>;

struct ScanVariant {
  /// `deterministic`: follows the canonical bracketing (scan_canonical.hpp), bitwise equal to the
  /// CPU backend; `in_place`: `output` may equal `input`. Traffic: one value read and one written
  /// per element.
  VariantInfo info;
  /// The largest count the variant handles (the one-block scans: one block's worth).
  std::int64_t max_count = std::numeric_limits<std::int64_t>::max();
  /// Accumulates integer sums exactly and reports overflow in the workspace; the others wrap.
  bool exact_integer_sums = false;
  ScanLaunchers launchers;

  template <class T>
  void launch(const T* input, T* output, std::int64_t count, ScanOp op, ScanKind kind,
              ScanWorkspace& workspace, StreamHandle stream) const {
    launchers.get<T>()(input, output, count, op, kind, workspace, stream);
  }
};

/// Every variant in ladder order (Hillis-Steele first, CUB last); empty without CUDA.
std::span<const ScanVariant> scan_variants();

/// The variant scan_on_device() uses: `pipelined-lookback` (exact operations on the pipelined
/// engine from 32 MB up on sm_90, below that on the exact engine; floating-point sums and
/// products on the deterministic one).
const ScanVariant& default_scan_variant();

/// Looks a variant up by name; InvalidInput listing the names when there is none.
const ScanVariant& find_scan_variant(std::string_view name);

}  // namespace gpukit::primitives
