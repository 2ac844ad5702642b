// AtomicFile and write_file_atomically, and through them write_npy: an existing output keeps its
// mode, a symlink is written through to its target, a read-only output is refused, a failure or a
// signal leaves the old output and no temporary file, a failing write names the reason, and a
// target that is not a regular file (a FIFO) is written in place. The expected modes, link targets
// and bytes are set up by the tests with plain POSIX calls, independent of the code under test.

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/npy.hpp"

namespace {

namespace fs = std::filesystem;
using gpukit::IoError;
using gpukit::io::AtomicFile;
using gpukit::io::read_npy;
using gpukit::io::write_file_atomically;
using gpukit::io::write_npy;

class AtomicFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("gpukit_atomic_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    // Read-only files and folders must not stop the clean-up.
    for (const auto& entry : fs::recursive_directory_iterator(dir_))
      if (!entry.is_symlink()) ::chmod(entry.path().c_str(), 0700);
    fs::remove_all(dir_);
  }

  // Every name in `dir`, sorted (hidden temporaries included).
  static std::vector<std::string> names_in(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The umask for the duration of a test.
class ScopedUmask {
 public:
  explicit ScopedUmask(mode_t mask) : previous_(::umask(mask)) {}
  ~ScopedUmask() { ::umask(previous_); }

 private:
  mode_t previous_;
};

TEST_F(AtomicFiles, NewFileGetsTheUsualModeAndExistingFilesKeepTheirs) {
  const ScopedUmask umask(022);
  const std::vector<double> values = {1.5, -2.5};
  write_npy<double>(dir_ / "new.npy", values);
  EXPECT_EQ(mode_of(dir_ / "new.npy"), 0644u);  // 0666 minus the umask, like any new file

  for (const mode_t mode : {0600u, 0640u, 0664u, 0604u, 0200u}) {
    SCOPED_TRACE(mode);
    const fs::path npy = dir_ / "kept.npy", csv = dir_ / "kept.csv";
    write_text(npy, "old");
    write_text(csv, "old");
    ASSERT_EQ(::chmod(npy.c_str(), mode), 0);
    ASSERT_EQ(::chmod(csv.c_str(), mode), 0);
    write_npy<double>(npy, values);
    write_file_atomically(csv, [](std::ostream& out) { out << "a,b\n1,2\n"; });
    EXPECT_EQ(mode_of(npy), mode);
    EXPECT_EQ(mode_of(csv), mode);
    EXPECT_EQ(read_npy(npy).values<double>()[1], -2.5);
    EXPECT_EQ(read_text(csv), "a,b\n1,2\n");
  }
}

TEST_F(AtomicFiles, ASymlinkIsWrittenThroughToItsTarget) {
  // A relative link from one folder to a file in another: the data must land in the target, the
  // link must stay a link, and neither folder may keep a temporary file.
  fs::create_directories(dir_ / "links");
  fs::create_directories(dir_ / "data");
  write_text(dir_ / "data" / "real.csv", "old\n");
  ASSERT_EQ(::chmod((dir_ / "data" / "real.csv").c_str(), 0600), 0);
  fs::create_symlink("../data/real.csv", dir_ / "links" / "out.csv");
  // A chain of two links.
  fs::create_symlink("out.csv", dir_ / "links" / "again.csv");

  write_file_atomically(dir_ / "links" / "again.csv", [](std::ostream& out) { out << "new\n"; });
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "out.csv"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "again.csv"));
  EXPECT_EQ(fs::read_symlink(dir_ / "links" / "out.csv"), "../data/real.csv");
  EXPECT_EQ(read_text(dir_ / "data" / "real.csv"), "new\n");
  EXPECT_EQ(mode_of(dir_ / "data" / "real.csv"), 0600u);
  EXPECT_EQ(names_in(dir_ / "links"), (std::vector<std::string>{"again.csv", "out.csv"}));
  EXPECT_EQ(names_in(dir_ / "data"), (std::vector<std::string>{"real.csv"}));

  // A dangling link creates its target.
  fs::create_symlink("../data/made.npy", dir_ / "links" / "dangling.npy");
  const std::vector<std::int32_t> values = {4, 5, 6};
  write_npy<std::int32_t>(dir_ / "links" / "dangling.npy", values);
  EXPECT_TRUE(fs::is_symlink(dir_ / "links" / "dangling.npy"));
  EXPECT_EQ(read_npy(dir_ / "data" / "made.npy").values<std::int32_t>()[2], 6);
}

TEST_F(AtomicFiles, AReadOnlyFileIsRefusedAndKept) {
  // No write bit for anyone: refused even for root, whom access(2) lets write anything.
  const fs::path path = dir_ / "locked.npy";
  write_text(path, "precious");
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  const std::vector<double> values = {1.0};
  try {
    write_npy<double>(path, values);
    ADD_FAILURE() << "no IoError thrown";
  } catch (const IoError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
    EXPECT_NE(message.find("read-only"), std::string::npos) << message;
  }
  EXPECT_THROW(write_file_atomically(path, [](std::ostream& out) { out << "x"; }), IoError);
  EXPECT_EQ(read_text(path), "precious");
  EXPECT_EQ(mode_of(path), 0444u);
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"locked.npy"}));
}

TEST_F(AtomicFiles, AFailingWriterLeavesTheOldFileAndNoTemporary) {
  const fs::path path = dir_ / "book.csv";
  write_text(path, "old\n");
  bool saw_temporary = false;
  EXPECT_THROW(write_file_atomically(path,
                                     [&](std::ostream& out) {
                                       out << std::string(1 << 20, 'x');  // past the buffer
                                       // The temporary exists, hidden, beside the target.
                                       for (const std::string& name : names_in(dir_))
                                         saw_temporary |= name.starts_with(".book.csv.gpukit-tmp-");
                                       throw std::runtime_error("formatting failed");
                                     }),
               std::runtime_error);
  EXPECT_TRUE(saw_temporary);
  EXPECT_EQ(read_text(path), "old\n");
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"book.csv"}));

  // An AtomicFile destroyed without commit() leaves nothing either.
  {
    AtomicFile file(dir_ / "never.npy");
    file.write(std::string_view("partial"));
    EXPECT_TRUE(fs::exists(file.temporary_path()));
    EXPECT_EQ(file.temporary_path().parent_path(), dir_);
  }
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"book.csv"}));
}

TEST_F(AtomicFiles, AFullDeviceIsAnIoErrorWithTheReason) {
  ASSERT_TRUE(fs::is_character_file("/dev/full"));
  try {
    write_file_atomically("/dev/full",
                          [](std::ostream& out) { out << std::string(1 << 17, 'x') << "tail"; });
    ADD_FAILURE() << "no IoError thrown";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full: write failed: No space left on device"),
              std::string::npos)
        << e.what();
  }
  const std::vector<double> values(1000, 1.0);
  EXPECT_THROW(write_npy<double>("/dev/full", values), IoError);
  EXPECT_TRUE(fs::is_character_file("/dev/full"));  // written into, never renamed over
}

TEST_F(AtomicFiles, AFifoIsWrittenInPlace) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // The reader end first, non-blocking, so that the writer's open does not wait.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  write_file_atomically(fifo, [](std::ostream& out) { out << "through the pipe\n"; });
  char buffer[64] = {};
  const ssize_t got = ::read(reader, buffer, sizeof(buffer));
  ::close(reader);
  EXPECT_EQ(std::string(buffer, static_cast<std::size_t>(std::max<ssize_t>(got, 0))),
            "through the pipe\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"pipe"}));
}

TEST_F(AtomicFiles, ADirectoryTargetIsRefused) {
  fs::create_directory(dir_ / "folder");
  EXPECT_THROW(write_file_atomically(dir_ / "folder", [](std::ostream& out) { out << "x"; }),
               IoError);
  EXPECT_TRUE(fs::is_empty(dir_ / "folder"));
}

// A process killed by `signal_number` while an AtomicFile is open (and once more with two open)
// leaves no temporary file, and dies of that signal.
void expect_signal_removes_temporaries(const fs::path& dir, int signal_number) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(signal_number, SIG_DFL);  // whatever the test runner had set
    gpukit::io::install_temporary_file_cleanup();
    AtomicFile first(dir / "first.npy");
    first.write(std::string_view("partial data"));
    AtomicFile second(dir / "second.csv");
    second.stream() << "a,b\n" << std::flush;
    ::kill(::getpid(), signal_number);
    ::_exit(99);  // not reached when the handler re-raised the signal
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal_number);
}

TEST_F(AtomicFiles, SignalsRemoveTheTemporaryFiles) {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    SCOPED_TRACE(signal_number);
    write_text(dir_ / "first.npy", "old");
    expect_signal_removes_temporaries(dir_, signal_number);
    EXPECT_EQ(names_in(dir_), (std::vector<std::string>{"first.npy"}));
    EXPECT_EQ(read_text(dir_ / "first.npy"), "old");
  }
}

// write_file_region: positioned writes into an existing file, as the processes of a distributed
// solve fill one AtomicFile's temporary: each part lands at its offset, nothing else changes, and
// a missing file is an I/O error (the function never creates one).
TEST_F(AtomicFiles, RegionsLandAtTheirOffsetsAndNeverCreateAFile) {
  const fs::path path = dir_ / "parts.bin";
  {
    std::ofstream out(path, std::ios::binary);
    out << "HEAD";
  }
  const std::string tail = "6789", middle = "45";
  gpukit::io::write_file_region(path, 6, std::as_bytes(std::span(tail)));
  gpukit::io::write_file_region(path, 4, std::as_bytes(std::span(middle)));
  gpukit::io::write_file_region(path, 2, std::as_bytes(std::span(std::string_view("ad"))));
  std::ifstream in(path, std::ios::binary);
  const std::string text(std::istreambuf_iterator<char>(in), {});
  EXPECT_EQ(text, "HEad456789");
  EXPECT_THROW(
      gpukit::io::write_file_region(dir_ / "missing.bin", 0, std::as_bytes(std::span(tail))),
      IoError);
  EXPECT_FALSE(fs::exists(dir_ / "missing.bin"));
}

}  // namespace
