// Small calls of every CPU backend run on the calling thread alone (the thread rule,
// core/cpu_threads.hpp), asked for 2 threads: a parallel region costs more than such work, and on
// a busy machine milliseconds (issue 30: an 8x8 Poisson solve took 96 ms at load 5-6).
//
// How it is observed: this executable defines GOMP_parallel, the libgomp entry point of every
// `#pragma omp parallel` that GCC compiles (gpukit's, linked in statically, and FFTW's threads in
// libfftw3_omp, which the executable interposes), and forwards it to libgomp's with the region's
// body wrapped to record the team size it runs with. OpenBLAS runs its own threads (not OpenMP):
// for GEMM the test reads the thread count the call left set. A large call is observed too, so the
// test can tell a team of 2 from none.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <numeric>
#include <vector>

#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

extern "C" int openblas_get_num_threads(void);

namespace {

std::atomic<int> largest_team{0};
std::atomic<int> regions{0};

struct WrappedRegion {
  void (*body)(void*);
  void* data;
};

void record_team_then_run(void* wrapped) {
  const auto* region = static_cast<const WrappedRegion*>(wrapped);
  const int team = omp_get_num_threads();
  int seen = largest_team.load();
  while (team > seen && !largest_team.compare_exchange_weak(seen, team)) {
  }
  region->body(region->data);
}

}  // namespace

extern "C" void GOMP_parallel(void (*body)(void*), void* data, unsigned num_threads,
                              unsigned flags) {
  using Entry = void (*)(void (*)(void*), void*, unsigned, unsigned);
  static const auto libgomp = reinterpret_cast<Entry>(dlsym(RTLD_NEXT, "GOMP_parallel"));
  ++regions;
  WrappedRegion region{body, data};
  libgomp(record_team_then_run, &region, num_threads, flags);
}

namespace gpukit {
namespace {

const Context kTwoThreads = Context::cpu(2);

/// The largest OpenMP team `call` ran a region with; 0 when it opened none.
template <class Call>
int largest_team_of(const Call& call) {
  largest_team = 0;
  call();
  return largest_team.load();
}

TEST(SmallCalls, TheObserverSeesATeamOfTwoForLargeWork) {
  // 2^22 doubles: 2 ms of summing on one core, well past the rule's threshold.
  const std::vector<double> data(std::size_t{1} << 22, 1.0);
  double sum = 0;
  EXPECT_EQ(largest_team_of([&] {
              sum = primitives::reduce<double>(kTwoThreads, data, primitives::ReduceOp::sum);
            }),
            2);
  EXPECT_EQ(sum, double(data.size()));
  EXPECT_GT(regions.load(), 0);
}

TEST(SmallCalls, BlackScholesOfOneOptionAndItsCheck) {
  const double spot = 100, strike = 95, maturity = 0.5;
  finance::BlackScholesInputs<double> in;
  in.count = 1;
  in.spot = &spot, in.strike = &strike, in.maturity = &maturity;
  in.rate.scalar = 0.02, in.volatility.scalar = 0.3;
  double call = -1;
  finance::BlackScholesOutputs<double> out;
  out.price = &call;
  EXPECT_LE(largest_team_of([&] { finance::price_black_scholes(kTwoThreads, in, out); }), 1);
  EXPECT_GT(call, 0);
  finance::BlackScholesCheck check;
  EXPECT_LE(largest_team_of([&] {
              check = finance::check_black_scholes_prices<double>(in, {&call, 1},
                                                                  finance::NormalCdf::erfc, 2);
            }),
            1);
  EXPECT_TRUE(check.passed);
}

TEST(SmallCalls, MonteCarloOfOneOptionWithFewPathsAndItsCheck) {
  const std::uint8_t is_put = 0;
  const double spot = 100, strike = 100, maturity = 1;
  finance::MonteCarloBookView book;
  book.count = 1;
  book.is_put = &is_put, book.spot = &spot, book.strike = &strike, book.maturity = &maturity;
  book.rate.scalar = 0.05, book.volatility.scalar = 0.2;
  finance::MonteCarloOptions options;
  options.paths = 1000;  // 44 us of pricing
  finance::MonteCarloBookResult result;
  EXPECT_LE(largest_team_of(
                [&] { result = finance::price_monte_carlo_book(kTwoThreads, book, options); }),
            1);
  ASSERT_EQ(result.price.size(), 1u);
  EXPECT_GT(result.price[0], 0);
  // The check's long-double reference costs 12 times the pricing: 100 paths are 53 us of it.
  options.paths = 100;
  result = finance::price_monte_carlo_book(kTwoThreads, book, options);
  finance::MonteCarloAgreement agreement;
  EXPECT_LE(largest_team_of(
                [&] { agreement = finance::check_monte_carlo_book(book, options, result, 2); }),
            1);
  EXPECT_EQ(agreement.rows, 1);
  EXPECT_EQ(agreement.rows_over_bound, 0);
}

TEST(SmallCalls, PoissonOnAnEightByEightGrid) {
  const pde::PoissonGrid grid{{8, 8}, {}};
  std::vector<double> f(64), u(64, -1);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = (i % 2 == 0 ? 1.0 : -1.0) * double(i % 8 + 1);
  EXPECT_LE(largest_team_of([&] { pde::PoissonPlan<double>(kTwoThreads, grid).solve(f, u); }), 1);
  EXPECT_NE(u[1], -1);
}

TEST(SmallCalls, ReduceScanAndCompactOfTwoTiles) {
  // 20000 elements: two tiles of reduce (16384) and five of scan (4096), microseconds of work.
  std::vector<double> x(20000);
  std::iota(x.begin(), x.end(), -10000.0);
  std::vector<double> y(x.size(), -1);
  double max = 0;
  EXPECT_LE(largest_team_of([&] {
              max = primitives::reduce<double>(kTwoThreads, x, primitives::ReduceOp::max);
            }),
            1);
  EXPECT_EQ(max, 9999.0);
  EXPECT_LE(largest_team_of([&] {
              primitives::scan<double>(kTwoThreads, x, y, primitives::ScanOp::max,
                                       primitives::ScanKind::inclusive);
            }),
            1);
  EXPECT_EQ(y.back(), 9999.0);
  std::int64_t kept = 0;
  EXPECT_LE(largest_team_of([&] {
              kept = primitives::compact<double>(kTwoThreads, x, y,
                                                 primitives::KeepPredicate::positive);
            }),
            1);
  EXPECT_EQ(kept, 9999);
}

TEST(SmallCalls, RandomNumbers) {
  std::vector<double> uniforms(1000, -1);
  EXPECT_LE(largest_team_of([&] { rng::generate_uniform<double>(kTwoThreads, uniforms, 7); }), 1);
  EXPECT_GT(uniforms[999], 0);
  std::vector<std::uint32_t> words(2 * 1000);
  EXPECT_LE(largest_team_of([&] { rng::generate_mt19937_streams(kTwoThreads, words, 1000, 7); }),
            1);
  EXPECT_NE(words[1999], 0u);
}

TEST(SmallCalls, SaxpyAndGemm) {
  const std::vector<float> x(1000, 2.0f), y(1000, 1.0f);
  std::vector<float> out(1000, -1.0f);
  EXPECT_LE(largest_team_of([&] { blas::axpy<float>(kTwoThreads, 3.0f, x, y, out); }), 1);
  EXPECT_EQ(out[999], 7.0f);

  blas::GemmProblem p;
  p.m = p.n = p.k = 8;
  const std::vector<float> a(64, 1.0f), b(64, 2.0f);
  std::vector<float> c(64, -1.0f);
  std::vector<long double> reference;
  EXPECT_LE(largest_team_of([&] {
              blas::gemm<float>(kTwoThreads, p, 1.0f, a, b, 0.0f, c);
              reference = blas::gemm_reference<float>(p, 1.0f, a, b, 0.0f, {}, 2);
            }),
            1);
  EXPECT_EQ(c[63], 16.0f);
  EXPECT_EQ(reference[63], 16.0L);
  // OpenBLAS's own threads: the call set them for its size.
  EXPECT_EQ(openblas_get_num_threads(), 1);
}

}  // namespace
}  // namespace gpukit
