// Scan: argument checks and dispatch to the CPU backend (cpu/scan_kernels.cpp) or the CUDA engine;
// the sequential reference is cpu/scan_reference.cpp.

#include "gpukit/primitives/scan.hpp"

#include <array>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/cpu/scan_launchers.hpp"

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
  detail::validate_scan_arrays(input.data(), output.data(),
                               static_cast<std::int64_t>(input.size()));
  if (input.empty()) return;
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    const std::int64_t bad = detail::scan_through_device(context, input, output, op, kind);
    if (bad >= 0) detail::throw_scan_overflow<T>(bad);
    return;
#else
    throw DeviceUnavailable("scan: this gpukit was built without CUDA");
#endif
  }
  cpu_detail::scan_on_cpu(context.effective_cpu_threads(), input, output, op, kind);
}

template <class T>
void scan_on_device_async(const T* device_input, T* device_output, std::int64_t count, ScanOp op,
                          ScanKind kind, ScanWorkspace& workspace, StreamHandle stream) {
  detail::validate_scan_arrays(device_input, device_output, count);
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
  if (bad >= 0) detail::throw_scan_overflow<T>(bad);
#endif
}

#define GPUKIT_INSTANTIATE_SCAN(T)                                                              \
  template void scan<T>(const Context&, std::span<const T>, std::span<T>, ScanOp, ScanKind);    \
  template void scan_on_device_async<T>(const T*, T*, std::int64_t, ScanOp, ScanKind,           \
                                        ScanWorkspace&, StreamHandle);                          \
  template void scan_on_device<T>(const T*, T*, std::int64_t, ScanOp, ScanKind, ScanWorkspace&, \
                                  StreamHandle);

GPUKIT_INSTANTIATE_SCAN(std::int32_t)
GPUKIT_INSTANTIATE_SCAN(std::int64_t)
GPUKIT_INSTANTIATE_SCAN(std::uint32_t)
GPUKIT_INSTANTIATE_SCAN(float)
GPUKIT_INSTANTIATE_SCAN(double)
#undef GPUKIT_INSTANTIATE_SCAN

}  // namespace gpukit::primitives
