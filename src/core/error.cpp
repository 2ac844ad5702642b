#include "gpukit/core/error.hpp"

#include <fmt/format.h>

namespace gpukit {

int exit_code(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input:
      return 3;
    case ErrorKind::io:
      return 4;
    case ErrorKind::out_of_memory:
      return 5;
    case ErrorKind::cuda:
      return 6;
    case ErrorKind::device_unavailable:
      return 7;
    case ErrorKind::check_failed:
      return 8;
    case ErrorKind::interrupted:
      return 130;
  }
  return 1;
}

const char* kind_name(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input:
      return "invalid input";
    case ErrorKind::io:
      return "I/O error";
    case ErrorKind::out_of_memory:
      return "out of memory";
    case ErrorKind::cuda:
      return "CUDA error";
    case ErrorKind::device_unavailable:
      return "device unavailable";
    case ErrorKind::check_failed:
      return "check failed";
    case ErrorKind::interrupted:
      return "interrupted";
  }
  return "error";
}

OutOfMemory::OutOfMemory(const std::string& where, std::size_t bytes_requested)
    : Error(ErrorKind::out_of_memory,
            fmt::format("{}: could not allocate {} bytes ({:.1f} MiB)", where, bytes_requested,
                        static_cast<double>(bytes_requested) / (1024.0 * 1024.0))),
      bytes_requested_(bytes_requested) {}

CudaError::CudaError(const std::string& call, const std::string& reason, const char* file, int line)
    : Error(ErrorKind::cuda, fmt::format("{} failed: {} ({}:{})", call, reason, file, line)),
      call_(call) {}

}  // namespace gpukit
