// Reduction: argument checks and dispatch to the CPU backend (cpu/reduce_kernels.cpp) or the CUDA
// engine; the sequential reference is cpu/reduce_reference.cpp.

#include "gpukit/primitives/reduce.hpp"

#include <array>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/core/stream.hpp"
#include "primitives/argument_checks.hpp"
#include "primitives/cpu/reduce_launchers.hpp"
#include "primitives/reduce_dispatch.hpp"

#if GPUKIT_HAVE_CUDA
#include "primitives/cuda/reduce_host_pipeline.hpp"
#include "primitives/cuda/reduce_launchers.hpp"
#endif

namespace gpukit::primitives {

namespace {

constexpr std::array<std::pair<ReduceOp, std::string_view>, 7> kOpNames = {{
    {ReduceOp::sum, "sum"},
    {ReduceOp::product, "product"},
    {ReduceOp::min, "min"},
    {ReduceOp::max, "max"},
    {ReduceOp::bit_and, "and"},
    {ReduceOp::bit_or, "or"},
    {ReduceOp::bit_xor, "xor"},
}};

// Counters live in the workspace's first bytes, the scratch area after them.
constexpr std::size_t kCounterBytes = 256;

}  // namespace

std::string_view reduce_op_name(ReduceOp op) {
  for (const auto& [o, name] : kOpNames)
    if (o == op) return name;
  return "?";
}

ReduceOp parse_reduce_op(std::string_view name) {
  std::string known;
  for (const auto& [op, op_name] : kOpNames) {
    if (op_name == name) return op;
    known += known.empty() ? "" : ", ";
    known += op_name;
  }
  throw InvalidInput("unknown reduction '" + std::string(name) + "' (known: " + known + ")");
}

void ReduceWorkspace::reserve(std::size_t bytes) {
  if (buffer_.data() != nullptr && bytes <= scratch_bytes_) return;
  buffer_ = {};  // free before allocating the larger one
  buffer_ = cuda::DeviceBuffer<unsigned char>(kCounterBytes + bytes);
  cuda::fill_bytes_async(buffer_.data(), 0, kCounterBytes, nullptr);
  cuda::synchronize_device();
  scratch_bytes_ = bytes;
}

void* ReduceWorkspace::scratch() const noexcept { return buffer_.data() + kCounterBytes; }
unsigned int* ReduceWorkspace::counters() const noexcept {
  return reinterpret_cast<unsigned int*>(buffer_.data());
}
int* ReduceWorkspace::overflow_flag() const noexcept {
  return reinterpret_cast<int*>(buffer_.data() + kCounterBytes / 2);
}

void* ReduceWorkspace::flagged_slots(std::size_t bytes) {
  if (slots_.data() == nullptr || bytes > slot_bytes_) {
    slots_ = {};
    slots_ = cuda::DeviceBuffer<unsigned char>(bytes);
    cuda::fill_bytes_async(slots_.data(), 0, bytes, nullptr);
    cuda::synchronize_device();
    slot_bytes_ = bytes;
  }
  return slots_.data();
}

template <class T>
reduce_result_t<T> reduce(const Context& context, std::span<const T> data, ReduceOp op,
                          const ReduceOptions& options) {
  detail::validate_reduce_arguments<T>(op, static_cast<std::int64_t>(data.size()));
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    if (data.empty() && op == ReduceOp::sum) return reduce_result_t<T>(0);
    bool overflow = false;
    const auto value = detail::reduce_through_device(context, data, op, options, overflow);
    return detail::checked<T>(value, overflow);
#else
    throw DeviceUnavailable("reduce: this gpukit was built without CUDA");
#endif
  }
  return cpu_detail::reduce_on_cpu(context.cpu_threads, data, op, options);
}

template <class T>
void reduce_on_device_async(const T* device_data, std::int64_t count, ReduceOp op,
                            reduce_result_t<T>* device_result, ReduceWorkspace& workspace,
                            StreamHandle stream, const ReduceOptions& options) {
  detail::validate_reduce_arguments<T>(op, count);
#if GPUKIT_HAVE_CUDA
  cuda_detail::launch_deterministic(device_data, count, op, device_result, workspace, stream,
                                    options);
#else
  (void)device_data, (void)device_result, (void)workspace, (void)stream, (void)options;
  throw DeviceUnavailable("reduce: this gpukit was built without CUDA");
#endif
}

template <class T>
reduce_result_t<T> reduce_on_device(const T* device_data, std::int64_t count, ReduceOp op,
                                    ReduceWorkspace& workspace, StreamHandle stream,
                                    const ReduceOptions& options) {
  detail::validate_reduce_arguments<T>(op, count);
  if (count == 0 && op == ReduceOp::sum) return reduce_result_t<T>(0);
#if GPUKIT_HAVE_CUDA
  // Reserve what the launch will, first: growing the workspace moves its counters, where the
  // result goes.
  workspace.reserve(cuda_detail::deterministic_scratch_bytes<T>(count, op, options));
#else
  workspace.reserve(0);
#endif
  // The result and the overflow flag come back in one small copy from the workspace's counters.
  auto* device_result = reinterpret_cast<reduce_result_t<T>*>(workspace.counters() + 16);
  reduce_on_device_async(device_data, count, op, device_result, workspace, stream, options);
  reduce_result_t<T> value{};
  int overflow = 0;
  cuda::copy_to_host_async(&value, device_result, sizeof value, stream);
  cuda::copy_to_host_async(&overflow, workspace.overflow_flag(), sizeof overflow, stream);
  cuda::synchronize_stream(stream);
  return detail::checked<T>(value, overflow != 0);
}

#define GPUKIT_INSTANTIATE_REDUCE(T)                                                             \
  template reduce_result_t<T> reduce<T>(const Context&, std::span<const T>, ReduceOp,            \
                                        const ReduceOptions&);                                   \
  template void reduce_on_device_async<T>(const T*, std::int64_t, ReduceOp, reduce_result_t<T>*, \
                                          ReduceWorkspace&, StreamHandle, const ReduceOptions&); \
  template reduce_result_t<T> reduce_on_device<T>(                                               \
      const T*, std::int64_t, ReduceOp, ReduceWorkspace&, StreamHandle, const ReduceOptions&);

GPUKIT_INSTANTIATE_REDUCE(std::int32_t)
GPUKIT_INSTANTIATE_REDUCE(std::int64_t)
GPUKIT_INSTANTIATE_REDUCE(std::uint32_t)
GPUKIT_INSTANTIATE_REDUCE(float)
GPUKIT_INSTANTIATE_REDUCE(double)
#undef GPUKIT_INSTANTIATE_REDUCE

}  // namespace gpukit::primitives
