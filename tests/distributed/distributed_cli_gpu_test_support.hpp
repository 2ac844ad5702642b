#pragma once
// Shared by the tests of the gpukit tool's device lists on GPUs (distributed_cli_gpu_test.cpp, one
// GPU: lists that repeat cuda:0; distributed_cli_multidevice_test.cpp, two GPUs or more:
// cuda:all): each command's output on a list against its output on cuda:0 alone, byte for byte for
// mc, bs, iv and reduce (fixed blocks combined in canonical order; rows), within
// pde::poisson_agreement_bound for poisson (slabs: the transforms grouped differently).

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "distributed_cli_test_support.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/pde/poisson.hpp"
#include "test_seed.hpp"

namespace gpukit::distributed_testing {

class DistributedCliGpu : public ::testing::Test {
 protected:
  void SetUp() override { GPUKIT_REQUIRE_GPU(); }
  // `args` with {out} replaced, on `device`; the output file's bytes.
  std::string output_on(const std::string& args, const std::string& device,
                        const std::string& label) {
    std::string a = args;
    const std::string out = path(label + ".out");
    std::filesystem::remove(out);
    if (const std::size_t at = a.find("{out}"); at != std::string::npos) a.replace(at, 5, out);
    const Result r = run(a + " --device " + device);
    EXPECT_EQ(r.exit_code, 0) << args << " on " << device << ": " << r.err;
    return a.find(out) != std::string::npos ? slurp(out) : r.out;
  }

  // Every command of the scenario on each device list, byte for byte its output on cuda:0.
  void expect_lists_match_one_gpu(const std::vector<std::string>& lists) {
    std::mt19937_64 gen(gpukit::testing::kDefaultTestSeed);
    std::ostringstream mc_book;
    mc_book << "id,type,spot,strike,maturity,rate,volatility,barrier,barrier_type,steps\n";
    for (int i = 0; i < 9; ++i) {
      mc_book << 'T' << i << (i % 2 ? ",put," : ",call,") << "100," << 90 + i * 3 << ",1,0.03,0.25,"
              << (i % 3 == 0   ? ",none,"
                  : i % 3 == 1 ? "80,down-out,4"
                               : "125,up-in,12")
              << '\n';
    }
    const std::string book = write_file("mc.csv", mc_book.str());
    const std::string bs_book = path("bs.csv");
    ASSERT_EQ(run("bs --device cpu --generate 100003 --seed 9 -o " + bs_book).exit_code, 0);
    std::vector<float> f(3 * 16384 * 64 + 1001);
    std::vector<double> d(f.size());
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::size_t k = 0; k < f.size(); ++k) {
      d[k] = normal(gen);
      f[k] = static_cast<float>(d[k]);
    }
    io::write_npy<float>(path("f4.npy"), std::span<const float>(f));
    io::write_npy<double>(path("f8.npy"), std::span<const double>(d));
    const std::vector<std::string> commands = {
        // 2^23 + 5 paths: 5 blocks a row, the last short; float and double; every statistic
        // (antithetic pairs need an even count: 2^23 + 6).
        "mc -i " + book + " -o {out} --paths 8388613",
        "mc -i " + book + " -o {out} --paths 8388614 --precision float --antithetic",
        "mc -i " + book +
            " -o {out} --paths 300000 --greeks --control-variate --monitoring "
            "continuous",
        "bs -i " + bs_book + " -o {out} --greeks",
        "bs -i " + bs_book + " -o {out} --precision float",
        "iv -i " + bs_book + " -o {out}",
        "iv -i " + bs_book + " -o {out} --precision float",
        "reduce -i " + path("f4.npy"),
        "reduce -i " + path("f4.npy") + " --accurate",
        "reduce -i " + path("f8.npy") + " --op min"};
    for (std::size_t c = 0; c < commands.size(); ++c) {
      const std::string one = output_on(commands[c], "cuda:0", "one" + std::to_string(c));
      ASSERT_FALSE(one.empty()) << commands[c];
      for (const std::string& list : lists) {
        EXPECT_TRUE(output_on(commands[c], list, "list" + std::to_string(c)) == one)
            << commands[c] << " on " << list << " differs from cuda:0";
      }
    }
  }
  // gpukit poisson on each device list against cuda:0: a 3D float grid and a 2D double grid
  // (axis 0 not a multiple of the parts), both gauges, every element within
  // pde::poisson_agreement_bound; the same bytes when run again on the same list; --check passes
  // on the list; the report names `engine`.
  void expect_poisson_lists_within_the_bound(const std::vector<std::string>& lists,
                                             const std::string& engine) {
    expect_poisson_within_the_bound<float>(lists, engine, {37, 20, 12}, "1,2,0.5", "mean");
    expect_poisson_within_the_bound<double>(lists, engine, {45, 31}, "2,3", "corner");
  }

 private:
  template <class T>
  void expect_poisson_within_the_bound(const std::vector<std::string>& lists,
                                       const std::string& engine,
                                       const std::vector<std::int64_t>& shape,
                                       const std::string& lengths, const std::string& gauge) {
    pde::PoissonGrid grid;
    grid.shape = shape;
    std::istringstream length_list(lengths);
    for (std::string item; std::getline(length_list, item, ',');) {
      grid.lengths.push_back(std::stod(item));
    }
    std::size_t n = 1;
    for (const std::int64_t s : shape) n *= static_cast<std::size_t>(s);
    std::mt19937_64 gen(gpukit::testing::kDefaultTestSeed + n);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<double> values(n);
    double mean = 0;
    for (double& v : values) mean += (v = normal(gen));
    mean /= static_cast<double>(n);
    std::vector<T> f(n);
    for (std::size_t i = 0; i < n; ++i) f[i] = static_cast<T>(values[i] - mean);
    const std::string input = path("poisson_f.npy");
    io::write_npy<T>(input, shape, f);
    const std::string common =
        "poisson -i " + input + " --length " + lengths + " --gauge " + gauge + " -o ";
    const std::string one_path = path("poisson_one.npy");
    const Result one = run(common + one_path + " --device cuda:0");
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const io::NpyArray u_one = io::read_npy(one_path);
    const std::span<const T> s = u_one.values<T>();
    double max_f = 0, max_u = 0;
    for (const T x : f) max_f = std::max(max_f, double(std::fabs(x)));
    for (const T x : s) max_u = std::max(max_u, double(std::fabs(x)));
    const double bound = pde::poisson_agreement_bound<T>(grid, max_f, max_u);
    for (const std::string& list : lists) {
      SCOPED_TRACE(grid.describe() + " on " + list + ", gauge " + gauge);
      const std::string out = path("poisson_list.npy"), again = path("poisson_again.npy");
      const Result r = run(common + out + " --device " + list);
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_NE(r.err.find("(" + engine + ")"), std::string::npos) << r.err;
      const io::NpyArray u = io::read_npy(out);
      ASSERT_EQ(u.dtype, u_one.dtype);
      ASSERT_EQ(u.shape, u_one.shape);
      const std::span<const T> got = u.values<T>();
      std::size_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) {
        if (!(std::fabs(double(got[i]) - double(s[i])) <= bound) && ++bad <= 3) {
          ADD_FAILURE() << "element " << i << ": " << got[i] << " vs " << s[i] << " (bound "
                        << bound << ")";
        }
      }
      EXPECT_EQ(bad, 0u);
      if (gauge == "corner") {
        EXPECT_EQ(got[0], T(0));
      }
      const Result second = run(common + again + " --device " + list + " --check");
      ASSERT_EQ(second.exit_code, 0) << second.err;
      EXPECT_TRUE(slurp(again) == slurp(out)) << "a second run on " << list << " differs";
    }
  }
};

}  // namespace gpukit::distributed_testing
