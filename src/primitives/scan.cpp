// Scan: argument checks, the CPU backend (the canonical tiles on OpenMP threads), the sequential
// reference, and dispatch to the CUDA engine.

#include "gpukit/primitives/scan.hpp"

#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/scan_canonical.hpp"
#include "primitives/scan_ops.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/scan_host_pipeline.hpp"
#include "primitives/cuda/scan_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

constexpr std::array<std::pair<ScanOp, std::string_view>, 4> kOpNames = {{
    {ScanOp::sum, "sum"},
    {ScanOp::product, "product"},
    {ScanOp::min, "min"},
    {ScanOp::max, "max"},
}};

template <class T>
constexpr std::string_view type_name() {
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, float>) return "float32";
  if constexpr (std::is_same_v<T, double>) return "float64";
}

// What to do about an overflowing sum: convert to a type that holds it, where there is one.
template <class T>
constexpr std::string_view overflow_advice() {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return "int64 is the widest integer type; for an approximate result, convert the input to "
           "float64";
  } else {
    return "convert the input to int64 first";
  }
}

template <class T>
[[noreturn]] void throw_overflow(std::int64_t index) {
  throw InvalidInput("scan: the sum overflows " + std::string(type_name<T>()) + " at element " +
                     std::to_string(index) + " (integer sums are exact; " +
                     std::string(overflow_advice<T>()) + ")");
}

/// Output and input are the same array or disjoint ones.
template <class T>
void validate_arrays(const T* input, const T* output, std::int64_t count) {
  if (count < 0) throw InvalidInput("scan: negative element count");
  if (input == output || count == 0) return;
  const auto in = reinterpret_cast<std::uintptr_t>(input);
  const auto out = reinterpret_cast<std::uintptr_t>(output);
  const auto bytes = static_cast<std::uintptr_t>(count) * sizeof(T);
  if (in < out + bytes && out < in + bytes) {
    throw InvalidInput("scan: the output overlaps the input without being the same array");
  }
}

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
      throw_overflow<T>(first_bad.load());
    }
  });
}

}  // namespace

std::string_view scan_op_name(ScanOp op) {
  for (const auto& [o, name] : kOpNames)
    if (o == op) return name;
  return "?";
}

ScanOp parse_scan_op(std::string_view name) {
  std::string known;
  for (const auto& [op, op_name] : kOpNames) {
    if (op_name == name) return op;
    known += known.empty() ? "" : ", ";
    known += op_name;
  }
  throw InvalidInput("unknown scan operation '" + std::string(name) + "' (known: " + known + ")");
}

std::string_view scan_kind_name(ScanKind kind) {
  return kind == ScanKind::inclusive ? "inclusive" : "exclusive";
}

void* ScanWorkspace::reserve(std::size_t bytes) {
  bytes = (bytes + 15) / 16 * 16;
  clean_bytes_ = 0;
  pending_clean_bytes_ = 0;
  if (buffer_.data() != nullptr && bytes <= buffer_.size()) return buffer_.data();
  buffer_ = {};  // free before allocating the larger one
  buffer_ = cuda::DeviceBuffer<unsigned char>(bytes);
  return buffer_.data();
}

void* ScanWorkspace::reserve_clean(std::size_t bytes, std::size_t clean_bytes,
                                   StreamHandle stream) {
  const bool kept = buffer_.data() != nullptr && (bytes + 15) / 16 * 16 <= buffer_.size();
  std::size_t clean = kept ? clean_bytes_ : 0;
  void* area = reserve(bytes);
  if (clean < clean_bytes) {
    cuda::fill_bytes_async(area, 0, clean_bytes, stream);
    clean = clean_bytes;
  }
  // A launch leaves its first clean_bytes zero again, but what it writes past them (the split
  // status's value arrays, up to `bytes`) is no longer clean; only what lies beyond all it
  // touches stays as it was. (Keeping the old clean length there let a launch with fewer tiles
  // leave aggregates where the next launch with more tiles expected zero flags: wrong int64
  // sums, seen on the H200 when the pipelined and the exact engine alternated on one workspace.)
  pending_clean_bytes_ = bytes > clean_bytes ? clean_bytes : clean;
  return area;
}

template <class T>
void scan(const Context& context, std::span<const T> input, std::span<T> output, ScanOp op,
          ScanKind kind) {
  if (output.size() != input.size()) {
    throw InvalidInput("scan: the output has " + std::to_string(output.size()) +
                       " elements, the input " + std::to_string(input.size()));
  }
  validate_arrays(input.data(), output.data(), static_cast<std::int64_t>(input.size()));
  if (input.empty()) return;
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    const std::int64_t bad = detail::scan_through_device(context, input, output, op, kind);
    if (bad >= 0) throw_overflow<T>(bad);
    return;
#else
    throw DeviceUnavailable("scan: this gpukit was built without CUDA");
#endif
  }
  scan_on_cpu(context.effective_cpu_threads(), input, output, op, kind);
}

template <class T>
void scan_on_device_async(const T* device_input, T* device_output, std::int64_t count, ScanOp op,
                          ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  validate_arrays(device_input, device_output, count);
#if GPUKIT_HAVE_CUDA
  cuda_detail::launch_pipelined_lookback(device_input, device_output, count, op, kind, workspace,
                                         stream);
#else
  (void)op, (void)kind, (void)workspace, (void)stream;
  throw DeviceUnavailable("scan: this gpukit was built without CUDA");
#endif
}

template <class T>
void scan_on_device(const T* device_input, T* device_output, std::int64_t count, ScanOp op,
                    ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  scan_on_device_async(device_input, device_output, count, op, kind, workspace, stream);
#if GPUKIT_HAVE_CUDA
  cuda::synchronize_stream(stream);
  if (count == 0) return;
  const std::int64_t bad = cuda_detail::scan_overflow_index(workspace);
  if (bad >= 0) throw_overflow<T>(bad);
#endif
}

template <class T>
void scan_sequential(std::span<const T> input, std::span<T> output, ScanOp op, ScanKind kind) {
  if (output.size() != input.size()) throw InvalidInput("scan_sequential: size mismatch");
  validate_arrays(input.data(), output.data(), static_cast<std::int64_t>(input.size()));
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
          if (bad < static_cast<std::int64_t>(input.size())) throw_overflow<T>(bad);
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

#define GPUKIT_INSTANTIATE_SCAN(T)                                                              \
  template void scan<T>(const Context&, std::span<const T>, std::span<T>, ScanOp, ScanKind);    \
  template void scan_on_device_async<T>(const T*, T*, std::int64_t, ScanOp, ScanKind,           \
                                        ScanWorkspace&, StreamHandle);                          \
  template void scan_on_device<T>(const T*, T*, std::int64_t, ScanOp, ScanKind, ScanWorkspace&, \
                                  StreamHandle);                                                \
  template void scan_sequential<T>(std::span<const T>, std::span<T>, ScanOp, ScanKind);

GPUKIT_INSTANTIATE_SCAN(std::int32_t)
GPUKIT_INSTANTIATE_SCAN(std::int64_t)
GPUKIT_INSTANTIATE_SCAN(std::uint32_t)
GPUKIT_INSTANTIATE_SCAN(float)
GPUKIT_INSTANTIATE_SCAN(double)
#undef GPUKIT_INSTANTIATE_SCAN

}  // namespace gpukit::primitives
