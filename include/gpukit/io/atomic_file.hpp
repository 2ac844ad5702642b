#pragma once
// The one way gpukit writes an output file (CSV books, .npy arrays, benchmark JSON): under a
// temporary name beside the target, renamed over it only when everything was written, so that a
// failure, a crash or a signal never leaves a partial output, and an existing output is either
// untouched or wholly replaced.
//
// Rules (tested in tests/io/atomic_file_test.cpp and tests/cli/output_cli_test.cpp):
//   - the temporary file is ".<name>.gpukit-tmp-<pid>-<n>" in the target's directory, created with
//     O_EXCL (never an existing file, never followed through a symlink), removed on every error
//     path, and, once install_temporary_file_cleanup() ran, on SIGINT, SIGTERM and SIGHUP;
//   - the data is flushed to disk (fsync) before the rename;
//   - an existing output keeps its permission bits (and its owner and group where the process may
//     set them); a new one gets 0666 minus the umask, as any new file;
//   - a symlink is written through: the temporary file is made beside the link's final target and
//     renamed over that target, so the link stays and points at the new data (a dangling link
//     creates its target);
//   - an existing file the user may not write is refused before anything is written (IoError
//     naming the file and the reason): access(2) says not writable, or the file has no write
//     permission bit at all, so that a read-only file is refused even for root, who access(2)
//     says may write anything;
//   - an existing target that is not a regular file (/dev/null, a FIFO, a terminal) is opened and
//     written in place: no rename is possible there; a directory is refused.
// Hard links to a replaced file keep the old data (the rename makes a new inode).

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string_view>

namespace gpukit::io {

/// An output file being written; see the rules above. Not copyable or movable.
///
/// Construction checks the target and creates the temporary file (IoError when the target cannot
/// be written or the temporary cannot be created). write() and stream() fill it; commit() makes
/// it the target. Destroying an uncommitted AtomicFile removes the temporary file and leaves the
/// target as it was.
class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  /// Appends bytes; throws IoError "<path>: write failed: <reason>".
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text);

  /// A buffered stream into the same file, for writers that take an std::ostream. A failed write
  /// sets the stream's badbit; commit() then throws the IoError with the reason.
  std::ostream& stream();

  /// Flushes, sets the kept mode, fsyncs, closes and renames over the target. Throws IoError on
  /// any failure (the temporary file is then removed by the destructor). Call at most once.
  void commit();

  /// The file that commit() replaces: the path given, or a symlink's final target.
  const std::filesystem::path& target() const;
  /// The temporary file (equal to target() for a target that is not a regular file).
  const std::filesystem::path& temporary_path() const;

 private:
  friend void write_file_atomically(const std::filesystem::path& path,
                                    const std::function<void(std::ostream&)>& fill);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes `path` atomically with what `fill` writes into the stream (an AtomicFile's). "-" is
/// standard output: `fill` writes into memory first, and the whole text goes out only when `fill`
/// returned, so an error never leaves half an output there either (write_stdout's errors).
/// An exception from `fill` propagates, except that a write failure of the file itself becomes
/// IoError "<path>: write failed: <reason>".
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& fill);

/// Writes `bytes` at byte `offset` of the existing file `path` (positioned writes: nothing before
/// or after is touched, the file is not truncated and grows as needed), then flushes them to disk
/// (fsync). For outputs written by several processes: one creates an AtomicFile and writes what
/// leads, each writes its own part into the AtomicFile's temporary_path() with this function, and
/// the creator commits only once every part was written (nothing is ever opened with O_CREAT
/// here: the file must exist). IoError "<path>: ..." naming the failure.
void write_file_region(const std::filesystem::path& path, std::uint64_t offset,
                       std::span<const std::byte> bytes);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that remove the temporary files of the
/// AtomicFiles alive at that moment, then end the process by the same signal with its default
/// action (so the exit status is the signal's). A signal the process ignores stays ignored. For
/// programs (the CLI calls it first thing); a library never installs signal handlers on its own.
/// The handler only reads a fixed table of paths and calls unlink(2): async-signal-safe.
void install_temporary_file_cleanup();

}  // namespace gpukit::io
