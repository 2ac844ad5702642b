// gpukit._gpukit: the compiled half of the Python package. Each binding file wraps the library
// calls one case study's CLI command makes; this one adds the exception mapping and the devices.
//
// Errors (gpukit::Error's kinds, as the CLI maps them to exit codes): invalid input -> ValueError
// (the CLI's message), I/O -> OSError, out of memory -> MemoryError (with `bytes_requested`),
// a failing CUDA call -> CudaError (a RuntimeError), no usable GPU where one was asked for ->
// DeviceUnavailable (a RuntimeError), interrupted -> the caller's own exception (its
// KeyboardInterrupt), or KeyboardInterrupt where another rank of an MPI job was interrupted.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "arrays.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"

#ifndef GPUKIT_VERSION
#define GPUKIT_VERSION "unknown"
#endif

namespace nb = nanobind;

namespace {

// The exception types the module defines, kept for the translator.
PyObject* cuda_error_type = nullptr;
PyObject* device_unavailable_type = nullptr;

void raise_with_bytes(const gpukit::OutOfMemory& e) {
  PyObject* error = PyObject_CallFunction(PyExc_MemoryError, "s", e.what());
  if (error == nullptr) return;  // the call set its own error
  PyObject* bytes = PyLong_FromSize_t(e.bytes_requested());
  if (bytes != nullptr) {
    PyObject_SetAttrString(error, "bytes_requested", bytes);
    Py_DECREF(bytes);
  }
  PyErr_SetObject(PyExc_MemoryError, error);
  Py_DECREF(error);
}

void translate(const std::exception_ptr& thrown, void*) {
  try {
    std::rethrow_exception(thrown);
  } catch (const gpukit::OutOfMemory& e) {
    raise_with_bytes(e);
  } catch (const gpukit::Interrupted& e) {
    // This process's own stop (signal_check's): the signal handler's exception, raised again as
    // it was. (A cause of another type, rethrown here, goes on to the next translator.)
    if (e.cause()) {
      try {
        std::rethrow_exception(e.cause());
      } catch (nb::python_error& own) {
        own.restore();
        return;
      }
    }
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  } catch (const gpukit::Error& e) {
    switch (e.kind()) {
      case gpukit::ErrorKind::invalid_input:
        PyErr_SetString(PyExc_ValueError, e.what());
        return;
      case gpukit::ErrorKind::io:
        PyErr_SetString(PyExc_OSError, e.what());
        return;
      case gpukit::ErrorKind::cuda:
        PyErr_SetString(cuda_error_type, e.what());
        return;
      case gpukit::ErrorKind::device_unavailable:
        PyErr_SetString(device_unavailable_type, e.what());
        return;
      case gpukit::ErrorKind::out_of_memory:  // an Error of this kind but not an OutOfMemory
        PyErr_SetString(PyExc_MemoryError, e.what());
        return;
      case gpukit::ErrorKind::interrupted:  // an Error of this kind but not an Interrupted
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
        return;
      case gpukit::ErrorKind::check_failed:
        break;
    }
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

// Test hooks: the address nanobind hands the library for an array (the zero-copy check), and
// each error kind raised through the translator.
std::uintptr_t data_pointer(const gpukit::python::InArray& x) {
  return reinterpret_cast<std::uintptr_t>(x.data());
}

void raise_error(std::string_view kind, const std::string& message, std::size_t bytes) {
  if (kind == "invalid_input") throw gpukit::InvalidInput(message);
  if (kind == "io") throw gpukit::IoError(message);
  if (kind == "out_of_memory") throw gpukit::OutOfMemory(message, bytes);
  if (kind == "cuda") throw gpukit::CudaError("cudaMalloc(&p, n)", message, "test.cu", 7);
  if (kind == "device_unavailable") throw gpukit::DeviceUnavailable(message);
  // As another rank's interruption arrives (no cause of this process's own).
  if (kind == "interrupted") throw gpukit::Interrupted(message);
  throw gpukit::InvalidInput("unknown error kind");
}

nb::list devices() {
  nb::list list;
  const int count = gpukit::cuda_device_count();
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const gpukit::DeviceInfo info = gpukit::query_device(ordinal);
    nb::dict d;
    d["device"] = "cuda:" + std::to_string(info.ordinal);
    d["name"] = info.name;
    d["pci_bus_id"] = info.pci_bus_id;
    d["compute_capability"] = nb::make_tuple(info.compute_major, info.compute_minor);
    d["sm_count"] = info.sm_count;
    d["total_memory_bytes"] = info.total_memory_bytes;
    d["l2_cache_bytes"] = info.l2_cache_bytes;
    list.append(d);
  }
  return list;
}

// A Python process that an MPI launcher started (`mpirun -np 2 python script.py`) is a rank of
// the job: MPI is initialized when the module is imported (unless the program did it first, as
// mpi4py does, which then keeps it) and finalized at the interpreter's exit, so that the calls
// with a device list or under mpirun spread over the job's ranks (arrays.hpp, spread_job). A
// process started alone never touches MPI.
std::unique_ptr<gpukit::distributed::Environment> mpi_environment;

void join_mpi_job_if_launched() {
  if (!gpukit::distributed::started_by_mpi_launcher()) return;
  int argc = 0;
  char** argv = nullptr;
  mpi_environment = std::make_unique<gpukit::distributed::Environment>(argc, argv);
  nb::module_::import_("atexit").attr("register")(
      nb::cpp_function([] { mpi_environment.reset(); }));
}

}  // namespace

NB_MODULE(_gpukit, m) {
  m.doc() =
      "gpukit's compiled core: thin bindings over the C++ library (use the gpukit package, whose "
      "functions check and prepare the arguments these take).";

  // Named after the module as it was imported (gpukit._gpukit, or _gpukit for stubgen), so that
  // stubgen writes them as this module's classes; gpukit/__init__.py shows them as gpukit's.
  const std::string module_name = nb::cast<std::string>(m.attr("__name__"));
  nb::object cuda_error = nb::steal(PyErr_NewExceptionWithDoc(
      (module_name + ".CudaError").c_str(),
      "A CUDA runtime call failed (the message names the call, the file and the line); the "
      "device may need a reset after a sticky error such as an illegal address.",
      PyExc_RuntimeError, nullptr));
  nb::object device_unavailable = nb::steal(PyErr_NewExceptionWithDoc(
      (module_name + ".DeviceUnavailable").c_str(),
      "A CUDA device was asked for (device='cuda', 'cuda:N', or a CUDA array) but none is usable: "
      "no GPU, no driver, or a gpukit built without CUDA.",
      PyExc_RuntimeError, nullptr));
  cuda_error_type = cuda_error.ptr();
  device_unavailable_type = device_unavailable.ptr();
  m.attr("CudaError") = cuda_error;
  m.attr("DeviceUnavailable") = device_unavailable;
  nb::register_exception_translator(translate);
  gpukit::python::remember_main_thread();
  join_mpi_job_if_launched();

  m.attr("__version__") = GPUKIT_VERSION;
  m.def("built_with_cuda", &gpukit::built_with_cuda,
        "True when this gpukit was built with its CUDA backend (nvcc was found).");
  m.def("cuda_unavailable_reason", &gpukit::cuda_unavailable_reason,
        "Why no CUDA device is usable ('no CUDA device found', ...), or '' when one is.");
  m.def(
      "_mpi_ranks", [] { return gpukit::distributed::Communicator::world().size(); },
      "The ranks of the MPI job this process belongs to (1 when started alone).");
  m.def(
      "_abort_job", [](int code) { gpukit::distributed::abort_job(code); }, nb::arg("code"),
      "Ends every rank of the MPI job with `code` (MPI_Abort): for an exception no other rank "
      "knows of, which would leave them waiting in a collective.");
  m.def("spreads", &gpukit::python::spreads, nb::arg("device"),
        "True when a call on host arrays with `device` spreads over several workers or ranks "
        "(gpukit/scale_out): a device list, or a process that is a rank of an MPI job of "
        "several. ValueError for a spelling the library does not take.");
  m.def("devices", &devices,
        "The usable CUDA devices, one dict each (device, name, pci_bus_id, compute_capability, "
        "sm_count, total_memory_bytes, l2_cache_bytes); empty without a GPU.");

  m.def("_data_pointer", &data_pointer, nb::arg("x"),
        "Test hook: the address of x's first element as the library receives it.");
  m.def("_raise", &raise_error, nb::arg("kind"), nb::arg("message"), nb::arg("bytes") = 0,
        "Test hook: throws the gpukit::Error of `kind` (invalid_input, io, out_of_memory, cuda, "
        "device_unavailable, interrupted) through the exception translator.");

  gpukit::python::bind_primitives(m);
  gpukit::python::bind_finance(m);
  gpukit::python::bind_pde(m);
  gpukit::python::bind_blas(m);
  gpukit::python::bind_rng(m);
}
