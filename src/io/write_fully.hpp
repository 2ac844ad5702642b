#pragma once
// write(2) until every byte is out: the one loop under AtomicFile and write_stdout (internal).

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>

namespace gpukit::io::detail {

/// Writes all `count` bytes to `fd`, retrying short writes and EINTR. Returns 0, or the errno of
/// the write that failed. Async-signal-safe and never throws.
inline int write_fully(int fd, const void* data, std::size_t count) noexcept {
  // A single write() moves at most about 2 GiB on Linux; larger requests are split.
  constexpr std::size_t kMaxSyscallBytes = std::size_t{1} << 30;
  const auto* bytes = static_cast<const std::byte*>(data);
  std::size_t done = 0;
  while (done < count) {
    const ssize_t wrote = ::write(fd, bytes + done, std::min(count - done, kMaxSyscallBytes));
    if (wrote < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (wrote == 0) return EIO;  // no progress and no reason: never loop forever
    done += static_cast<std::size_t>(wrote);
  }
  return 0;
}

}  // namespace gpukit::io::detail
