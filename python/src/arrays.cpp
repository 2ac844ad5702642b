#include "arrays.hpp"

#include <chrono>
#include <exception>
#include <memory>
#include <string>

#if GPUKIT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/devices.hpp"

namespace gpukit::python {

namespace {

// threading.main_thread().ident: the thread Python runs signal handlers on.
unsigned long main_thread_ident = 0;

std::string place_name(const ArrayPlace& place) {
  return place.on_device ? fmt::format("cuda:{}", place.device_id) : std::string("the host");
}

template <class Array>
ArrayPlace place_of_array(const Array& array, std::string_view name) {
  ArrayPlace place;
  switch (array.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value:  // pinned host memory
      break;
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      place.on_device = true;
      place.device_id = array.device_id();
      break;
    default:
      throw InvalidInput(fmt::format(
          "{} is in memory gpukit cannot use (DLPack device type {}): give a NumPy array or a "
          "CUDA array (CuPy, PyTorch)",
          name, array.device_type()));
  }
  // C order, as the CLI reads a .npy file. Axes of one element have any stride (NumPy and PyTorch
  // give them arbitrary ones), and so does an array of no element.
  if (array.size() == 0) return place;
  std::int64_t expected = 1;
  for (std::size_t axis = array.ndim(); axis-- > 0;) {
    if (array.shape(axis) == 1) continue;
    if (array.stride(axis) != expected) {
      throw InvalidInput(
          fmt::format("{} is not C-contiguous (strides in elements differ from its shape's); pass "
                      "numpy.ascontiguousarray(x), cupy.ascontiguousarray(x) or x.contiguous()",
                      name));
    }
    expected *= static_cast<std::int64_t>(array.shape(axis));
  }
  return place;
}

}  // namespace

ArrayPlace place_of(const nb::ndarray<nb::ro>& array, std::string_view name) {
  return place_of_array(array, name);
}
ArrayPlace place_of(const nb::ndarray<>& array, std::string_view name) {
  return place_of_array(array, name);
}

std::string dtype_name(nb::dlpack::dtype dtype) {
  std::string base;
  switch (static_cast<nb::dlpack::dtype_code>(dtype.code)) {
    case nb::dlpack::dtype_code::Int:
      base = "int";
      break;
    case nb::dlpack::dtype_code::UInt:
      base = "uint";
      break;
    case nb::dlpack::dtype_code::Float:
      base = "float";
      break;
    case nb::dlpack::dtype_code::Bfloat:
      base = "bfloat";
      break;
    case nb::dlpack::dtype_code::Complex:
      base = "complex";
      break;
    case nb::dlpack::dtype_code::Bool:
      return "bool";
    default:
      return fmt::format("DLPack type code {} of {} bits", dtype.code, dtype.bits);
  }
  std::string name = fmt::format("{}{}", base, dtype.bits);
  if (dtype.lanes != 1) name += fmt::format("x{}", dtype.lanes);
  return name;
}

Placement place_call(std::string_view device,
                     std::span<const std::pair<std::string_view, ArrayPlace>> arrays,
                     std::uintptr_t stream) {
  if (arrays.empty()) throw InvalidInput("no array given");
  const auto& [first_name, first] = arrays.front();
  for (const auto& [name, place] : arrays) {
    if (place.on_device != first.on_device || place.device_id != first.device_id) {
      throw InvalidInput(fmt::format("{} is on {} but {} is on {}: give arrays in one place",
                                     first_name, place_name(first), name, place_name(place)));
    }
  }
  Placement placement;
  if (!first.on_device) {
    placement.context = select_device(device).context;
    return placement;
  }
  // Device arrays run where they are. `device` may confirm that, not move them.
  if (device == "cpu") {
    throw InvalidInput(fmt::format(
        "{} is on {}, but device='cpu' asks for the CPU: pass a host array (cupy.asnumpy(x), "
        "x.cpu()) to compute there",
        first_name, place_name(first)));
  }
  if (device != "auto" && device != "cuda") {
    const DeviceSelection asked = select_device(device);  // checks the spelling, finds the GPU
    if (asked.context.backend != Backend::cuda || asked.context.cuda_device != first.device_id) {
      throw InvalidInput(fmt::format("{} is on {}, but device='{}' names another device",
                                     first_name, place_name(first), device));
    }
  }
  if (!built_with_cuda()) {
    throw DeviceUnavailable(
        "this gpukit was built without CUDA (no nvcc at build time), so it cannot use CUDA "
        "arrays; rebuild it where nvcc is found");
  }
  placement.context = Context::cuda(first.device_id);
  placement.device_data = true;
  placement.stream = reinterpret_cast<StreamHandle>(stream);
  return placement;
}

namespace {

// The library's device spelling rule (distributed::parse_device_spec), in the words of the
// Python argument: "device must be auto, cpu, ...", "device: 'cuda:x' is not a GPU list ...".
distributed::DeviceSpec parse_device_argument(std::string_view device) {
  try {
    return distributed::parse_device_spec(device);
  } catch (const InvalidInput& e) {
    const std::string_view what = e.what();
    throw InvalidInput(fmt::format("device{}{}", what.starts_with("must") ? " " : ": ", what));
  }
}

}  // namespace

bool spreads(std::string_view device) {
  return parse_device_argument(device).is_list() ||
         distributed::Communicator::world().distributed();
}

std::optional<scale_out::Job> spread_job(
    std::string_view device, std::span<const std::pair<std::string_view, ArrayPlace>> arrays) {
  const distributed::DeviceSpec spec = parse_device_argument(device);
  for (const auto& [name, place] : arrays) {
    if (!place.on_device) continue;
    if (spec.is_list()) {
      throw InvalidInput(fmt::format(
          "device='{}' spreads host arrays over several devices, but {} is on {}: pass host "
          "arrays, or device='{}'",
          device, name, place_name(place), place_name(place)));
    }
    return std::nullopt;  // CUDA arrays run on their GPU
  }
  if (!spec.is_list() && !distributed::Communicator::world().distributed()) return std::nullopt;
  try {
    return scale_out::join_job(device, 0);
  } catch (const DeviceUnavailable& e) {
    // The library names the CLI's option ("--device cuda:all: no CUDA device ..."); here it is
    // the argument device=.
    const std::string_view what = e.what();
    constexpr std::string_view kOption = "--device ";
    if (!what.starts_with(kOption)) throw;
    throw DeviceUnavailable(fmt::format("device={}", what.substr(kOption.size())));
  }
}

DeviceGuard::DeviceGuard(const Context& context) {
#if GPUKIT_HAVE_CUDA
  if (context.backend != Backend::cuda) return;
  int current = 0;
  if (cudaGetDevice(&current) == cudaSuccess) previous_ = current;
  cuda::set_device(context.cuda_device);
#else
  (void)context;
#endif
}

DeviceGuard::~DeviceGuard() {
#if GPUKIT_HAVE_CUDA
  if (previous_ >= 0) cudaSetDevice(previous_);
#endif
}

void require_like(const nb::ndarray<>& output, std::int64_t count, nb::dlpack::dtype dtype,
                  std::string_view what) {
  if (static_cast<std::int64_t>(output.size()) != count || output.dtype() != dtype) {
    throw InvalidInput(fmt::format("{}: the output holds {} {} elements, expected {} {}", what,
                                   output.size(), dtype_name(output.dtype()), count,
                                   dtype_name(dtype)));
  }
}

void remember_main_thread() {
  main_thread_ident = nb::cast<unsigned long>(
      nb::module_::import_("threading").attr("main_thread")().attr("ident"));
}

std::function<void(double)> signal_check() {
  if (PyThread_get_thread_ident() != main_thread_ident) return {};
  using Clock = std::chrono::steady_clock;
  auto last_check = std::make_shared<Clock::time_point>(Clock::now());
  return [last_check](double) {
    const Clock::time_point now = Clock::now();
    if (std::chrono::duration<double>(now - *last_check).count() < kSignalCheckSeconds) return;
    *last_check = now;
    const nb::gil_scoped_acquire held;
    if (PyErr_CheckSignals() == 0) return;
    // The handler's exception (KeyboardInterrupt) as the cause of an Interrupted: a spread call's
    // ranks agree on an interruption by its kind (distributed/communicator.hpp), and the
    // translator (module.cpp) raises the cause again on the rank it came from.
    try {
      throw nb::python_error();
    } catch (const nb::python_error&) {
      throw Interrupted("interrupted by a signal (Ctrl-C)", std::current_exception());
    }
  };
}

}  // namespace gpukit::python
