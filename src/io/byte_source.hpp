#pragma once
// Internal: the byte sources the .npy reader runs over, bytes in memory or a file descriptor
// (read in pieces, so that a pipe works and a regular file's size is known up front).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string_view>

namespace gpukit::io::npy_internal {

/// Bytes in memory (not owned), read front to back.
class MemorySource {
 public:
  explicit MemorySource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::optional<std::uint64_t> remaining_bytes() const { return bytes_.size() - offset_; }
  // Copies up to `count` bytes; fewer only at the end of the input.
  std::size_t read(std::byte* destination, std::size_t count) {
    const std::size_t taken = std::min(count, bytes_.size() - offset_);
    if (taken != 0) std::memcpy(destination, bytes_.data() + offset_, taken);
    offset_ += taken;
    return taken;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
};

/// A file descriptor, read front to back in pieces of at most 1 GiB.
class FileSource {
 public:
  /// Reads from `fd` (not owned); `name` (kept by reference) names it in messages. IoError for a
  /// directory or a descriptor that cannot be examined.
  FileSource(int fd, std::string_view name);
  // Known for a regular file (it may still change while it is read: the reads below decide).
  std::optional<std::uint64_t> remaining_bytes() const { return remaining_; }
  // Reads up to `count` bytes; fewer only at the end of the input. IoError when a read fails.
  std::size_t read(std::byte* destination, std::size_t count);

 private:
  int fd_;
  std::string_view name_;
  std::optional<std::uint64_t> remaining_;
};

/// Closes the descriptor it holds (negative: none).
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor();
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace gpukit::io::npy_internal
