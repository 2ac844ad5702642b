// Stream compaction: predicate names, argument checks and dispatch to the CPU backend
// (cpu/compact_kernels.cpp) or the CUDA single pass; the sequential reference is
// cpu/compact_reference.cpp.

#include "gpukit/primitives/compact.hpp"

#include <array>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/cpu/compact_launchers.hpp"

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
  detail::validate_compact_arrays(input.data(), input.size(), output.data(), output.size());
  if (input.empty()) return 0;
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    return detail::compact_through_device(context, input, output, keep);
#else
    throw DeviceUnavailable("compact: this gpukit was built without CUDA");
#endif
  }
  return cpu_detail::compact_on_cpu(context.effective_cpu_threads(), input, output, keep);
}

template <class T>
void compact_on_device_async(const T* device_input, T* device_output, std::int64_t count,
                             KeepPredicate keep, std::int64_t* device_count,
                             ScanWorkspace& workspace, StreamHandle stream) {
  if (count < 0) throw InvalidInput("compact: negative element count");
  detail::validate_compact_arrays(device_input, static_cast<std::size_t>(count), device_output,
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

#define GPUKIT_INSTANTIATE_COMPACT(T)                                                    \
  template std::int64_t compact<T>(const Context&, std::span<const T>, std::span<T>,     \
                                   KeepPredicate);                                       \
  template void compact_on_device_async<T>(const T*, T*, std::int64_t, KeepPredicate,    \
                                           std::int64_t*, ScanWorkspace&, StreamHandle); \
  template std::int64_t compact_on_device<T>(const T*, T*, std::int64_t, KeepPredicate,  \
                                             ScanWorkspace&, StreamHandle);

GPUKIT_INSTANTIATE_COMPACT(std::int32_t)
GPUKIT_INSTANTIATE_COMPACT(std::int64_t)
GPUKIT_INSTANTIATE_COMPACT(std::uint32_t)
GPUKIT_INSTANTIATE_COMPACT(float)
GPUKIT_INSTANTIATE_COMPACT(double)
#undef GPUKIT_INSTANTIATE_COMPACT

}  // namespace gpukit::primitives
