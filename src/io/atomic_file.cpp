// AtomicFile: a temporary file beside the target, renamed over it when complete; the table of live
// temporary files that the signal handler removes. See atomic_file.hpp for the rules.

#include "gpukit/io/atomic_file.hpp"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/standard_output.hpp"
#include "write_fully.hpp"

namespace gpukit::io {

namespace {

// ---------------------------------------------------------------------------------------------
// The live temporary files, readable from a signal handler: fixed storage, lock-free atomics, no
// allocation. A slot is free (0), busy (1: its path being written and its file being created, by a
// thread that blocks the cleanup signals meanwhile) or live (2: the file may exist).
//
// A signal sent to the process may run the handler on any thread that does not block it (an OpenMP
// worker, say) while another creates a file. So the file is created inside the busy state, and the
// handler waits for busy slots to settle: the creating thread blocks the signals, so the handler
// never waits on its own thread, and a file is never created after the handler looked.

constexpr int kSlots = 64;  // AtomicFiles alive at once; more are written, just not signal-safe
static_assert(std::atomic<int>::is_always_lock_free);

struct TemporarySlot {
  std::atomic<int> state{0};
  char path[PATH_MAX];
};
TemporarySlot g_temporaries[kSlots];

constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP};

// Blocks the cleanup signals on this thread for its lifetime.
class CleanupSignalsBlocked {
 public:
  CleanupSignalsBlocked() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : kCleanupSignals) sigaddset(&set, s);
    ::pthread_sigmask(SIG_BLOCK, &set, &previous_);
  }
  ~CleanupSignalsBlocked() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  CleanupSignalsBlocked(const CleanupSignalsBlocked&) = delete;
  CleanupSignalsBlocked& operator=(const CleanupSignalsBlocked&) = delete;

 private:
  sigset_t previous_;
};

// Creates `path` with O_EXCL and records it as live. Returns the descriptor (or -1 with errno set)
// and the slot (-1 when the table is full or the path too long: the file is then written, just not
// removed on a signal).
struct CreatedTemporary {
  int fd;
  int slot;
};
CreatedTemporary create_temporary(const std::string& path, mode_t mode) {
  const CleanupSignalsBlocked blocked;
  int slot = -1;
  for (int i = 0; i < kSlots && path.size() < PATH_MAX; ++i) {
    int expected = 0;
    if (g_temporaries[i].state.compare_exchange_strong(expected, 1)) {
      slot = i;
      std::memcpy(g_temporaries[i].path, path.c_str(), path.size() + 1);
      break;
    }
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  const int open_errno = errno;
  if (slot >= 0) {
    g_temporaries[slot].state.store(fd >= 0 ? 2 : 0, std::memory_order_release);
    if (fd < 0) slot = -1;
  }
  errno = open_errno;
  return {fd, slot};
}

void unregister_temporary(int slot) {
  if (slot >= 0) g_temporaries[slot].state.store(0, std::memory_order_release);
}

extern "C" void remove_temporaries_and_reraise(int signal_number) {
  for (TemporarySlot& slot : g_temporaries) {
    // A busy slot belongs to another thread inside open(): wait for it (at most about a second,
    // in case that thread is stopped), then remove what it created.
    for (int waits = 0; slot.state.load(std::memory_order_acquire) == 1 && waits < 10000; ++waits) {
      const struct timespec pause = {0, 100'000};
      ::nanosleep(&pause, nullptr);
    }
    if (slot.state.load(std::memory_order_acquire) == 2) ::unlink(slot.path);
  }
  // The default action, taken once this handler returns (the signal is blocked until then).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

// ---------------------------------------------------------------------------------------------

// A buffered std::streambuf over a file descriptor that remembers the errno of the first failed
// write (an iostream only knows that something failed).
class FdStreambuf : public std::streambuf {
 public:
  FdStreambuf() : buffer_(std::size_t{1} << 16) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
  }
  void set_fd(int fd) { fd_ = fd; }
  int error() const { return error_; }

  bool flush_buffer() {
    if (error_ == 0 && pptr() != pbase()) {
      error_ = detail::write_fully(fd_, pbase(), static_cast<std::size_t>(pptr() - pbase()));
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n < static_cast<std::streamsize>(buffer_.size())) return std::streambuf::xsputn(s, n);
    // Large blocks (an array's data) go straight to the file, not through the buffer.
    if (!flush_buffer()) return 0;
    error_ = detail::write_fully(fd_, s, static_cast<std::size_t>(n));
    return error_ == 0 ? n : 0;
  }

  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  int fd_ = -1;
  int error_ = 0;
  std::vector<char> buffer_;
};

std::string reason(int error_number) { return std::strerror(error_number); }

// The name a write to `path` creates when `path` does not resolve to an existing file: `path`
// itself, or the final name a chain of dangling symlinks points to.
std::filesystem::path final_link_target(const std::filesystem::path& path) {
  std::filesystem::path current = path;
  for (int hops = 0; hops < 40; ++hops) {  // Linux's limit (ELOOP)
    struct stat link {};
    if (::lstat(current.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return current;
    std::error_code ec;
    const std::filesystem::path next = std::filesystem::read_symlink(current, ec);
    if (ec)
      throw IoError(
          fmt::format("{}: cannot read the symbolic link: {}", path.string(), ec.message()));
    current = next.is_absolute() ? next : current.parent_path() / next;
  }
  throw IoError(fmt::format("{}: cannot write: {}", path.string(), reason(ELOOP)));
}

}  // namespace

struct AtomicFile::Impl {
  std::string name;  // the path as the user gave it, for messages
  std::filesystem::path target, temporary;
  std::optional<struct stat> existing;  // the regular file being replaced
  bool in_place = false;                // a target that is not a regular file
  bool committed = false;
  int fd = -1;
  int slot = -1;
  FdStreambuf buffer;
  std::ostream stream{&buffer};

  [[noreturn]] void throw_write_failed() const {
    throw IoError(fmt::format("{}: write failed: {}", name, reason(buffer.error())));
  }
};

AtomicFile::AtomicFile(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
  Impl& f = *impl_;
  f.name = path.string();
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw IoError(fmt::format("{}: cannot write: {}", f.name, reason(EISDIR)));
    if (!S_ISREG(st.st_mode)) {
      // /dev/null, a FIFO, a terminal: nothing to rename over; write into it.
      f.fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (f.fd < 0)
        throw IoError(fmt::format("{}: cannot open for writing: {}", f.name, reason(errno)));
      f.in_place = true;
      f.target = f.temporary = path;
      f.buffer.set_fd(f.fd);
      return;
    }
    if (::faccessat(AT_FDCWD, path.c_str(), W_OK, AT_EACCESS) != 0) {
      throw IoError(fmt::format("{}: cannot write: {}", f.name, reason(errno)));
    }
    if ((st.st_mode & 0222) == 0) {
      // Root may write anything, so faccessat() said yes; a file nobody may write is still refused.
      throw IoError(fmt::format("{}: cannot write: {} (the file is read-only, mode {:04o})", f.name,
                                reason(EACCES), st.st_mode & 07777));
    }
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr)
      throw IoError(fmt::format("{}: cannot resolve: {}", f.name, reason(errno)));
    f.target = resolved;
    std::free(resolved);
    f.existing = st;
  } else if (errno == ENOENT) {
    f.target = final_link_target(path);
  } else {
    throw IoError(fmt::format("{}: cannot write: {}", f.name, reason(errno)));
  }

  const std::string file_name = f.target.filename().string();
  if (file_name.empty() || file_name == "." || file_name == "..") {
    throw IoError(fmt::format("{}: not a file name", f.name));
  }
  // Keep the temporary's name under NAME_MAX (255) for any target name.
  const std::string stem = file_name.substr(0, 200);
  const std::filesystem::path directory = f.target.parent_path();
  // Created no more permissive than the file it replaces: its data is never exposed to more users.
  const mode_t create_mode = f.existing ? (f.existing->st_mode & 0666) : 0666;
  static std::atomic<std::uint64_t> counter{0};
  for (int attempt = 0;; ++attempt) {
    // Hidden, and unique per process, call and attempt: two writers never share a temporary.
    f.temporary =
        directory / fmt::format(".{}.gpukit-tmp-{}-{:x}", stem, ::getpid(), counter.fetch_add(1));
    const CreatedTemporary created = create_temporary(f.temporary.string(), create_mode);
    if (created.fd >= 0) {
      f.fd = created.fd;
      f.slot = created.slot;
      break;
    }
    if (errno != EEXIST || attempt >= 100) {
      throw IoError(fmt::format("{}: cannot create a file in {}: {}", f.name,
                                directory.empty() ? std::string(".") : directory.string(),
                                reason(errno)));
    }
  }
  f.buffer.set_fd(f.fd);
}

AtomicFile::~AtomicFile() {
  Impl& f = *impl_;
  if (f.fd >= 0) ::close(f.fd);
  if (!f.committed && !f.in_place) ::unlink(f.temporary.c_str());
  unregister_temporary(f.slot);
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  impl_->buffer.sputn(reinterpret_cast<const char*>(bytes.data()),
                      static_cast<std::streamsize>(bytes.size()));
  if (impl_->buffer.error() != 0) impl_->throw_write_failed();
}

void AtomicFile::write(std::string_view text) {
  write(std::as_bytes(std::span(text.data(), text.size())));
}

std::ostream& AtomicFile::stream() { return impl_->stream; }

const std::filesystem::path& AtomicFile::target() const { return impl_->target; }

const std::filesystem::path& AtomicFile::temporary_path() const { return impl_->temporary; }

void AtomicFile::commit() {
  Impl& f = *impl_;
  if (f.committed || f.fd < 0) throw IoError(fmt::format("{}: committed twice", f.name));
  if (!f.buffer.flush_buffer()) f.throw_write_failed();
  if (f.in_place) {
    if (::close(std::exchange(f.fd, -1)) != 0)
      throw IoError(fmt::format("{}: close failed: {}", f.name, reason(errno)));
    f.committed = true;
    return;
  }
  if (f.existing) {
    // Owner first: chown clears set-user-ID bits, which the chmod then restores. Only root (or
    // the owner, for a group it belongs to) may give a file away; otherwise the file is ours.
    if (f.existing->st_uid != ::geteuid() || f.existing->st_gid != ::getegid()) {
      if (::fchown(f.fd, f.existing->st_uid, f.existing->st_gid) != 0) {
        // Not allowed: the new file stays owned by this user, with the old permission bits.
      }
    }
    if (::fchmod(f.fd, f.existing->st_mode & 07777) != 0)
      throw IoError(fmt::format("{}: cannot keep its permissions: {}", f.name, reason(errno)));
  }
  // Flush before the rename: otherwise a crash could leave the name pointing at a file whose data
  // never reached the disk.
  if (::fsync(f.fd) != 0) throw IoError(fmt::format("{}: fsync failed: {}", f.name, reason(errno)));
  if (::close(std::exchange(f.fd, -1)) != 0)
    throw IoError(fmt::format("{}: close failed: {}", f.name, reason(errno)));
  if (::rename(f.temporary.c_str(), f.target.c_str()) != 0) {
    throw IoError(fmt::format("{}: cannot replace it with the temporary file {}: {}", f.name,
                              f.temporary.string(), reason(errno)));
  }
  f.committed = true;
  unregister_temporary(std::exchange(f.slot, -1));
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& fill) {
  if (path == "-") {
    std::ostringstream text;
    fill(text);
    if (!text) throw IoError("<stdout>: formatting the output failed");
    write_stdout(text.view());
    return;
  }
  AtomicFile file(path);
  try {
    fill(file.stream());
  } catch (const std::exception&) {
    // The writer saw a failed stream; the reason is known here.
    if (file.impl_->buffer.error() != 0) file.impl_->throw_write_failed();
    throw;
  }
  file.commit();
}

void write_file_region(const std::filesystem::path& path, std::uint64_t offset,
                       std::span<const std::byte> bytes) {
  const std::string name = path.string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw IoError(fmt::format("{}: cannot open for writing: {}", name, reason(errno)));
  // A single write() moves at most about 2 GiB on Linux; larger parts go in pieces.
  constexpr std::size_t kMaxSyscallBytes = std::size_t{1} << 30;
  std::size_t done = 0;
  int error = 0;
  while (done < bytes.size()) {
    const ssize_t put =
        ::pwrite(fd, bytes.data() + done, std::min(bytes.size() - done, kMaxSyscallBytes),
                 static_cast<off_t>(offset + done));
    if (put < 0) {
      if (errno == EINTR) continue;
      error = errno;
      break;
    }
    done += static_cast<std::size_t>(put);
  }
  // fsync where the data can reach a disk; a pipe or a terminal has nothing to flush.
  if (error == 0 && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) throw IoError(fmt::format("{}: write failed: {}", name, reason(error)));
}

void install_temporary_file_cleanup() {
  for (int signal_number : kCleanupSignals) {
    struct sigaction previous {};
    if (::sigaction(signal_number, nullptr, &previous) != 0) continue;
    // A signal ignored by whoever started us (nohup, a background job) stays ignored.
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_temporaries_and_reraise;
    sigemptyset(&action.sa_mask);
    // One handler at a time: a second signal waits until the first has removed the files.
    for (int s : kCleanupSignals) sigaddset(&action.sa_mask, s);
    ::sigaction(signal_number, &action, nullptr);
  }
}

}  // namespace gpukit::io
