#pragma once
// Parallel reduction (seeds 000 slides 63-96, 001, 003 "Application 2"): sum, product, min, max
// and, for integers, bitwise and/or/xor of an array in host memory or on a CUDA device.
//
// Result types. Integer reductions return int64 (signed inputs) or uint64 (unsigned inputs), so
// every int32 / uint32 value and sum is representable; floating-point reductions return the input
// type.
//
// Integer sums are exact. The default (deterministic) path accumulates in 128-bit two's
// complement, which cannot wrap for any array that fits in memory, and throws InvalidInput
// ("sum overflows int64") when the exact sum does not fit the result type. Products of integers
// wrap modulo 2^64 in the result type (numpy's prod does the same); bitwise operations act on
// the input's bits and the result is the input value widened.
//
// Floating point. Sums and products use one fixed reduction tree (reduce_canonical.hpp): tiles
// of 16384 elements, each summed as 1024 lanes of 16 sequential rows then a balanced pairwise
// tree over the lanes; the tile results reduce by the same rule, level by level. The tree does
// not depend on the thread count, the block size, the grid size or the backend, so CPU and GPU
// give the same bits. The accurate mode (ReduceOptions::accurate_sum) runs the same tree on a
// wider accumulator (double for float input, a compensated double-double for double input); its
// result is within a few ulps of the exact sum.
//
// NaN and signed zero (the same on every backend):
// - any NaN in the input makes sum, product, min and max return the canonical quiet NaN
//   (std::numeric_limits<T>::quiet_NaN(); payloads are not propagated);
// - +Inf + -Inf is NaN; the empty sum is +0.0, the empty product 1;
// - min/max order -0.0 below +0.0 (min(-0.0, +0.0) = -0.0, max = +0.0), and a sum of zeros is
//   -0.0 only when every term is -0.0.
// - min and max of an empty array throw InvalidInput (they have no identity a user expects).

#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/memory.hpp"

namespace gpukit::primitives {

enum class ReduceOp { sum, product, min, max, bit_and, bit_or, bit_xor };

/// "sum", "product", "min", "max", "and", "or", "xor".
std::string_view reduce_op_name(ReduceOp op);
/// Parses the names above; InvalidInput listing them otherwise.
ReduceOp parse_reduce_op(std::string_view name);
/// Whether `op` applies to element type T (bitwise operations need integers).
template <class T>
constexpr bool reduce_op_applies(ReduceOp op) {
  return std::is_integral_v<T> ||
         (op != ReduceOp::bit_and && op != ReduceOp::bit_or && op != ReduceOp::bit_xor);
}

/// int64 for signed integers, uint64 for unsigned integers, T for float and double.
template <class T>
using reduce_result_t =
    std::conditional_t<std::is_floating_point_v<T>, T,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>;

struct ReduceOptions {
  /// Floating-point sums only: accumulate in double (float input) or compensated double-double
  /// (double input) through the same fixed tree.
  bool accurate_sum = false;
  /// CUDA only; 0 = the tuned default. None changes the result (the tree is fixed); they exist
  /// so that tests can prove it.
  int block_threads = 0;  // 128, 256, 512 or 1024 (other operations than sum: 512 or 1024)
  int grid_blocks = 0;    // persistent blocks; any positive number
};

/// Device scratch memory for reductions on one stream at a time: the per-tile results and the
/// counter with which the last block finds out it is last. Grows on demand (a growth waits for
/// the device); reuse one workspace across calls to keep allocation out of the timed path.
class ReduceWorkspace {
 public:
  ReduceWorkspace() = default;
  /// Makes room for `bytes` of scratch plus the counters (zeroed when allocated).
  void reserve(std::size_t bytes);
  void* scratch() const noexcept;
  unsigned int* counters() const noexcept;
  /// Set by the deterministic engine when an integer sum does not fit the result type.
  int* overflow_flag() const noexcept;
  std::size_t scratch_bytes() const noexcept { return scratch_bytes_; }

  /// The deterministic engine's flagged slots: at least `bytes` that only it writes (its launch
  /// epoch, then words tagged with it). Zeroed whenever allocated; grows on demand like reserve().
  void* flagged_slots(std::size_t bytes);
  std::size_t flagged_slot_bytes() const noexcept { return slot_bytes_; }

 private:
  cuda::DeviceBuffer<unsigned char> buffer_;
  std::size_t scratch_bytes_ = 0;
  cuda::DeviceBuffer<unsigned char> slots_;
  std::size_t slot_bytes_ = 0;
};

/// Reduces `data` (host memory) on the context's backend. On a CUDA context the data moves in
/// chunks through pinned staging buffers; on the CPU the same fixed tiles run on OpenMP threads.
/// Throws InvalidInput for min/max of empty input, a bitwise op on floats, or an integer sum that
/// overflows the result type. Deterministic: the same bits for every thread count and backend.
template <class T>
reduce_result_t<T> reduce(const Context& context, std::span<const T> data, ReduceOp op,
                          const ReduceOptions& options = {});

/// Reduces `count` elements at `device_data` (any alignment of T) on `stream` with the default
/// (deterministic) variant and writes the result to `device_result` (device memory); nothing
/// waits. An integer sum that overflows writes the low 64 bits and sets
/// workspace.overflow_flag(); reduce_on_device() below checks it. Throws InvalidInput for the
/// same argument errors as reduce().
template <class T>
void reduce_on_device_async(const T* device_data, std::int64_t count, ReduceOp op,
                            reduce_result_t<T>* device_result, ReduceWorkspace& workspace,
                            StreamHandle stream, const ReduceOptions& options = {});

/// The same, then waits for the stream (it returns a host value: the exception to the
/// `*_on_device` convention, docs/design-notes.md) and returns the result; throws InvalidInput on
/// an integer sum that overflowed. Nothing is in flight on `stream` from this call when it returns.
template <class T>
reduce_result_t<T> reduce_on_device(const T* device_data, std::int64_t count, ReduceOp op,
                                    ReduceWorkspace& workspace, StreamHandle stream,
                                    const ReduceOptions& options = {});

/// The reference the tests trust: one sequential loop in element order, accumulating integers
/// exactly (128 bits) and floating point in long double; the NaN policy above.
template <class T>
reduce_result_t<T> reduce_sequential(std::span<const T> data, ReduceOp op);

}  // namespace gpukit::primitives
