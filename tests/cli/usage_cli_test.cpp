// The command line a user expects (issue 18, section 2 and item 1.2): --version, unknown commands,
// one spelling of the options, usage errors exit 2 with a "gpukit:" message, help screens that
// stand alone, integer options, --quiet, progress lines ended by a newline.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp, write_file

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A usage error: exit 2 and exactly one line on stderr, starting with "gpukit:".
void expect_usage_error(const std::string& args, const std::string& message = "") {
  const Result r = run(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
  EXPECT_EQ(r.err.rfind("gpukit: ", 0), 0u) << args << "\n" << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << args << "\n" << r.err;
  if (!message.empty()) {
    EXPECT_TRUE(contains(r.err, message)) << args << "\n" << r.err;
  }
  EXPECT_TRUE(r.out.empty()) << args << "\n" << r.out;
}

std::string small_book() {
  return write_file("usage_book.csv",
                    "id,type,spot,strike,maturity,rate,volatility\n"
                    "A,call,100,100,1,0.05,0.2\n"
                    "B,put,100,110,0.5,0.05,0.3\n");
}

TEST(CliUsage, VersionNamesTheVersionRevisionAndCuda) {
  const Result r = run("--version");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("gpukit 0.", 0), 0u) << r.out;
  EXPECT_TRUE(contains(r.out, "git revision ")) << r.out;
  EXPECT_FALSE(contains(r.out, "git revision \n")) << r.out;
  EXPECT_TRUE(contains(r.out, gpukit::built_with_cuda() ? "CUDA on (architectures " : "CUDA off"))
      << r.out;
}

TEST(CliUsage, AnUnknownCommandSaysSoAndSuggestsTheNearest) {
  expect_usage_error("reduc", "unknown command 'reduc'; did you mean 'reduce'?");
  expect_usage_error("--quiet posson -i x", "did you mean 'poisson'?");
  const Result r = run("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'frobnicate'")) << r.err;
  EXPECT_FALSE(contains(r.err, "did you mean")) << r.err;
}

TEST(CliUsage, ThreadsOutsideTheStatedRangeAreUsageErrors) {
  const std::string limit = std::to_string(std::max(1024u, std::thread::hardware_concurrency()));
  // 70000 crashed OpenMP (exit 139), 32768-60000 aborted in libgomp (exit 1).
  for (const char* threads : {"70000", "32768", "-1", "4294967297", "1.5"}) {
    expect_usage_error(std::string("bs --device cpu --generate 10 --threads ") + threads,
                       "--threads: must be");
  }
  expect_usage_error("bs --device cpu --generate 10 --threads 70000", "from 0 to " + limit);
  // 0 (the default) is all cores; 1 and the limit itself are accepted.
  for (const std::string& threads : {std::string("0"), std::string("1"), limit}) {
    const Result r = run("bs --device cpu --generate 10 --threads " + threads);
    EXPECT_EQ(r.exit_code, 0) << threads << "\n" << r.err;
  }
  const Result help = run("bs --help");
  EXPECT_TRUE(contains(help.out, "CPU threads, 1 to " + limit + " (0, the default: all cores)"))
      << help.out;
}

TEST(CliUsage, EveryUsageErrorExits2WithAGpukitLine) {
  const std::string book = small_book();
  const std::string missing = (scratch() / "no_such_input.npy").string();
  const std::string out = (scratch() / "usage_never.out").string();
  expect_usage_error("bs --precision quad -i " + book + " -o " + out, "--precision");
  expect_usage_error("bs --frobnicate -i " + book + " -o " + out, "--frobnicate");
  expect_usage_error("bs -i " + book, "--output");  // a missing required flag
  expect_usage_error("bs", "--input");
  expect_usage_error("mc", "--input");
  expect_usage_error("poisson", "--input");
  expect_usage_error("reduce", "--input");
  expect_usage_error("bs --demo 10 --device gpu", "--device");
  expect_usage_error("bs --demo 10 --device cuda:x", "--device");
  expect_usage_error("mc -i " + book + " -o " + out + " --paths abc", "--paths");
  expect_usage_error("mc -i " + book + " -o " + out + " --paths 1", "--paths: must be from 2");
  expect_usage_error("mc -i " + book + " -o " + out + " --monitoring weekly", "--monitoring");
  // Checked before the input is read: a missing input would otherwise say exit 4 first.
  expect_usage_error("reduce --op mean -i " + missing, "unknown reduction 'mean'");
  expect_usage_error("scan --op mean -i " + missing + " -o " + out, "unknown scan operation");
  expect_usage_error("compact --keep odd -i " + missing + " -o " + out, "unknown keep predicate");
  expect_usage_error("poisson --length 1,abc -i " + missing + " -o " + out, "'abc'");
  expect_usage_error("poisson --demo 1", "--demo: must be from 2 to 32768");
  expect_usage_error("bench nonsense --device cpu", "unknown case 'nonsense'");
  // A CPU run ignored an unknown kernel name; a CPU-only build has none to name.
  expect_usage_error("bs --generate 10 --device cpu --variant nonsense", "--variant: ");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// CLI11 puts "--name: " before a check's message; messages that named the option again read
// "--device: --device must be ..." and "--length: --length: 'abc' ...". Each bad value below, for
// every kind of check the commands use, names its option once.
TEST(CliUsage, NoMessageRepeatsItsOptionName) {
  const std::string f = (scratch() / "no_repeat_f.npy").string();
  const std::int64_t shape[] = {4, 4};
  gpukit::io::write_npy<double>(f, shape, std::vector<double>(16, 0.0));
  const std::string out = (scratch() / "no_repeat_out.npy").string();
  const std::pair<std::string, std::string> cases[] = {
      {"bs --demo 10 --device gpu",
       "--device: must be auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,..., got 'gpu'"},
      {"bs --demo 10 --device cuda:x", "--device: 'cuda:x' is not a GPU list"},
      {"mc --demo 2 --device cuda:1,x", "--device: 'cuda:1,x' is not a GPU list"},
      {"poisson --length 1,abc -i " + f + " -o " + out, "--length: 'abc' is not a number"},
      {"poisson --length 1,-2 -i " + f + " -o " + out, "--length: -2 must be finite and > 0"},
      {"poisson --device cpu --length 1,2,3 -i " + f + " -o " + out,
       "--length gives 3 values for a grid"},
      {"bench reduce --repeat 0", "--repeat: must be from 1"},
      {"gemm " + f + " " + f + " -o " + out + " --variant nosuch",
       "--variant: unknown gemm variant"},
      {"saxpy --alpha nan " + f + " " + f + " -o " + out, "--alpha must be finite"},
      {"reduce --op mean -i " + f, "--op: unknown reduction 'mean'"},
  };
  const std::regex repeated(R"((--[a-z-]+):? \1\b)");
  for (const auto& [args, message] : cases) {
    expect_usage_error(args, message);
    const Result r = run(args);
    EXPECT_FALSE(std::regex_search(r.err, repeated)) << args << "\n" << r.err;
  }
}

TEST(CliUsage, SeedsAreRefusedBelowZero) {
  // CLI11 alone reads -1 into an unsigned seed as 2^64 - 1.
  expect_usage_error("bs --generate 10 --seed -1",
                     "--seed: must be from 0 to 18446744073709551615");
  expect_usage_error("mc --demo --demo-options 1 --seed -1", "--seed");
  expect_usage_error("mc --demo --demo-options 1 --seed 18446744073709551616", "--seed");
}

TEST(CliUsage, DemoOptionsZeroGetsAReadableRange) {
  expect_usage_error("mc --demo --demo-options 0",
                     "--demo-options: must be from 1 to 2147483647, got 0");
  expect_usage_error("mc --demo 0", "--demo: must be from 1 to 2147483647, got 0");
}

TEST(CliUsage, IntegerOptionsTakeExactExponentForms) {
  Result r = run("mc --demo --demo-options 2 --device cpu --paths 2e3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(2000 paths each, 2 options")) << r.out;
  r = run("mc --demo 2 --device cpu --paths 2.5e3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(2500 paths each, 2 options")) << r.out;
  // Leading zeros are decimal, not octal.
  r = run("mc --demo 2 --device cpu --paths 0100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(100 paths each")) << r.out;
  r = run("bs --demo 1e3 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(1000 options)")) << r.out;
  for (const char* paths : {"1.5e3x", "2500.5", "1e-3", "0x10", "1e100", "", "e3", "1e"}) {
    expect_usage_error(std::string("mc --demo 2 --device cpu --paths '") + paths + "'",
                       "--paths: must be");
  }
}

// bench's --repeat and --warmup were CLI11 number checks: --repeat 0 printed a 309-digit range and
// --repeat 1e1 was refused, where every other integer option takes 1e1.
TEST(CliUsage, BenchRepeatAndWarmupAreIntegerOptionsLikeEveryOther) {
  expect_usage_error("bench reduce --device cpu --repeat 0",
                     "--repeat: must be from 1 to 2147483647, got 0");
  expect_usage_error("bench reduce --device cpu --warmup -1",
                     "--warmup: must be from 0 to 2147483647, got -1");
  expect_usage_error("bench reduce --device cpu --repeat 2.5", "--repeat: must be a whole number");
  const auto json = (scratch() / "bench_repeat.json").string();
  const Result r =
      run("bench reduce --device cpu --size 1e3 --repeat 3e0 --warmup 0e0 --json " + json);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(slurp(json), "--repeat 3e0")) << slurp(json);
  for (const std::string& line : {r.err, r.out}) {
    EXPECT_LT(line.size(), 20000u);  // nothing like the 309-digit range
  }
}

// Every integer option of every command goes through one check (cli::integer_in): CLI11's own
// numeric checks show as NUMBER or a range in the help screens; integer_in's show as INT.
TEST(CliUsage, EveryIntegerOptionTakesTheExponentForm) {
  for (const char* command : {"bs", "mc", "poisson", "bench", "reduce", "scan", "compact", "saxpy",
                              "gemm", "demo", "info"}) {
    const Result help = run(std::string(command) + " --help");
    ASSERT_EQ(help.exit_code, 0) << command;
    EXPECT_FALSE(contains(help.out, "POSITIVE")) << command << "\n" << help.out;
    EXPECT_FALSE(contains(help.out, "NONNEGATIVE")) << command << "\n" << help.out;
    EXPECT_FALSE(contains(help.out, "e+308")) << command << "\n" << help.out;
  }
}

TEST(CliUsage, OneDemoFormForEveryCaseStudy) {
  Result r = run("bs --demo 1000 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(1000 options)")) << r.out;
  EXPECT_TRUE(contains(r.out, "check: PASS")) << r.out;
  r = run("mc --demo 2 --paths 2000 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "All 2 options")) << r.out;
  r = run("poisson --demo --device cpu");  // the case study's N = 64
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "N=64\n")) << r.out;
  r = run("poisson --demo 16 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "N=16\n")) << r.out;
  // The old spellings still work.
  r = run("bs --generate 1000 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "(1000 options)")) << r.out;
  r = run("mc --demo --demo-options 2 --paths 2000 --device cpu");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "All 2 options")) << r.out;
  // A demo writes no file: --output with it is refused, not ignored.
  expect_usage_error("bs --demo 10 -o " + (scratch() / "x.csv").string(), "--demo");
}

TEST(CliUsage, ShortInputAndOutputOnEveryFileCommand) {
  const std::string book = small_book();
  const auto out = (scratch() / "usage_bs.csv").string();
  Result r = run("bs --device cpu -i " + book + " -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(slurp(out), "A,call,100,100,1,0.05,0.2,10.45")) << slurp(out);
  const auto mc_out = (scratch() / "usage_mc.csv").string();
  r = run("mc --device cpu --paths 1000 -i " + book + " -o " + mc_out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(slurp(mc_out), ",price,std_error,ci_low,ci_high,paths")) << slurp(mc_out);
}

TEST(CliUsage, HelpScreensStandAlone) {
  const Result top = run("--help");
  ASSERT_EQ(top.exit_code, 0);
  for (const char* part : {"Exit codes: 0 success", "2 usage error", "3 invalid input data",
                           "4 I/O error", "8 a --check failed", "--version", "--quiet"}) {
    EXPECT_TRUE(contains(top.out, part)) << part << "\n" << top.out;
  }
  // The first line names every case study (it left out SAXPY and GEMM).
  const std::string first_line = top.out.substr(0, top.out.find('\n'));
  for (const char* case_study : {"Black-Scholes", "Monte Carlo", "Poisson", "reduction", "scan",
                                 "compaction", "SAXPY", "GEMM"}) {
    EXPECT_TRUE(contains(first_line, case_study)) << case_study << "\n" << first_line;
  }
  const Result bs = run("bs --help");
  for (const char* part :
       {"call, put, c or p", "spot", "strike", "maturity", "rate", "volatility", "dividend",
        "then price (and delta, gamma, vega, theta", "-i,--input", "-o,--output", "--demo"}) {
    EXPECT_TRUE(contains(bs.out, part)) << part << "\n" << bs.out;
  }
  const Result mc = run("mc --help");
  for (const char* part :
       {"call, put, c or p", "none, down-out, down-in, up-out or up-in", "steps",
        "price, std_error, ci_low, ci_high", "vrf_antithetic", "-i,--input", "-o,--output"}) {
    EXPECT_TRUE(contains(mc.out, part)) << part << "\n" << mc.out;
  }
  for (const char* command : {"reduce", "scan", "compact"}) {
    const Result r = run(std::string(command) + " --help");
    EXPECT_TRUE(contains(r.out, "int32, int64, uint32,\nfloat32 or float64")) << r.out;
  }
  // No internal jargon: the case studies are named for what they are.
  for (const char* command : {"", "bs ", "mc ", "poisson ", "demo ", "reduce "}) {
    const Result r = run(std::string(command) + "--help");
    EXPECT_FALSE(contains(r.out, "seed's")) << command << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "seed-style")) << command << "\n" << r.out;
    EXPECT_FALSE(contains(r.out, "the seed ")) << command << "\n" << r.out;
  }
  EXPECT_TRUE(contains(run("bs --help").out, "the 2008 NVIDIA case study"));
}

TEST(CliUsage, QuietSilencesTheDeviceNotice) {
  if (gpukit::cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present: auto says nothing";
  Result r = run("bs --demo 100");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "using the CPU")) << r.err;
  for (const char* args : {"bs --demo 100 --quiet", "-q bs --demo 100", "--quiet bs --demo 100"}) {
    r = run(args);
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    EXPECT_EQ(r.err, "") << args;
  }
}

TEST(CliUsage, QuietSilencesPoissonsNoticeButNotItsWarning) {
  // A mean far from zero: the solve removes it and warns, --quiet or not.
  const std::int64_t shape[] = {4, 4};
  const auto f = (scratch() / "quiet_f.npy").string(), u = (scratch() / "quiet_u.npy").string();
  gpukit::io::write_npy<double>(f, shape, std::vector<double>(16, 1.0));
  Result r = run("poisson --device cpu -i " + f + " -o " + u);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "gpukit: poisson: 4x4 (lengths 1x1) double")) << r.err;
  EXPECT_TRUE(contains(r.err, "gpukit: poisson: warning: the mean of f")) << r.err;
  r = run("poisson --quiet --device cpu -i " + f + " -o " + u);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.rfind("gpukit: poisson: warning: the mean of f", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliUsage, ReadErrorsNameTheFileAndTheReason) {
  Result r = run("bs --device cpu -i /nonexistent/book.csv -o -");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, "/nonexistent/book.csv: cannot open for reading: No such file"))
      << r.err;
  r = run("mc --device cpu -i " + scratch().string() + " -o -");
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_TRUE(contains(r.err, scratch().string() + ": cannot read: it is a directory")) << r.err;
}

// Runs gpukit with stderr on a pseudo-terminal (progress lines are shown only to a person) and
// returns what it wrote there.
std::string stderr_on_a_terminal(const std::vector<std::string>& args) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return "<no pty>";
  const std::string slave_name = ::ptsname(master);
  const pid_t child = ::fork();
  if (child == 0) {
    const int slave = ::open(slave_name.c_str(), O_RDWR | O_NOCTTY);
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0), ::dup2(null, 1), ::dup2(slave, 2);
    std::vector<char*> argv = {const_cast<char*>(GPUKIT_BINARY)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(GPUKIT_BINARY, argv.data());
    ::_exit(127);
  }
  std::string text;
  char buffer[4096];
  for (;;) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) > 0) {
      const ssize_t n = ::read(master, buffer, sizeof buffer);
      if (n > 0) {
        text.append(buffer, static_cast<std::size_t>(n));
        continue;
      }
      break;  // EIO: the child closed the terminal
    }
    int status = 0;
    if (::waitpid(child, &status, WNOHANG) == child) {
      // Drain what is left, then stop.
      while (::poll(&p, 1, 0) > 0) {
        const ssize_t n = ::read(master, buffer, sizeof buffer);
        if (n <= 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
      }
      ::close(master);
      return text;
    }
  }
  ::waitpid(child, nullptr, 0);
  ::close(master);
  return text;
}

TEST(CliUsage, ProgressLinesEndWithANewlineAndQuietSilencesThem) {
  const std::string book = small_book();
  const auto out = (scratch() / "usage_progress.csv").string();
  std::string err = stderr_on_a_terminal({"bs", "--device", "cpu", "-i", book, "-o", out});
  EXPECT_TRUE(contains(err, "gpukit: bs: reading 100% (2 options)")) << err;
  ASSERT_FALSE(err.empty());
  EXPECT_EQ(err.back(), '\n') << err;  // a terminal turns "\n" into "\r\n"
  err = stderr_on_a_terminal({"bs", "--quiet", "--device", "cpu", "-i", book, "-o", out});
  EXPECT_EQ(err, "");
  // An error after a progress line starts a line of its own (the reader reports every 2^20 rows).
  std::string rows = "type,spot,strike,maturity,rate,volatility\n";
  for (int i = 0; i < (1 << 20) + 1; ++i) rows += "c,1,1,1,0,0\n";
  const std::string bad = write_file("usage_bad.csv", rows + "put,100,-1,1,0.05,0.2\n");
  err = stderr_on_a_terminal({"bs", "--device", "cpu", "-i", bad, "-o", out});
  EXPECT_TRUE(contains(err, "\ngpukit: invalid input: ")) << err;
}

// Issue 30: Monte Carlo on the CPU reported only above 2^33 path-steps (minutes of silence at a
// terminal), and its --check pass (5.5 times the pricing's time) never. Lines now come by elapsed
// time (after 2 seconds, then every 5% or 30 seconds); GPUKIT_TEST_PROGRESS=immediate drops the
// waits so that a short run shows them.
TEST(CliUsage, PricingAndCheckingReportTheirProgressAsTheyRun) {
  const std::string book = write_file(
      "usage_mc_progress.csv",
      "type,spot,strike,maturity,rate,volatility\ncall,100,100,1,0.05,0.2\nput,90,100,1,0,0.3\n");
  const auto out = (scratch() / "usage_mc_progress_out.csv").string();
  const std::vector<std::string> args = {"mc",      "--device", "cpu", "--paths", "20000",
                                         "--check", "-i",       book,  "-o",      out};
  ::setenv("GPUKIT_TEST_PROGRESS", "immediate", 1);
  std::string err = stderr_on_a_terminal(args);
  EXPECT_TRUE(contains(err, "gpukit: mc: pricing 100% (2 options)")) << err;
  EXPECT_TRUE(contains(err, "gpukit: mc: checking 100% (2 options)")) << err;
  EXPECT_LT(err.find("pricing 100%"), err.find("checking 100%")) << err;
  // bs's check too (a large book's takes a while).
  err = stderr_on_a_terminal({"bs", "--device", "cpu", "--check", "-i", book, "-o", out});
  EXPECT_TRUE(contains(err, "gpukit: bs: checking 100% (2 options)")) << err;
  std::vector<std::string> quiet = args;
  quiet.insert(quiet.begin() + 1, "--quiet");
  err = stderr_on_a_terminal(quiet);
  EXPECT_FALSE(contains(err, "pricing")) << err;
  EXPECT_FALSE(contains(err, "checking")) << err;
  ::unsetenv("GPUKIT_TEST_PROGRESS");
  // A run shorter than the first wait says nothing about its progress.
  err = stderr_on_a_terminal(args);
  EXPECT_FALSE(contains(err, "pricing")) << err;
  EXPECT_TRUE(contains(err, "gpukit: mc: check: ")) << err;
}

// A .npy file of dtype `descr` holding `data_bytes` zero bytes, written by hand (gpukit's writer
// has no int16).
std::string raw_npy(const std::string& name, const std::string& descr, std::size_t data_bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (2,), }";
  header.append(128 - 10 - header.size() - 1, ' ');  // numpy aligns the data to 64
  header += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  file.append(data_bytes, '\0');
  return write_file(name, file);
}

TEST(CliUsage, DtypeErrorsListOnlyWhatTheCommandTakes) {
  const std::string int16 = raw_npy("int16.npy", "<i2", 4);
  const std::string out = (scratch() / "dtype_never.npy").string();
  const std::string primitives =
      "takes int32 ('<i4'), int64 ('<i8'), uint32 ('<u4'), float32 ('<f4') or float64 ('<f8')";
  for (const std::string command : {"reduce", "scan", "compact"}) {
    const std::string args = command + " --device cpu -i " + int16 +
                             (command == "reduce" ? "" : " -o " + out) +
                             (command == "compact" ? " --keep positive" : "");
    const Result r = run(args);
    EXPECT_EQ(r.exit_code, 3) << args << "\n" << r.err;
    EXPECT_TRUE(
        contains(r.err, "int16.npy: unsupported dtype '<i2' (" + command + " " + primitives + ")"))
        << r.err;
    EXPECT_FALSE(contains(r.err, "<u8")) << r.err;  // uint64: the reader's, not the command's
  }
  Result r = run("poisson --device cpu -i " + int16 + " -o " + out);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "(poisson takes float32 ('<f4') or float64 ('<f8'))")) << r.err;
  // A dtype the reader knows but the command does not take is refused from the header alone:
  // this file's data is missing, which a full read would report instead.
  r = run("reduce --device cpu -i " + raw_npy("u64.npy", "<u8", 0));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(contains(r.err, "u64.npy: reduce " + primitives + ", not uint64")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
