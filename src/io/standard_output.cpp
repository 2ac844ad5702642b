// Checked writes to standard output (see standard_output.hpp).

#include "gpukit/io/standard_output.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "write_fully.hpp"

namespace gpukit::io {

namespace {
[[noreturn]] void throw_stdout_failed(int error_number) {
  throw IoError(error_number != 0
                    ? fmt::format("<stdout>: write failed: {}", std::strerror(error_number))
                    : std::string("<stdout>: write failed"));
}
}  // namespace

void write_stdout(std::span<const std::byte> bytes) {
  // Text printed before stays in front; its own failure is reported here too.
  flush_stdout();
  if (const int error = detail::write_fully(STDOUT_FILENO, bytes.data(), bytes.size()); error != 0)
    throw_stdout_failed(error);
}

void write_stdout(std::string_view text) {
  write_stdout(std::as_bytes(std::span(text.data(), text.size())));
}

void flush_stdout() {
  errno = 0;
  std::cout.flush();  // std::cout writes through C's stdout (synced with stdio, the default)
  const bool stream_failed = !std::cout;
  const bool flush_failed = std::fflush(stdout) != 0;
  int error = errno;
  if (!stream_failed && !flush_failed && std::ferror(stdout) == 0) return;
  if (error == 0) {
    // The failure happened earlier and its errno is gone; an empty write asks the descriptor
    // again (EBADF for a closed stdout, ENOSPC for /dev/full).
    if (::write(STDOUT_FILENO, "", 0) < 0) error = errno;
  }
  throw_stdout_failed(error);
}

}  // namespace gpukit::io
