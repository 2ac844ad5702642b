#pragma once
// The one exception family of gpukit. The library never prints or exits: it throws one of these,
// and the CLI maps each kind to one line on stderr and a distinct exit code (exit_code()).

#include <cstddef>
#include <exception>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpukit {

enum class ErrorKind {
  invalid_input,       // bad arguments or a bad input file (names file, line and column)
  io,                  // a file could not be opened, read or written
  out_of_memory,       // host or device allocation failed (carries the bytes requested)
  cuda,                // a CUDA runtime call failed (carries the call, file and line)
  device_unavailable,  // a CUDA device was asked for but none is usable
  check_failed,        // a --check comparison against the CPU reference failed
  interrupted,         // the caller stopped the call (its progress callback threw: Ctrl-C)
};

/// Process exit code for an error kind: 3 invalid input, 4 I/O, 5 out of memory, 6 CUDA,
/// 7 device unavailable, 8 check failed, 130 interrupted (what a shell reports for a command that
/// Ctrl-C ended: 128 + SIGINT). (1 is left for unexpected errors, 2 for command-line usage
/// errors.)
int exit_code(ErrorKind kind) noexcept;

/// Short name of a kind ("invalid input", "I/O error", ...), used as the CLI's message prefix.
const char* kind_name(ErrorKind kind) noexcept;

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

class InvalidInput : public Error {
 public:
  explicit InvalidInput(const std::string& message) : Error(ErrorKind::invalid_input, message) {}
};

class IoError : public Error {
 public:
  explicit IoError(const std::string& message) : Error(ErrorKind::io, message) {}
};

class OutOfMemory : public Error {
 public:
  OutOfMemory(const std::string& where, std::size_t bytes_requested);
  std::size_t bytes_requested() const noexcept { return bytes_requested_; }

 private:
  std::size_t bytes_requested_;
};

class CudaError : public Error {
 public:
  CudaError(const std::string& call, const std::string& reason, const char* file, int line);
  const std::string& call() const noexcept { return call_; }

 private:
  std::string call_;
};

class DeviceUnavailable : public Error {
 public:
  explicit DeviceUnavailable(const std::string& message)
      : Error(ErrorKind::device_unavailable, message) {}
};

/// The caller stopped the call: a progress callback (finance::MonteCarloOptions::progress, ...)
/// threw to cancel it, as Python's Ctrl-C check does. A caller that cancels throws Interrupted
/// with what it means to see again as the cause (Python: its KeyboardInterrupt), so that the
/// cancellation stays one where errors travel as kinds: an MPI job's failure agreement
/// (distributed/communicator.hpp) stops every rank with an Interrupted. cause() is this process's
/// own exception, for a front door to rethrow; null when the stop came from another rank (or the
/// caller gave none). Tested in tests/core/error_test.cpp and
/// tests/distributed/communicator_mpi_test.cpp.
class Interrupted : public Error {
 public:
  explicit Interrupted(const std::string& message, std::exception_ptr cause = nullptr)
      : Error(ErrorKind::interrupted, message), cause_(std::move(cause)) {}
  const std::exception_ptr& cause() const noexcept { return cause_; }

 private:
  std::exception_ptr cause_;
};

}  // namespace gpukit
