// gpukit under mpirun (GPUKIT_MPIEXEC, OpenMPI's, set by CMake where MPI is found): mc, bs, iv
// and reduce on 1, 2 and 3 ranks (oversubscribed: the CI machine has 2 cores) write byte-identical
// outputs, equal to a run without mpirun; a failure found on one rank (bad input read by rank 0,
// a fault planted on rank 2) stops every rank with the same message, once, and the same exit
// code, without a hang (every run is under a timeout) and without an output file; the commands
// that do not run across ranks, and ranks given different commands, are refused.
// Each scenario is written once and run with `--device cpu` (Cpu/) and with `--device cuda`
// (Cuda/: the ranks share the machine's GPUs, GPU 0 on a one-GPU machine, against cuda:0 alone).

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/io/npy.hpp"
#include "test_seed.hpp"

namespace gpukit::distributed_testing {
namespace {

struct Result {
  int exit_code;
  std::string out, err;
};

const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto d =
        std::filesystem::path(::testing::TempDir()) / ("gpukit_mpi_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string path(const std::string& name) { return (scratch() / name).string(); }

Result run_command(const std::string& command) {
  const auto out = scratch() / "stdout.txt", err = scratch() / "stderr.txt";
  const std::string line = command + " </dev/null >" + out.string() + " 2>" + err.string();
  const int status = std::system(line.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// OpenMPI as root needs its consent; oversubscription lets 3 ranks share 2 cores; no binding, so
// that the ranks' OpenMP threads are not all pinned to one core. A hang ends at the timeout
// (exit 124), which no test accepts.
std::string launcher(int ranks) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 180 " +
         std::string(GPUKIT_MPIEXEC) + " --oversubscribe --bind-to none -np " +
         std::to_string(ranks) + " ";
}

Result run_ranks(int ranks, const std::string& args, const std::string& environment = "") {
  return run_command(environment + " " + launcher(ranks) + GPUKIT_BINARY + " " + args);
}

Result run_alone(const std::string& args) {
  return run_command("timeout -k 10 180 " + std::string(GPUKIT_BINARY) + " " + args);
}

std::string write_file(const std::string& name, const std::string& text) {
  std::ofstream(path(name), std::ios::binary) << text;
  return path(name);
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

// A Monte Carlo book: European rows and the four barrier kinds, a few monitoring dates, ids.
std::string mc_book(int rows, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::ostringstream csv;
  csv.precision(17);
  csv << "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n";
  const char* kinds[] = {"none", "down-out", "up-in", "down-in", "up-out"};
  for (int i = 0; i < rows; ++i) {
    const char* kind = kinds[i % 5];
    const double spot = 80 + 40 * u(gen);
    const double strike = 80 + 40 * u(gen), maturity = 0.2 + u(gen);
    const double volatility = 0.15 + 0.3 * u(gen);
    csv << 'T' << i << ',' << (i % 2 ? "put" : "call") << ',' << spot << ',' << strike << ','
        << maturity << ",0.03," << volatility << ',';
    if (kind[0] != 'n') csv << (kind[0] == 'd' ? spot * 0.8 : spot * 1.25);
    csv << ',' << kind << ',';
    if (kind[0] != 'n') csv << 1 + i % 4;
    csv << '\n';
  }
  return csv.str();
}

class MpiCli : public gpukit::testing::EveryBackendTest {
 protected:
  std::string device() const {
    return GetParam() == Backend::cuda ? " --device cuda" : " --device cpu --threads 1";
  }
  // The reference run: one process, one device.
  std::string alone_device() const {
    return GetParam() == Backend::cuda ? " --device cuda:0" : " --device cpu --threads 1";
  }
  // `args` (with {out} where the output file goes) alone and on 1, 2 and 3 ranks: every output
  // byte-identical.
  void expect_identical_outputs(const std::string& args, const std::string& label) {
    const auto with_out = [&](const std::string& out) {
      std::string a = args;
      a.replace(a.find("{out}"), 5, out);
      return a;
    };
    const std::string reference_out = path(label + "_alone.out");
    const Result alone = run_alone(with_out(reference_out) + alone_device());
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    const std::string reference = slurp(reference_out);
    ASSERT_FALSE(reference.empty());
    for (const int ranks : {1, 2, 3}) {
      const std::string out = path(label + "_np" + std::to_string(ranks) + ".out");
      const Result r = run_ranks(ranks, with_out(out) + device());
      ASSERT_EQ(r.exit_code, 0) << label << " on " << ranks << " ranks: " << r.err;
      EXPECT_TRUE(slurp(out) == reference) << label << ": " << ranks << " ranks differ from one";
      if (ranks > 1) {
        // Rank 0 alone names the job's devices, once.
        EXPECT_EQ(occurrences(r.err, std::to_string(ranks) + " ranks on 1 host"), 1u) << r.err;
      }
    }
  }
};

TEST_P(MpiCli, MonteCarloIsByteIdenticalOnOneTwoAndThreeRanks) {
  const std::string book = write_file("mc_book.csv", mc_book(8, 41));
  // 2^21 + 777 paths: two blocks a row (kMonteCarloBlockTiles), the second short.
  expect_identical_outputs("mc -i " + book + " -o {out} --paths 2097929 --seed 5", "mc_plain");
  const std::string small = write_file("mc_small.csv", mc_book(7, 43));
  expect_identical_outputs("mc -i " + small +
                               " -o {out} --paths 4000 --greeks --antithetic --control-variate "
                               "--monitoring continuous --precision float",
                           "mc_greeks");
  // Asian and Heston rows: their columns travel with the book (they were lost on the way to the
  // ranks, which priced such rows as European options).
  const std::string products = write_file(
      "mc_products.csv",
      "id,type,spot,strike,maturity,rate,volatility,average,steps,model,v0,kappa,theta,sigma_v,"
      "rho\n"
      "A,call,100,100,1,0.05,0.25,arithmetic,12,black-scholes,,,,,\n"
      "H,put,100,100,1,0.05,0.25,none,24,heston,0.04,1.5,0.04,0.5,-0.7\n"
      "G,call,100,95,1,0.05,0.25,geometric,12,heston,0.04,1.5,0.04,0.5,-0.7\n");
  expect_identical_outputs("mc -i " + products + " -o {out} --paths 20000 --seed 9", "mc_products");
}

TEST_P(MpiCli, BlackScholesIsByteIdenticalOnOneTwoAndThreeRanks) {
  const std::string book = path("bs_book.csv");
  const Result made = run_alone("bs --device cpu --generate 10007 --seed 3 -o " + book);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  expect_identical_outputs("bs -i " + book + " -o {out} --greeks", "bs_greeks");
  expect_identical_outputs("bs -i " + book + " -o {out} --precision float --cdf hull", "bs_float");
}

TEST_P(MpiCli, ImpliedVolatilityIsByteIdenticalOnOneTwoAndThreeRanks) {
  const std::string book = path("iv_book.csv");
  const Result made = run_alone("bs --device cpu --generate 10007 --seed 4 -o " + book);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  expect_identical_outputs("iv -i " + book + " -o {out}", "iv_double");
  expect_identical_outputs("iv -i " + book + " -o {out} --precision float", "iv_float");
}

TEST_P(MpiCli, ReductionsAreByteIdenticalOnOneTwoAndThreeRanks) {
  std::mt19937_64 gen(gpukit::testing::kDefaultTestSeed);
  std::normal_distribution<double> normal(0.0, 1e3);
  // 5 tiles and a ragged end: blocks for every rank, a short last one.
  const std::int64_t n = 5 * 16384 + 77;
  std::vector<double> d(static_cast<std::size_t>(n));
  std::vector<float> f(d.size());
  std::vector<std::int32_t> i32(d.size());
  for (std::size_t k = 0; k < d.size(); ++k) {
    d[k] = normal(gen);
    f[k] = static_cast<float>(d[k]);
    i32[k] = static_cast<std::int32_t>(d[k] * 1000);
  }
  io::write_npy<double>(path("r_f8.npy"), std::span<const double>(d));
  io::write_npy<float>(path("r_f4.npy"), std::span<const float>(f));
  io::write_npy<std::int32_t>(path("r_i4.npy"), std::span<const std::int32_t>(i32));
  for (const std::string& args :
       {std::string("r_f8.npy --op sum"), std::string("r_f4.npy --op sum"),
        std::string("r_f4.npy --op sum --accurate"), std::string("r_f8.npy --op max"),
        std::string("r_i4.npy --op sum"), std::string("r_i4.npy --op xor")}) {
    const std::string command =
        "reduce -i " + path(args.substr(0, args.find(' '))) + args.substr(args.find(' '));
    const Result alone = run_alone(command + alone_device());
    ASSERT_EQ(alone.exit_code, 0) << alone.err;
    ASSERT_FALSE(alone.out.empty());
    for (const int ranks : {1, 2, 3}) {
      const Result r = run_ranks(ranks, command + device());
      ASSERT_EQ(r.exit_code, 0) << args << " on " << ranks << " ranks: " << r.err;
      EXPECT_EQ(r.out, alone.out) << args << " on " << ranks << " ranks";
    }
  }
}

TEST_P(MpiCli, BadInputReadByRankZeroStopsEveryRankOnceWithoutOutput) {
  const std::string book =
      write_file("bad_book.csv",
                 "type,spot,strike,maturity,rate,volatility\ncall,100,100,1,0.05,0.2\n"
                 "put,100,-5,1,0.05,0.2\n");
  for (const std::string& command :
       std::vector<std::string>{"bs -i " + book, "mc --paths 1000 -i " + book}) {
    const std::string out = path("bad.out");
    std::filesystem::remove(out);
    const Result r = run_ranks(3, command + " -o " + out + device());
    EXPECT_EQ(r.exit_code, 3) << command << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "bad_book.csv:3:3: strike"), 1u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(out)) << command;
  }
  const std::string quotes =
      write_file("bad_quotes.csv",
                 "type,spot,strike,maturity,rate,price\ncall,100,100,1,0.05,10\n"
                 "put,100,100,1,0.05,-5\n");
  const std::string out = path("bad.out");
  const Result iv = run_ranks(3, "iv -i " + quotes + " -o " + out + device());
  EXPECT_EQ(iv.exit_code, 3) << iv.err;
  EXPECT_EQ(occurrences(iv.err, "bad_quotes.csv:3:6: price: must be >= 0"), 1u) << iv.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // A usage error is the same on every rank: said once.
  const Result usage =
      run_ranks(3, "bs --paths 1000 -i " + book + " -o " + path("bad.out") + device());
  EXPECT_EQ(usage.exit_code, 2) << usage.err;
  EXPECT_EQ(occurrences(usage.err, "--paths"), 1u) << usage.err;
  const Result missing = run_ranks(2, "reduce -i " + path("no_such.npy") + device());
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_EQ(occurrences(missing.err, "no_such.npy"), 1u) << missing.err;
}

// A small float64 array, for the tests that need one file to read.
std::string small_array() {
  const std::vector<double> values = {1.5, -2.25, 3.0, 1e-3, 7.0};
  io::write_npy<double>(path("small.npy"), std::span<const double>(values));
  return path("small.npy");
}

TEST_P(MpiCli, AFailureOnAnotherRankStopsEveryRankWithItsMessage) {
  const std::string book = write_file("fault_book.csv", mc_book(6, 47));
  std::filesystem::remove(path("fault.out"));
  for (const std::string& command :
       {"mc -i " + book + " -o " + path("fault.out") + " --paths 3000",
        "bs -i " + book + " -o " + path("fault.out"), "reduce -i " + small_array()}) {
    const Result r = run_ranks(3, command + device(), "GPUKIT_TEST_FAULT=rank-out-of-memory:2");
    EXPECT_EQ(r.exit_code, 5) << command << ": " << r.err;
    EXPECT_EQ(occurrences(r.err, "gpukit: out of memory:"), 1u) << r.err;
    EXPECT_EQ(occurrences(r.err, "(MPI rank 2 of 3)"), 1u) << r.err;
    EXPECT_FALSE(std::filesystem::exists(path("fault.out"))) << command;
  }
}

TEST_P(MpiCli, ARankThatFailsAloneEndsTheJobInsteadOfHanging) {
  // The other ranks wait in a collective the failed rank never joins: after main's grace period
  // (20 s) it reports and aborts the job; the run's timeout (180 s) would catch a hang.
  const std::string book = write_file("alone_book.csv", mc_book(3, 53));
  const auto start = std::chrono::steady_clock::now();
  const Result r =
      run_ranks(3, "mc -i " + book + " -o " + path("alone.out") + " --paths 3000" + device(),
                "GPUKIT_TEST_FAULT=rank-fails-alone:1");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_EQ(occurrences(r.err, "gpukit: rank 1 of 3: I/O error: a failure planted on rank 1"), 1u)
      << r.err;
  EXPECT_LT(seconds, 120) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("alone.out")));
}

TEST_P(MpiCli, CommandsThatRunInOneProcessAndMismatchedRanksAreRefused) {
  const std::string array = small_array();
  const Result scan = run_ranks(2, "scan -i " + array + " -o " + path("scan.npy") + device());
  EXPECT_EQ(scan.exit_code, 2) << scan.err;
  EXPECT_EQ(occurrences(scan.err, "gpukit scan runs in one process"), 1u) << scan.err;
  const Result demo = run_ranks(2, "mc --demo 4 --paths 1000" + device());
  EXPECT_EQ(demo.exit_code, 2) << demo.err;
  EXPECT_EQ(occurrences(demo.err, "mc --demo runs in one process"), 1u) << demo.err;
  // Two commands in one job (OpenMPI's MPMD syntax).
  const Result mixed =
      run_command(launcher(1) + GPUKIT_BINARY + " reduce -i " + array + device() + " : -np 1 " +
                  GPUKIT_BINARY + " reduce --op max -i " + array + device());
  EXPECT_EQ(mixed.exit_code, 2) << mixed.err;
  EXPECT_EQ(occurrences(mixed.err, "every rank must run the same command"), 1u) << mixed.err;
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MpiCli);

}  // namespace
}  // namespace gpukit::distributed_testing
