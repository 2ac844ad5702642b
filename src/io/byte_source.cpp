// The file descriptor byte source (byte_source.hpp).

#include "byte_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::io::npy_internal {

namespace {

// A single read() moves at most about 2 GiB on Linux; larger requests are split.
constexpr std::size_t kMaxSyscallBytes = std::size_t{1} << 30;

}  // namespace

FileSource::FileSource(int fd, std::string_view name) : fd_(fd), name_(name) {
  struct stat status {};
  if (::fstat(fd_, &status) != 0) {
    throw IoError(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
  }
  if (S_ISDIR(status.st_mode)) throw IoError(fmt::format("{}: is a directory", name_));
  if (S_ISREG(status.st_mode)) {
    // A regular file's size lets the header be checked before anything large is allocated.
    const off_t position = ::lseek(fd_, 0, SEEK_CUR);
    if (position >= 0 && position <= status.st_size) {
      remaining_ = static_cast<std::uint64_t>(status.st_size - position);
    }
    // The data is read once, front to back: let the kernel read ahead aggressively.
    (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
}

std::size_t FileSource::read(std::byte* destination, std::size_t count) {
  std::size_t done = 0;
  while (done < count) {
    const ssize_t got = ::read(fd_, destination + done, std::min(count - done, kMaxSyscallBytes));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
    }
    if (got == 0) break;
    done += static_cast<std::size_t>(got);
  }
  if (remaining_) *remaining_ -= std::min<std::uint64_t>(*remaining_, done);
  return done;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace gpukit::io::npy_internal
