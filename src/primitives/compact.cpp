// Stream compaction: predicate names, the CPU backend (compact_if on OpenMP threads), the
// sequential reference, and dispatch to the CUDA single pass.

#include "gpukit/primitives/compact.hpp"

#include <array>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/compact_predicates.hpp"

#if GPUKIT_HAVE_CUDA
#include "gpukit/core/memory.hpp"
#include "primitives/cuda/compact_host_pipeline.hpp"
#include "primitives/cuda/compact_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

constexpr std::array<std::pair<KeepPredicate, std::string_view>, 4> kPredicateNames = {{
    {KeepPredicate::nonzero, "nonzero"},
    {KeepPredicate::positive, "positive"},
    {KeepPredicate::negative, "negative"},
    {KeepPredicate::finite, "finite"},
}};

template <class T>
void validate_arrays(const T* input, std::size_t input_size, const T* output,
                     std::size_t output_size) {
  if (output_size < input_size) {
    throw InvalidInput("compact: the output has room for " + std::to_string(output_size) +
                       " elements, the input has " + std::to_string(input_size));
  }
  const auto in = reinterpret_cast<std::uintptr_t>(input);
  const auto out = reinterpret_cast<std::uintptr_t>(output);
  if (input_size > 0 && in < out + output_size * sizeof(T) && out < in + input_size * sizeof(T)) {
    throw InvalidInput("compact: the output overlaps the input");
  }
}

}  // namespace

std::string_view keep_predicate_name(KeepPredicate keep) {
  for (const auto& [k, name] : kPredicateNames)
    if (k == keep) return name;
  return "?";
}

KeepPredicate parse_keep_predicate(std::string_view name) {
  std::string known;
  for (const auto& [keep, keep_name] : kPredicateNames) {
    if (keep_name == name) return keep;
    known += known.empty() ? "" : ", ";
    known += keep_name;
  }
  throw InvalidInput("unknown keep predicate '" + std::string(name) + "' (known: " + known + ")");
}

template <class T>
std::int64_t compact(const Context& context, std::span<const T> input, std::span<T> output,
                     KeepPredicate keep) {
  validate_arrays(input.data(), input.size(), output.data(), output.size());
  if (input.empty()) return 0;
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    return detail::compact_through_device(context, input, output, keep);
#else
    throw DeviceUnavailable("compact: this gpukit was built without CUDA");
#endif
  }
  return detail::with_keep_predicate<T>(keep, [&](auto predicate) {
    return compact_if(input, output, predicate, context.effective_cpu_threads());
  });
}

template <class T>
void compact_on_device_async(const T* device_input, T* device_output, std::int64_t count,
                             KeepPredicate keep, std::int64_t* device_count,
                             ScanWorkspace& workspace, StreamHandle stream) {
  if (count < 0) throw InvalidInput("compact: negative element count");
  validate_arrays(device_input, static_cast<std::size_t>(count), device_output,
                  static_cast<std::size_t>(count));
#if GPUKIT_HAVE_CUDA
  cuda_detail::launch_compact_single_pass(device_input, device_output, count, keep, device_count,
                                          workspace, stream);
#else
  (void)keep, (void)device_count, (void)workspace, (void)stream;
  throw DeviceUnavailable("compact: this gpukit was built without CUDA");
#endif
}

template <class T>
std::int64_t compact_on_device(const T* device_input, T* device_output, std::int64_t count,
                               KeepPredicate keep, ScanWorkspace& workspace, StreamHandle stream) {
#if GPUKIT_HAVE_CUDA
  cuda::DeviceBuffer<std::int64_t> device_count(1);
  compact_on_device_async(device_input, device_output, count, keep, device_count.data(), workspace,
                          stream);
  std::int64_t kept = 0;
  cuda::copy_to_host_async(&kept, device_count.data(), sizeof kept, stream);
  cuda::synchronize_stream(stream);
  return kept;
#else
  compact_on_device_async(device_input, device_output, count, keep, nullptr, workspace, stream);
  return 0;
#endif
}

template <class T>
std::int64_t compact_sequential(std::span<const T> input, std::span<T> output, KeepPredicate keep) {
  validate_arrays(input.data(), input.size(), output.data(), output.size());
  return detail::with_keep_predicate<T>(keep, [&](auto predicate) {
    std::int64_t kept = 0;
    for (const T x : input) {
      if (predicate(x)) output[static_cast<std::size_t>(kept++)] = x;
    }
    return kept;
  });
}

#define GPUKIT_INSTANTIATE_COMPACT(T)                                                    \
  template std::int64_t compact<T>(const Context&, std::span<const T>, std::span<T>,     \
                                   KeepPredicate);                                       \
  template void compact_on_device_async<T>(const T*, T*, std::int64_t, KeepPredicate,    \
                                           std::int64_t*, ScanWorkspace&, StreamHandle); \
  template std::int64_t compact_on_device<T>(const T*, T*, std::int64_t, KeepPredicate,  \
                                             ScanWorkspace&, StreamHandle);              \
  template std::int64_t compact_sequential<T>(std::span<const T>, std::span<T>, KeepPredicate);

GPUKIT_INSTANTIATE_COMPACT(std::int32_t)
GPUKIT_INSTANTIATE_COMPACT(std::int64_t)
GPUKIT_INSTANTIATE_COMPACT(std::uint32_t)
GPUKIT_INSTANTIATE_COMPACT(float)
GPUKIT_INSTANTIATE_COMPACT(double)
#undef GPUKIT_INSTANTIATE_COMPACT

}  // namespace gpukit::primitives
