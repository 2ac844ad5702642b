// The CPU backend of scan: the canonical tiles on OpenMP threads.

#include "primitives/cpu/scan_launchers.hpp"

#include <atomic>
#include <limits>

#include "gpukit/primitives/scan_canonical.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/scan_ops.hpp"

namespace gpukit::primitives::cpu_detail {

template <class T>
void scan_on_cpu(int threads, std::span<const T> input, std::span<T> output, ScanOp op,
                 ScanKind kind) {
  detail::with_scan_op<T, /*kExact=*/true>(op, [&](auto op_functor) {
    using Op = decltype(op_functor);
    using Acc = typename Op::Acc;
    std::atomic<std::int64_t> first_bad{std::numeric_limits<std::int64_t>::max()};
    T* out = output.data();
    canonical_scan::scan_canonical(
        op_functor, input.data(), static_cast<std::int64_t>(input.size()), kind,
        canonical_scan::initial_value(op_functor),
        [&](std::int64_t i, Acc value) {
          if (!Op::fits(value)) {
            std::int64_t seen = first_bad.load(std::memory_order_relaxed);
            while (i < seen && !first_bad.compare_exchange_weak(seen, i)) {
            }
          }
          out[i] = Op::store(value);
        },
        threads);
    if (first_bad.load() != std::numeric_limits<std::int64_t>::max()) {
      detail::throw_scan_overflow<T>(first_bad.load());
    }
  });
}

#define GPUKIT_INSTANTIATE_SCAN_ON_CPU(T) \
  template void scan_on_cpu<T>(int, std::span<const T>, std::span<T>, ScanOp, ScanKind);

GPUKIT_INSTANTIATE_SCAN_ON_CPU(std::int32_t)
GPUKIT_INSTANTIATE_SCAN_ON_CPU(std::int64_t)
GPUKIT_INSTANTIATE_SCAN_ON_CPU(std::uint32_t)
GPUKIT_INSTANTIATE_SCAN_ON_CPU(float)
GPUKIT_INSTANTIATE_SCAN_ON_CPU(double)
#undef GPUKIT_INSTANTIATE_SCAN_ON_CPU

}  // namespace gpukit::primitives::cpu_detail
