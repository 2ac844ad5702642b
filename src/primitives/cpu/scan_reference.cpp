// The sequential reference of scan: one loop from the first element to the last, floating sums and
// products in long double and integer sums in 128 bits, not the tiles the backends share.

#include <limits>

#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives {

template <class T>
void scan_sequential(std::span<const T> input, std::span<T> output, ScanOp op, ScanKind kind) {
  if (output.size() != input.size()) throw InvalidInput("scan_sequential: size mismatch");
  detail::validate_scan_arrays(input.data(), output.data(),
                               static_cast<std::int64_t>(input.size()));
  const bool inclusive = kind == ScanKind::inclusive;
  if constexpr (std::is_floating_point_v<T>) {
    if (op == ScanOp::sum || op == ScanOp::product) {
      long double acc = op == ScanOp::sum ? 0.0L : 1.0L;
      for (std::size_t i = 0; i < input.size(); ++i) {
        const T x = input[i];
        if (!inclusive) output[i] = static_cast<T>(acc);
        acc = op == ScanOp::sum ? acc + x : acc * x;
        if (inclusive) output[i] = static_cast<T>(acc);
      }
      return;
    }
  } else {
    if (op == ScanOp::sum) {
      detail::int128 acc = 0;
      for (std::size_t i = 0; i < input.size(); ++i) {
        const T x = input[i];
        if (!inclusive) output[i] = static_cast<T>(acc);
        acc += x;
        if (inclusive) output[i] = static_cast<T>(acc);
        if (acc > std::numeric_limits<T>::max() ||
            acc < detail::int128(std::numeric_limits<T>::lowest())) {
          // The first output that holds this value: element i (inclusive) or i + 1.
          const auto bad = static_cast<std::int64_t>(inclusive ? i : i + 1);
          if (bad < static_cast<std::int64_t>(input.size())) detail::throw_scan_overflow<T>(bad);
        }
      }
      return;
    }
  }
  detail::with_scan_op<T, /*kExact=*/false>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    typename Op::Acc acc = canonical_scan::initial_value(op_functor);
    for (std::size_t i = 0; i < input.size(); ++i) {
      const T x = input[i];
      if (!inclusive) output[i] = Op::store(acc);
      acc = op_functor(acc, Op::load(x));
      if (inclusive) output[i] = Op::store(acc);
    }
  });
}

#define GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(T) \
  template void scan_sequential<T>(std::span<const T>, std::span<T>, ScanOp, ScanKind);

GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(std::int32_t)
GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(std::int64_t)
GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(std::uint32_t)
GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(float)
GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL(double)
#undef GPUKIT_INSTANTIATE_SCAN_SEQUENTIAL

}  // namespace gpukit::primitives
