#pragma once
// Parallel prefix scan (seed 004): inclusive and exclusive sum, product, min and max scans of an
// array in host memory or on a CUDA device, for int32, int64, uint32, float and double.
//
// Definitions. With x the input and ⊕ the operation, the inclusive scan is
// y[i] = x[0] ⊕ ... ⊕ x[i] and the exclusive scan is y[0] = identity, y[i] = x[0] ⊕ ... ⊕ x[i-1].
// Identities: sum 0 (-0.0 for floating point, the IEEE additive identity), product 1, min the
// largest value (+Inf for floating point), max the lowest (-Inf).
//
// Integer overflow rule. Outputs keep the input's type. Integer sums are exact: they accumulate
// in a wider type (int64 for int32, uint64 for uint32, 128 bits for int64), and when any output
// does not fit the type, the scan throws InvalidInput naming the first such element (the output
// array's contents are then unspecified). Integer products wrap modulo 2^32 or 2^64 (two's
// complement), as in the reduction. Min and max cannot overflow.
//
// Floating point: deterministic by design. Every backend evaluates one fixed bracketing
// (scan_canonical.hpp): 4096-element tiles, each scanned in a fixed order, and the tiles' sums
// combined by a fixed tree within groups of 32 tiles and left to right across groups. The CPU
// (OpenMP), the single-pass CUDA engine and the chunked host path give the same bits on every run,
// thread count and GPU. It is not the sequential loop's order: the rounding differs from
// `scan_sequential` by a few ulps of the partial sums of |x|.
//
// NaN and signed zero (as in the reduction): a NaN makes every later min/max output the
// canonical quiet NaN; -0.0 orders below +0.0 in min/max; sums and products follow IEEE.
//
// On the device, exact operations (every integer operation, floating-point min and max) run on a
// classic decoupled look-back (device::exact_scan and exact_scan_sm90 in cuda/scan.cuh), whose
// bracketing depends on timing but whose results cannot; floating-point sums and products run on
// the deterministic engine (device::deterministic_scan).
//
// In place: the output may be the input (same pointer); any other overlap is refused.

#include <cstdint>
#include <span>
#include <string_view>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/memory.hpp"

namespace gpukit::primitives {

enum class ScanOp { sum, product, min, max };
enum class ScanKind { inclusive, exclusive };

/// "sum", "product", "min", "max".
std::string_view scan_op_name(ScanOp op);
/// Parses the names above; InvalidInput listing them otherwise.
ScanOp parse_scan_op(std::string_view name);
std::string_view scan_kind_name(ScanKind kind);

/// Device scratch memory for scans on one stream at a time: the tiles' status words, the tile
/// counter and the overflow report of the default engine, or CUB's temporary storage. Grows on
/// demand (a growth waits for the device); reuse one workspace across calls to keep allocation
/// out of the timed path.
class ScanWorkspace {
 public:
  ScanWorkspace() = default;
  /// Makes room for `bytes` (16-byte aligned) and returns the start of the area. Forgets what
  /// leave_clean() recorded: the caller may write anything.
  void* reserve(std::size_t bytes);
  /// For the look-back engines, whose kernels leave their counters and tile flags as they found
  /// them (zero, the overflow report excepted) and may write anything else up to `bytes`: makes
  /// room for `bytes` and returns the area with its first `clean_bytes` zeroed on `stream`, by a
  /// memset only when the last launch did not leave at least that many clean (the first use, a
  /// growth, another engine or tile count in between).
  void* reserve_clean(std::size_t bytes, std::size_t clean_bytes, StreamHandle stream);
  /// Records, once the kernel is queued, that the area reserve_clean() returned will be clean
  /// again when that kernel finishes.
  void leave_clean() noexcept { clean_bytes_ = pending_clean_bytes_; }
  void* data() const noexcept { return buffer_.data(); }
  std::size_t bytes() const noexcept { return buffer_.size(); }

 private:
  cuda::DeviceBuffer<unsigned char> buffer_;
  std::size_t clean_bytes_ = 0;          // left clean by the last queued launch
  std::size_t pending_clean_bytes_ = 0;  // clean after the launch being queued
};

/// Scans `input` (host memory) into `output` on the context's backend. On a CUDA context the
/// data moves in chunks through pinned staging buffers. `output` has input.size() elements and
/// is either `input` itself or disjoint from it. Throws InvalidInput for a size mismatch, a
/// partial overlap or an integer sum that overflows (see above).
template <class T>
void scan(const Context& context, std::span<const T> input, std::span<T> output, ScanOp op,
          ScanKind kind);

/// Scans `count` elements at `device_input` into `device_output` (device memory, any alignment
/// of T; the same pointer for in place) on `stream` with the default variant; nothing waits. An
/// integer sum that overflows is recorded in the workspace; scan_on_device() checks it.
template <class T>
void scan_on_device_async(const T* device_input, T* device_output, std::int64_t count, ScanOp op,
                          ScanKind kind, ScanWorkspace& workspace, StreamHandle stream);

/// The same, then waits for the stream (the exception to the `*_on_device` convention,
/// docs/design-notes.md: only the host can throw) and throws InvalidInput if an integer sum
/// overflowed. Nothing is in flight on `stream` from this call when it returns.
template <class T>
void scan_on_device(const T* device_input, T* device_output, std::int64_t count, ScanOp op,
                    ScanKind kind, ScanWorkspace& workspace, StreamHandle stream);

/// The reference the tests trust: one sequential loop in element order, accumulating integers
/// exactly (128 bits; throws InvalidInput on an overflowing sum, like the API) and floating
/// point in long double, each output rounded once to T.
template <class T>
void scan_sequential(std::span<const T> input, std::span<T> output, ScanOp op, ScanKind kind);

}  // namespace gpukit::primitives
