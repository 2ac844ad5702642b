// `mpirun -np N gpukit poisson` on the CPU (N = 1, 2, 3; --oversubscribe: the CI machine has 2
// cores): outputs within poisson_agreement_bound of the single-process command (-np 1: the same
// bytes), 2D and 3D, float and double, both gauges, rows of axis 0 that the ranks do not divide,
// walls (--boundary), --operator fd2 and --helmholtz on the CPU;
// rank 0 alone reports; the warning and --strict as without MPI; a rank that finds bad input or
// fails ends every rank with the same exit code and one message (rank 0's), in time (each run is
// bounded by `timeout`), leaving no output and no temporary file, and an existing output untouched.
//
// On a GPU machine the comparisons run on GPUs too: GPUKIT_MPI_CLI_DEVICE=cuda (each rank takes
// its local GPU: NCCL wants one rank per GPU) and GPUKIT_MPI_CLI_RANKS=1,2 (no more ranks than
// GPUs), as scripts/gpu-scale-check.sh does.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_support.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"

namespace {

using namespace gpukit::cli_testing;  // run, Result, scratch, slurp

std::string path(const std::string& name) { return (scratch() / name).string(); }

// Open MPI refuses to start as root (CI containers) unless told.
const bool kRootAllowed = [] {
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
  ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  return true;
}();

/// `mpirun -np ranks gpukit <args>`, killed after 60 s (a hang fails the test instead of the
/// suite), with extra environment assignments `env` ("A=1 B=2").
Result run_mpi(int ranks, const std::string& args, const std::string& env = "") {
  const auto out = scratch() / "mpi_stdout.txt", err = scratch() / "mpi_stderr.txt";
  const std::string command = env + (env.empty() ? "" : " ") + "timeout 60 " + GPUKIT_MPIEXEC +
                              " --oversubscribe -np " + std::to_string(ranks) + " " +
                              GPUKIT_BINARY + " " + args + " </dev/null >" + out.string() + " 2>" +
                              err.string();
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// The device of the comparisons and the rank counts (see the top of the file).
std::string comparison_device() {
  const char* device = std::getenv("GPUKIT_MPI_CLI_DEVICE");
  return device != nullptr && device[0] != '\0' ? device : "cpu";
}
std::vector<int> comparison_ranks() {
  const char* text = std::getenv("GPUKIT_MPI_CLI_RANKS");
  std::vector<int> ranks;
  std::istringstream list(text != nullptr && text[0] != '\0' ? text : "1,2,3");
  for (std::string item; std::getline(list, item, ',');) ranks.push_back(std::stoi(item));
  return ranks;
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Every name in the scratch folder that is a temporary of the atomic writer.
std::vector<std::string> temporaries() {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::directory_iterator(scratch())) {
    const std::string name = entry.path().filename().string();
    if (name.find(".gpukit-tmp-") != std::string::npos) found.push_back(name);
  }
  return found;
}

template <class T>
std::vector<T> random_zero_mean(std::size_t n, unsigned seed) {
  std::vector<double> v(n);
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) {
    v[i] = std::sin(0.37 * double(i) * seed + 1.3) + 0.5 * std::cos(1.91 * double(i));
    mean += v[i] / double(n);
  }
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(v[i] - mean);
  return out;
}

// The problem beyond the grid and the gauge: the walls, the operator and lambda, and the device
// (walls are solved across CPU ranks only).
struct Problem {
  std::string boundary;  // --boundary; empty: periodic
  gpukit::pde::PoissonOptions options;
  std::string device;  // empty: comparison_device()
};

template <class T>
void expect_within_the_bound(const std::vector<std::int64_t>& shape, const std::string& lengths,
                             const std::string& gauge, unsigned seed,
                             const Problem& problem = Problem()) {
  const auto rank = static_cast<int>(shape.size());
  gpukit::pde::PoissonGrid grid{
      shape, {}, gpukit::pde::axis_boundaries("--boundary", problem.boundary, rank)};
  std::size_t n = 1;
  for (const std::int64_t s : shape) n *= static_cast<std::size_t>(s);
  const std::vector<T> f = random_zero_mean<T>(n, seed);
  const std::string name = "mpi_f" + std::to_string(seed) + ".npy";
  gpukit::io::write_npy<T>(path(name), shape, f);
  const std::string device = problem.device.empty() ? comparison_device() : problem.device;
  std::string common = "poisson --device " + device + " --threads 1 -i " + path(name) +
                       " --length " + lengths + " --gauge " + gauge;
  if (!problem.boundary.empty()) common += " --boundary " + problem.boundary;
  std::ostringstream operators;
  operators.precision(17);
  operators << " --operator " << gpukit::pde::operator_name(problem.options.op) << " --helmholtz "
            << problem.options.helmholtz << " -o ";
  common += operators.str();
  const Result serial = run(common + path("serial_u.npy"));
  ASSERT_EQ(serial.exit_code, 0) << serial.err;
  const gpukit::io::NpyArray u_serial = gpukit::io::read_npy(path("serial_u.npy"));
  const std::span<const T> s = u_serial.values<T>();
  double max_f = 0, max_u = 0;
  for (const T x : f) max_f = std::max(max_f, double(std::fabs(x)));
  for (const T x : s) max_u = std::max(max_u, double(std::fabs(x)));
  {
    std::string text = lengths;
    for (std::size_t at = 0; (at = text.find(',')) != std::string::npos;) text[at] = ' ';
    std::istringstream in(text);
    for (double L; in >> L;) grid.lengths.push_back(L);
  }
  const double bound = gpukit::pde::poisson_agreement_bound<T>(grid, problem.options, max_f, max_u);
  for (const int ranks : comparison_ranks()) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks, " + grid.describe() + ", gauge " + gauge);
    const std::string out = path("mpi_u" + std::to_string(ranks) + ".npy");
    std::filesystem::remove(out);
    const Result r = run_mpi(ranks, common + out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Rank 0 alone reports, naming the ranks and their rows; one rank is the single-process
    // command and reports as it does.
    EXPECT_EQ(occurrences(r.err, "gpukit: poisson: "), 1u) << r.err;
    if (ranks > 1) {
      EXPECT_NE(r.err.find(std::to_string(ranks) + " MPI ranks"), std::string::npos) << r.err;
    } else {
      EXPECT_EQ(r.err, serial.err);
    }
    const gpukit::io::NpyArray u = gpukit::io::read_npy(out);
    ASSERT_EQ(u.dtype, u_serial.dtype);
    ASSERT_EQ(u.shape, u_serial.shape);
    if (ranks == 1) {
      // One rank is the single-process solve: the same bytes.
      EXPECT_EQ(slurp(out), slurp(path("serial_u.npy")));
    }
    const std::span<const T> got = u.values<T>();
    std::size_t bad = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(std::fabs(double(got[i]) - double(s[i])) <= bound) && ++bad <= 3)
        ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << s[i] << " (bound " << bound
                      << ")";
    }
    EXPECT_EQ(bad, 0u);
    if (gauge == "corner" && gpukit::pde::poisson_is_singular(grid, problem.options)) {
      EXPECT_EQ(got[0], T(0));
    }
  }
  EXPECT_TRUE(temporaries().empty());
}

TEST(PoissonMpiCli, TwoDimensionalFloatMatchesTheSingleProcessSolve) {
  expect_within_the_bound<float>({11, 9}, "2,3", "mean", 1);
}

TEST(PoissonMpiCli, ThreeDimensionalDoubleCornerGaugeMatchesTheSingleProcessSolve) {
  expect_within_the_bound<double>({13, 10, 7}, "1,2,0.5", "corner", 2);
}

// Walls, fd2 and Helmholtz across CPU ranks (issue 34): within the bound of the single-process
// command, as the periodic solve.
TEST(PoissonMpiCli, WallsFd2AndHelmholtzMatchTheSingleProcessSolveOnTheCpu) {
  Problem neumann;
  neumann.boundary = "neumann";
  neumann.device = "cpu";
  expect_within_the_bound<double>({11, 9}, "2,3", "corner", 5, neumann);
  Problem mixed;
  mixed.boundary = "dirichlet,periodic,neumann";
  mixed.device = "cpu";
  mixed.options.op = gpukit::pde::Operator::fd2;
  mixed.options.helmholtz = 2.5;
  expect_within_the_bound<float>({13, 10, 7}, "1,2,0.5", "mean", 6, mixed);
}

TEST(PoissonMpiCli, NonZeroMeanWarnsOnceOrIsRefusedWithStrict) {
  std::vector<double> f(7 * 6, 1.0);
  f[40] = 2.0;
  const std::int64_t shape[] = {7, 6};
  gpukit::io::write_npy<double>(path("mpi_mean.npy"), shape, f);
  Result r = run_mpi(
      3, "poisson --device cpu -i " + path("mpi_mean.npy") + " -o " + path("mpi_mean_u.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, "warning: the mean of f, 1.02381, is not zero to rounding"), 1u)
      << r.err;
  std::filesystem::remove(path("mpi_strict_u.npy"));
  r = run_mpi(3, "poisson --device cpu --strict -i " + path("mpi_mean.npy") + " -o " +
                     path("mpi_strict_u.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("not zero to rounding (|mean| > 64 eps"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("mpi_strict_u.npy")));
  // With walls (a singular neumann problem): the single-process command's warning, which names
  // every axis' boundary.
  const std::string walls = "poisson --device cpu --boundary neumann -i " + path("mpi_mean.npy");
  const Result single = run(walls + " -o " + path("mpi_walls_single_u.npy"));
  ASSERT_EQ(single.exit_code, 0) << single.err;
  const std::size_t at = single.err.find("gpukit: poisson: warning: ");
  ASSERT_NE(at, std::string::npos) << single.err;
  const std::string warning = single.err.substr(at, single.err.find('\n', at) - at + 1);
  EXPECT_NE(warning.find("has no solution with boundaries neumann,neumann"), std::string::npos)
      << warning;
  r = run_mpi(3, walls + " -o " + path("mpi_walls_u.npy"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(occurrences(r.err, warning), 1u) << warning << " in " << r.err;
}

// A NaN in the last rows: only the last rank reads it. Every rank exits 3 with the message the
// single-process command prints; the output that was there stays, and no temporary is left.
TEST(PoissonMpiCli, BadInputOnOneRankFailsEveryRankCleanly) {
  const std::int64_t shape[] = {13, 10, 7};
  std::vector<float> f = random_zero_mean<float>(13 * 10 * 7, 3);
  f[(12 * 10 + 3) * 7 + 1] = std::numeric_limits<float>::quiet_NaN();
  gpukit::io::write_npy<float>(path("mpi_nan.npy"), shape, f);
  const Result serial =
      run("poisson --device cpu -i " + path("mpi_nan.npy") + " -o " + path("mpi_nan_serial.npy"));
  ASSERT_EQ(serial.exit_code, 3);
  ASSERT_NE(serial.err.find("f[12, 3, 1] is nan"), std::string::npos) << serial.err;
  const std::string out = path("mpi_nan_u.npy");
  std::ofstream(out) << "old output";
  const Result r = run_mpi(3, "poisson --device cpu -i " + path("mpi_nan.npy") + " -o " + out);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  // The single-process command's line, once: rank 0 reports what every rank met (the others exit
  // with the same code, silently).
  const std::size_t line = serial.err.find("gpukit: invalid input: ");
  ASSERT_NE(line, std::string::npos) << serial.err;
  const std::string message = serial.err.substr(line, serial.err.find('\n', line) - line + 1);
  EXPECT_EQ(occurrences(r.err, message), 1u) << message << " in " << r.err;
  EXPECT_EQ(slurp(out), "old output");
  EXPECT_TRUE(temporaries().empty());
}

// A rank that fails on its own (as out of memory, through the test hook) ends every rank with
// exit code 5 and a message naming it; a truncated input ends every rank with exit code 3.
TEST(PoissonMpiCli, OneFailingRankOrATruncatedFileEndsEveryRankWithoutOutput) {
  const std::int64_t shape[] = {8, 6};
  const std::vector<double> f = random_zero_mean<double>(48, 4);
  gpukit::io::write_npy<double>(path("mpi_ok.npy"), shape, f);
  const std::string out = path("mpi_fail_u.npy");
  std::filesystem::remove(out);
  Result r = run_mpi(3, "poisson --device cpu -i " + path("mpi_ok.npy") + " -o " + out,
                     "GPUKIT_TEST_FAULT=rank-out-of-memory:1");
  EXPECT_EQ(r.exit_code, 5) << r.err;
  EXPECT_EQ(occurrences(r.err, "gpukit: out of memory:"), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "planted on rank 1 by GPUKIT_TEST_FAULT"), 1u) << r.err;
  EXPECT_EQ(occurrences(r.err, "(MPI rank 1 of 3)"), 1u) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  const std::string bytes = slurp(path("mpi_ok.npy"));
  std::ofstream(path("mpi_short.npy"), std::ios::binary) << bytes.substr(0, bytes.size() - 8);
  r = run_mpi(2, "poisson --device cpu -i " + path("mpi_short.npy") + " -o " + out);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("truncated data"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_TRUE(temporaries().empty());
}

TEST(PoissonMpiCli, CheckAndStandardStreamsAreRefusedUnderMpirun) {
  const std::int64_t shape[] = {4, 4};
  gpukit::io::write_npy<double>(path("mpi_small.npy"), shape, std::vector<double>(16, 0.0));
  Result r = run_mpi(2, "poisson --device cpu --check -i " + path("mpi_small.npy") + " -o " +
                            path("mpi_small_u.npy"));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(occurrences(r.err, "--check is not available under mpirun"), 1u) << r.err;
  r = run_mpi(2, "poisson --device cpu -i " + path("mpi_small.npy") + " -o -");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = run_mpi(2, "poisson --device cpu -i - -o " + path("mpi_small_u.npy"));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("must be a file, not standard input"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(path("mpi_small_u.npy")));
}

}  // namespace
