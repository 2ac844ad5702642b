// What gpukit does to its outputs: stdout carries only data and results (summaries go to stderr),
// a failing stdout is an I/O error (exit 4), an existing output keeps its mode, a symlink is
// written through, a read-only output is refused, and SIGINT/SIGTERM during a write leave no
// temporary file. Expected values are computed here independently (sums by hand, modes and links
// set with POSIX calls).
//
// GPUKIT_BINARY_UNDER_TEST, when set, names another gpukit binary to test (e.g. an older build,
// to see these tests fail on it).

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/io/npy.hpp"

namespace {

namespace fs = std::filesystem;
using gpukit::cli_testing::scratch;
using gpukit::cli_testing::slurp;

const std::string& binary() {
  static const std::string path = [] {
    const char* other = std::getenv("GPUKIT_BINARY_UNDER_TEST");
    return std::string(other != nullptr && *other != '\0' ? other : GPUKIT_BINARY);
  }();
  return path;
}

// A fresh folder per test under the CLI scratch folder.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir = scratch() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

mode_t mode_of(const fs::path& path) {
  struct stat st {};
  EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

struct ShellResult {
  int exit_code;
  std::string err;
};

// Runs `gpukit <args>` through /bin/sh with `redirect` for its stdout (e.g. ">/dev/full", ">&-"),
// stdin from /dev/null and stderr captured.
ShellResult run_with_stdout(const std::string& args, const std::string& redirect) {
  const fs::path err = scratch() / "output_cli_stderr.txt";
  const std::string command =
      binary() + " " + args + " </dev/null " + redirect + " 2>" + err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(err)};
}

// Runs `gpukit <args>` with stdout and stderr captured.
gpukit::cli_testing::Result run(const std::string& args) {
  const fs::path out = scratch() / "output_cli_stdout.txt";
  std::string redirect = ">";  // appended, not `">" + ...`: GCC 12 warns falsely (-Wrestrict)
  redirect += out.string();
  const ShellResult r = run_with_stdout(args, redirect);
  return {r.exit_code, slurp(out), r.err};
}

std::string write_ints(const fs::path& path, const std::vector<std::int32_t>& values) {
  gpukit::io::write_npy<std::int32_t>(path, std::span<const std::int32_t>(values));
  return path.string();
}

std::string write_book(const fs::path& path) {
  std::ofstream(path) << "type,spot,strike,maturity,rate,volatility\n"
                         "call,100,100,1,0.05,0.2\n"
                         "put,100,110,0.5,0.05,0.3\n";
  return path.string();
}

// ---- stdout carries only the data ---------------------------------------------------------------

TEST(OutputCli, CompactToStdoutPipesIntoReduce) {
  const fs::path dir = fresh_folder("compact_pipe");
  const std::string in = write_ints(dir / "a.npy", {3, -1, 5, 0, -7, 2});
  // The pipe of the issue; each side's exit status and stderr kept apart.
  const std::string script =
      "{ " + binary() + " compact --device cpu -i " + in + " -o - --keep positive 2>" +
      (dir / "compact.err").string() + "; echo $? >" + (dir / "compact.rc").string() + "; } | " +
      binary() + " reduce --device cpu -i - >" + (dir / "sum.out").string() + " 2>" +
      (dir / "reduce.err").string() + "; echo $? >" + (dir / "reduce.rc").string();
  ASSERT_EQ(std::system(script.c_str()), 0);
  EXPECT_EQ(slurp(dir / "compact.rc"), "0\n") << slurp(dir / "compact.err");
  EXPECT_EQ(slurp(dir / "reduce.rc"), "0\n") << slurp(dir / "reduce.err");
  EXPECT_EQ(slurp(dir / "sum.out"), "10\n");  // 3 + 5 + 2
  EXPECT_EQ(slurp(dir / "compact.err"), "gpukit: compact: kept 3 of 6 elements (positive)\n");

  // The bytes on stdout are exactly one .npy array: nothing after it.
  const auto r = run("compact --device cpu -i " + in + " -o - --keep negative");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const gpukit::io::NpyArray kept =
      gpukit::io::parse_npy(std::as_bytes(std::span(r.out.data(), r.out.size())), "compact stdout");
  const auto v = kept.values<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(v.begin(), v.end()), (std::vector<std::int32_t>{-1, -7}));
}

TEST(OutputCli, GeneratedBookOnStdoutKeepsTheCheckReportOnStderr) {
  const auto r = run("bs --device cpu --generate 50 --output - --check");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 51);  // the header and 50 rows
  EXPECT_TRUE(r.out.starts_with("id,type,spot,strike,maturity,rate,volatility,price\n")) << r.out;
  EXPECT_EQ(r.out.find("check"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("check: "), std::string::npos) << r.err;
}

TEST(OutputCli, BenchJsonOnStdoutKeepsTheTableOnStderr) {
  const auto r = run("bench reduce --device cpu --size 1000 --repeat 1 --warmup 0 --json -");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.starts_with("{")) << r.out;
  EXPECT_TRUE(r.out.ends_with("}\n")) << r.out;
  EXPECT_NE(r.err.find("variant"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists("-"));
}

// ---- a failing stdout is an I/O error
// ------------------------------------------------------------

TEST(OutputCli, AFailingStdoutIsAnIoErrorForEveryCommand) {
  const fs::path dir = fresh_folder("failing_stdout");
  const std::string ints = write_ints(dir / "x.npy", {1, 2, 3, -4});
  const std::string book = write_book(dir / "book.csv");
  const std::vector<std::string> commands = {
      "reduce --device cpu -i " + ints,
      "reduce --device cpu --json -i " + ints,
      "info",
      "bs --device cpu --generate 100",
      "bs --device cpu --input " + book + " --output -",
      "scan --device cpu -i " + ints + " -o -",
      "compact --device cpu -i " + ints + " -o - --keep nonzero",
      "poisson --device cpu --demo 16",
      "mc --device cpu --demo --demo-options 2 --paths 1024",
      "bench reduce --device cpu --size 1000 --repeat 1 --warmup 0",
      "bs --help",
  };
  for (const std::string& command : commands) {
    SCOPED_TRACE(command);
    // Not vacuous: each command prints something when stdout works.
    const auto ok = run(command);
    ASSERT_EQ(ok.exit_code, 0) << ok.err;
    ASSERT_FALSE(ok.out.empty());

    const ShellResult full = run_with_stdout(command, ">/dev/full");
    EXPECT_EQ(full.exit_code, 4) << full.err;
    EXPECT_NE(full.err.find("gpukit: I/O error: <stdout>: write failed: No space left on device"),
              std::string::npos)
        << full.err;

    const ShellResult closed = run_with_stdout(command, ">&-");
    EXPECT_EQ(closed.exit_code, 4) << closed.err;
    EXPECT_NE(closed.err.find("gpukit: I/O error: <stdout>: write failed: Bad file descriptor"),
              std::string::npos)
        << closed.err;
  }
}

// A reader that stops early (`gpukit ... -o - | head -c 1`): gpukit ends as every Unix filter does,
// by SIGPIPE, silently (a shell sees 141 = 128 + 13); where its parent had SIGPIPE ignored, the
// broken pipe is an I/O error, exit 4, as README says. The output (16 MB) is far beyond a pipe's
// buffer, so the write meets the closed pipe whatever the timing.
TEST(OutputCli, AReaderThatStopsEarlyEndsGpukitBySigpipeOrExit4WhereIgnored) {
  const fs::path dir = fresh_folder("broken_pipe");
  const std::string ints = write_ints(dir / "big.npy", std::vector<std::int32_t>(1 << 22, 1));
  const std::string status = (dir / "status").string(), err = (dir / "err").string();
  for (const bool ignored : {false, true}) {
    SCOPED_TRACE(ignored ? "SIGPIPE ignored" : "SIGPIPE default");
    const std::string script = std::string(ignored ? "trap '' PIPE; " : "") + "{ " + binary() +
                               " scan --device cpu -i " + ints + " -o - 2>" + err + "; echo $? >" +
                               status + "; } | head -c 1 >/dev/null";
    // std::system runs the script in /bin/sh; the trap's SIG_IGN is inherited by gpukit.
    ASSERT_EQ(std::system(script.c_str()), 0) << script;
    const std::string code = slurp(status), message = slurp(err);
    if (ignored) {
      EXPECT_EQ(code, "4\n") << message;
      EXPECT_NE(message.find("gpukit: I/O error: <stdout>: write failed: Broken pipe"),
                std::string::npos)
          << message;
    } else {
      EXPECT_EQ(code, "141\n") << message;
      EXPECT_EQ(message, "");
    }
    EXPECT_EQ(names_in(dir), (std::vector<std::string>{"big.npy", "err", "status"}));
  }
}

// ---- an existing output's metadata
// ---------------------------------------------------------------

// The three writers the CLI has: a CSV book, a .npy array and a benchmark JSON, each written to
// `path` (the inputs live in `dir`).
std::vector<std::string> writing_commands(const fs::path& dir, const std::string& path) {
  const std::string ints = write_ints(dir / "in.npy", {5, 6, 7});
  const std::string book = write_book(dir / "book.csv");
  return {"bs --device cpu --input " + book + " --output " + path,
          "scan --device cpu -i " + ints + " -o " + path,
          "bench reduce --device cpu --size 1000 --repeat 1 --warmup 0 --json " + path};
}

TEST(OutputCli, RewritingAnOutputKeepsItsMode) {
  const fs::path dir = fresh_folder("keep_mode");
  const fs::path out = dir / "out";
  for (const std::string& command : writing_commands(dir, out.string())) {
    SCOPED_TRACE(command);
    std::ofstream(out) << "old";
    ASSERT_EQ(::chmod(out.c_str(), 0600), 0);
    const auto r = run(command);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(slurp(out), "old");
    EXPECT_EQ(mode_of(out), 0600u);
    ASSERT_EQ(::chmod(out.c_str(), 0640), 0);
    ASSERT_EQ(run(command).exit_code, 0);
    EXPECT_EQ(mode_of(out), 0640u);
  }
}

TEST(OutputCli, ASymlinkedOutputIsWrittenThrough) {
  const fs::path dir = fresh_folder("symlink");
  fs::create_directories(dir / "results");
  const fs::path target = dir / "results" / "latest", link = dir / "out";
  fs::create_symlink("results/latest", link);
  for (const std::string& command : writing_commands(dir, link.string())) {
    SCOPED_TRACE(command);
    std::ofstream(target) << "stale";
    const auto r = run(command);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(fs::read_symlink(link), "results/latest");
    EXPECT_NE(slurp(target), "stale");
    EXPECT_EQ(names_in(dir / "results"), (std::vector<std::string>{"latest"}));
  }
}

TEST(OutputCli, AReadOnlyOutputIsRefused) {
  // Tests may run as root, whom access(2) lets write anything: the rule refuses a file that has no
  // write permission for anyone, whoever runs gpukit.
  const fs::path dir = fresh_folder("read_only");
  const fs::path out = dir / "locked";
  for (const std::string& command : writing_commands(dir, out.string())) {
    SCOPED_TRACE(command);
    std::ofstream(out) << "precious";
    ASSERT_EQ(::chmod(out.c_str(), 0444), 0);
    const auto r = run(command);
    EXPECT_EQ(r.exit_code, 4) << r.err;
    EXPECT_NE(
        r.err.find("gpukit: I/O error: " + out.string() + ": cannot write: Permission denied"),
        std::string::npos)
        << r.err;
    EXPECT_EQ(slurp(out), "precious");
    EXPECT_EQ(mode_of(out), 0444u);
    ASSERT_EQ(::chmod(out.c_str(), 0644), 0);
  }
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"book.csv", "in.npy", "locked"}));
}

// ---- signals during a write
// ----------------------------------------------------------------------

// Starts `gpukit bs --generate N --output <dir>/book.csv`, waits until its temporary file exists,
// sends `signal_number`, and checks that the process died of that signal and left nothing.
void expect_signal_leaves_no_temporary(int signal_number) {
  const fs::path dir = fresh_folder("signal_" + std::to_string(signal_number));
  const std::string output = (dir / "book.csv").string();
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // As from a terminal: the test runner may have started us with SIGINT ignored.
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 1);
    ::dup2(null, 2);
    // 1M rows: about 94 MB of CSV, written for a second or more.
    const char* argv[] = {binary().c_str(), "bs",       "--device",     "cpu",  "--generate",
                          "1000000",        "--output", output.c_str(), nullptr};
    ::execv(argv[0], const_cast<char* const*>(argv));
    ::_exit(127);
  }
  bool saw_temporary = false;
  int status = 0;
  bool exited = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!saw_temporary && std::chrono::steady_clock::now() < deadline) {
    for (const std::string& name : names_in(dir)) saw_temporary |= name.starts_with(".book.csv");
    if (!saw_temporary) {
      if (::waitpid(child, &status, WNOHANG) == child) {
        exited = true;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  if (!exited) {
    ::kill(child, signal_number);
    ASSERT_EQ(::waitpid(child, &status, 0), child);
  }
  ASSERT_TRUE(saw_temporary) << "the write finished or never started before the signal";
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), signal_number);
  const std::vector<std::string> left = names_in(dir);
  EXPECT_TRUE(left.empty()) << "left behind: " << left.front();
}

TEST(OutputCli, SigtermDuringAWriteLeavesNoTemporaryFile) {
  expect_signal_leaves_no_temporary(SIGTERM);
}

TEST(OutputCli, SigintDuringAWriteLeavesNoTemporaryFile) {
  expect_signal_leaves_no_temporary(SIGINT);
}

}  // namespace
