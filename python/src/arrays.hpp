#pragma once
// What every binding file shares: the arrays it is handed (DLPack through nb::ndarray: NumPy,
// CuPy, PyTorch), where a call runs (the context, the stream, the current device), element-type
// dispatch, the per-thread device workspaces, and turning library vectors into NumPy arrays
// without a copy.
//
// The division of work with the pure-Python layer (python/gpukit/): Python turns what a user
// passes into C-contiguous arrays of a dtype the call takes, allocates the outputs in the input's
// framework and on its device, and resolves the stream; these functions check what they are
// handed anyway (a bad argument is an InvalidInput, hence a ValueError, never a crash), release
// the GIL and call the library.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::python {

namespace nb = nanobind;

/// An input: any dtype, any device, read-only allowed (NumPy's broadcast views are read-only).
using InArray = nb::ndarray<nb::ro>;
/// An output: writable.
using OutArray = nb::ndarray<>;

/// Where an array's elements are.
struct ArrayPlace {
  bool on_device = false;  // CUDA device memory (managed memory included)
  int device_id = 0;       // the CUDA ordinal when on_device
};

/// The place of `array`; InvalidInput naming `name` for memory gpukit cannot read (another
/// accelerator's) or an array that is not C-contiguous (the Python layer makes it so first).
ArrayPlace place_of(const nb::ndarray<nb::ro>& array, std::string_view name);
ArrayPlace place_of(const nb::ndarray<>& array, std::string_view name);

/// numpy's name of a DLPack dtype ("int16", "float64", "bool", "bfloat16", ...).
std::string dtype_name(nb::dlpack::dtype dtype);

/// Where one call runs: the context the host-data API takes, or the device and stream of the
/// device-data API.
struct Placement {
  Context context;           // CPU, or the CUDA device the work runs on
  bool device_data = false;  // the arrays are in device memory: the *_on_device calls
  StreamHandle stream = {};  // their stream (the caller's)
};

/// The placement of a call on `arrays` (name, place), with `device` "auto" | "cpu" | "cuda" |
/// "cuda:N" and `stream` a cudaStream_t as an integer (0: the legacy default stream):
/// - host arrays: select_device(device) (auto: a GPU when one is usable, as the CLI does), the
///   host-data API;
/// - device arrays, all on one GPU: that GPU with the device-data API on `stream`; InvalidInput
///   when `device` names the CPU or another GPU; DeviceUnavailable in a build without CUDA.
/// InvalidInput when the arrays are not all in one place.
Placement place_call(std::string_view device,
                     std::span<const std::pair<std::string_view, ArrayPlace>> arrays,
                     std::uintptr_t stream);
inline Placement place_call(std::string_view device,
                            std::initializer_list<std::pair<std::string_view, ArrayPlace>> arrays,
                            std::uintptr_t stream) {
  return place_call(device, std::span(arrays.begin(), arrays.size()), stream);
}

/// The job of a call that spreads over several workers or ranks (gpukit/scale_out: the call
/// `gpukit ... --device cuda:all` and `mpirun gpukit ...` make), or std::nullopt for a call on
/// one device (place_call's). A call on host arrays spreads when `device` lists several devices
/// ("cuda:all", "cuda:0,1") or when this process is a rank of an MPI job of several
/// (`mpirun -np 2 python script.py`: then every rank must make the same calls); CUDA arrays run
/// on their GPU, in each process alone. InvalidInput, naming the argument `device`, for a
/// spelling the library does not take, and for a list given with CUDA arrays. Collective when it
/// returns a job (scale_out::join_job over the world).
std::optional<scale_out::Job> spread_job(
    std::string_view device, std::span<const std::pair<std::string_view, ArrayPlace>> arrays);
inline std::optional<scale_out::Job> spread_job(
    std::string_view device,
    std::initializer_list<std::pair<std::string_view, ArrayPlace>> arrays) {
  return spread_job(device, std::span(arrays.begin(), arrays.size()));
}

/// Whether a call on host arrays with `device` spreads (spread_job's rule), for the Python layer
/// that picks the call: InvalidInput for a spelling the library does not take.
bool spreads(std::string_view device);

/// Makes a CUDA device current for the lifetime of the guard and restores the caller's current
/// device afterwards (CuPy and PyTorch keep their own notion of it). Does nothing for a CPU
/// context or in a build without CUDA.
class DeviceGuard {
 public:
  explicit DeviceGuard(const Context& context);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

/// Elements of a C-contiguous array as a std::int64_t.
inline std::int64_t count_of(const nb::ndarray<nb::ro>& array) {
  return static_cast<std::int64_t>(array.size());
}

template <class T>
bool holds(nb::dlpack::dtype dtype) {
  return dtype == nb::dtype<T>();
}

/// The element pointer of an input or output array, typed.
template <class T>
const T* data_of(const nb::ndarray<nb::ro>& array) {
  return static_cast<const T*>(static_cast<const void*>(array.data()));
}
template <class T>
T* data_of(const nb::ndarray<>& array) {
  return static_cast<T*>(array.data());
}
/// A host array as a span.
template <class T>
std::span<const T> span_of(const nb::ndarray<nb::ro>& array) {
  return {data_of<T>(array), array.size()};
}
template <class T>
std::span<T> span_of(const nb::ndarray<>& array) {
  return {data_of<T>(array), array.size()};
}

/// InvalidInput unless `array` holds T ("{what}: {name} is int16, expected float64").
template <class T>
void require_dtype(const nb::ndarray<nb::ro>& array, std::string_view what, std::string_view name,
                   std::string_view expected) {
  if (!holds<T>(array.dtype())) {
    throw InvalidInput(std::string(what) + ": " + std::string(name) + " is " +
                       dtype_name(array.dtype()) + ", expected " + std::string(expected));
  }
}
template <class T>
void require_dtype(const nb::ndarray<>& array, std::string_view what, std::string_view name,
                   std::string_view expected) {
  require_dtype<T>(nb::ndarray<nb::ro>(array), what, name, expected);
}

/// InvalidInput unless `output` has `count` elements and `input`'s dtype (the Python layer
/// allocates it so).
void require_like(const nb::ndarray<>& output, std::int64_t count, nb::dlpack::dtype dtype,
                  std::string_view what);

/// Calls f(T{}) for the five element types the primitives take (reduce, scan, compact: the CLI's
/// .npy dtypes); InvalidInput "{what} takes int32, int64, uint32, float32 or float64, not int16".
template <class F>
decltype(auto) with_primitive_type(nb::dlpack::dtype dtype, std::string_view what, F&& f) {
  if (holds<std::int32_t>(dtype)) return f(std::int32_t{});
  if (holds<std::int64_t>(dtype)) return f(std::int64_t{});
  if (holds<std::uint32_t>(dtype)) return f(std::uint32_t{});
  if (holds<float>(dtype)) return f(float{});
  if (holds<double>(dtype)) return f(double{});
  throw InvalidInput(std::string(what) + " takes int32, int64, uint32, float32 or float64, not " +
                     dtype_name(dtype));
}

/// Calls f(T{}) for float32 and float64; InvalidInput "{what} takes float32 or float64, not int32".
template <class F>
decltype(auto) with_real_type(nb::dlpack::dtype dtype, std::string_view what, F&& f) {
  if (holds<float>(dtype)) return f(float{});
  if (holds<double>(dtype)) return f(double{});
  throw InvalidInput(std::string(what) + " takes float32 or float64, not " + dtype_name(dtype));
}

/// A device workspace of type W for the calling thread and `device_id`, made on first use and
/// kept (the workspaces grow on demand and serve one stream at a time; the calls that use one
/// wait for their stream before returning, so a thread's next call finds it idle).
template <class W>
W& thread_workspace(int device_id) {
  thread_local std::vector<std::pair<int, std::unique_ptr<W>>> workspaces;
  for (auto& [id, workspace] : workspaces) {
    if (id == device_id) return *workspace;
  }
  workspaces.emplace_back(device_id, std::make_unique<W>());
  return *workspaces.back().second;
}

/// A NumPy array that takes over `values` (no copy).
template <class T>
nb::ndarray<nb::numpy, T> to_numpy(std::vector<T>&& values) {
  auto* owned = new std::vector<T>(std::move(values));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  const std::size_t shape[1] = {owned->size()};
  return nb::ndarray<nb::numpy, T>(owned->data(), 1, shape, owner);
}

/// A progress callback (MonteCarloOptions::progress) that lets Ctrl-C stop a long call made with
/// the GIL released. Python's SIGINT handler only sets a flag, which the interpreter reads when it
/// runs: this callback, called by the library between blocks of work on the calling thread, takes
/// the GIL and runs the pending signal handlers (PyErr_CheckSignals); when one raises
/// (KeyboardInterrupt), it throws gpukit::Interrupted with that exception (an nb::python_error)
/// as its cause, which stops the call (the library's contract: nothing left in flight, no result);
/// the translator raises the cause again, so the caller sees its own exception. Under mpirun the
/// other ranks of a spread call stop too, with an Interrupted of no cause: KeyboardInterrupt
/// naming the rank that was interrupted. Throttled to one check per kSignalCheckSeconds, so that
/// taking the GIL costs nothing measurable. Empty on a thread other than the main one, where
/// Python runs no signal handler.
inline constexpr double kSignalCheckSeconds = 0.1;
std::function<void(double)> signal_check();
/// Records the main thread (threading.main_thread()), for signal_check; called at import.
void remember_main_thread();

/// The binding functions of each file, added to the module in module.cpp.
void bind_primitives(nb::module_& m);
void bind_finance(nb::module_& m);
void bind_pde(nb::module_& m);
void bind_blas(nb::module_& m);
void bind_rng(nb::module_& m);

}  // namespace gpukit::python
