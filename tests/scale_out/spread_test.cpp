// The scale-out calls of books and arrays (gpukit/scale_out/black_scholes.hpp,
// implied_volatility.hpp, monte_carlo.hpp, reduce.hpp) in one process: a job of two or three
// workers on one device (CPU workers, or cuda:0 listed several times) gives the bits of the
// one-device call on that backend, for every split of the rows and blocks, every column and the
// errors alike. Written once, run on the CPU (Cpu/) and on GPU 0 (Cuda/, which skips without a
// GPU). The same calls across MPI ranks: spread_mpi_test.cpp.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "every_backend_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/devices.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/scale_out/black_scholes.hpp"
#include "gpukit/scale_out/implied_volatility.hpp"
#include "gpukit/scale_out/job.hpp"
#include "gpukit/scale_out/monte_carlo.hpp"
#include "gpukit/scale_out/reduce.hpp"
#include "spread_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::scale_out_testing {
namespace {

class SpreadCalls : public gpukit::testing::EveryBackendTest {
 protected:
  // A job of `workers` workers on this backend's device, in this process (one thread each).
  scale_out::Job job_of(int workers) const {
    distributed::Workers w;
    for (int i = 0; i < workers; ++i) w.contexts.push_back(context(1));
    return scale_out::join_job(std::move(w));
  }
};

// Every column of `got` (its members `columns`, named) with the bits of `expected`'s.
template <class Result>
void expect_same_columns(
    const Result& expected, const Result& got,
    std::initializer_list<std::pair<const char*, std::vector<double> Result::*>> columns) {
  for (const auto& [name, column] : columns) {
    EXPECT_TRUE(same_bits(expected.*column, got.*column)) << name;
  }
}

void expect_same_columns(const finance::EuropeanBookResult& expected,
                         const finance::EuropeanBookResult& got) {
  using R = finance::EuropeanBookResult;
  expect_same_columns(expected, got,
                      {{"price", &R::price},
                       {"delta", &R::delta},
                       {"gamma", &R::gamma},
                       {"vega", &R::vega},
                       {"theta", &R::theta},
                       {"rho", &R::rho}});
}

void expect_same_columns(const finance::MonteCarloBookResult& expected,
                         const finance::MonteCarloBookResult& got) {
  using R = finance::MonteCarloBookResult;
  expect_same_columns(expected, got,
                      {{"price", &R::price},
                       {"std_error", &R::std_error},
                       {"ci_low", &R::ci_low},
                       {"ci_high", &R::ci_high},
                       {"paths", &R::paths},
                       {"delta", &R::delta},
                       {"gamma", &R::gamma},
                       {"vega", &R::vega},
                       {"vrf_antithetic", &R::vrf_antithetic},
                       {"vrf_control", &R::vrf_control}});
}

// Not a vacuous comparison: some price is a real price.
bool any_positive(const std::vector<double>& values) {
  for (const double v : values)
    if (v > 0) return true;
  return false;
}

TEST_P(SpreadCalls, BlackScholesOnSeveralWorkersHasTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  for (const std::int64_t rows : {0, 1, 2, 5, 33, 1025}) {
    const RandomBook book(rows, seed.value() + static_cast<std::uint64_t>(rows), false);
    for (const finance::Precision precision :
         {finance::Precision::float64, finance::Precision::float32}) {
      const finance::EuropeanBookResult expected =
          finance::price_european_book(context(1), book.view, precision, true);
      const finance::EuropeanBookResult expected_prices =
          finance::price_european_book(context(1), book.view, precision, false);
      if (rows > 1) {
        ASSERT_TRUE(any_positive(expected.price));
      }
      for (const int workers : {2, 3}) {
        SCOPED_TRACE(::testing::Message()
                     << rows << " rows on " << workers << " workers, "
                     << (precision == finance::Precision::float32 ? "float" : "double"));
        const scale_out::Job job = job_of(workers);
        ASSERT_TRUE(job.spread);
        expect_same_columns(
            expected, scale_out::price_black_scholes_book(job, book.view, precision, true, {}));
        // Without Greeks, only the price column, with the bits of the one-device call without
        // Greeks (on CUDA that call prices through a leaner kernel than the one with Greeks).
        const finance::EuropeanBookResult prices =
            scale_out::price_black_scholes_book(job, book.view, precision, false, {});
        EXPECT_TRUE(same_bits(expected_prices.price, prices.price));
        EXPECT_TRUE(prices.delta.empty());
      }
    }
  }
}

TEST_P(SpreadCalls, ImpliedVolatilityOnSeveralWorkersHasTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  using finance::VolatilityModel;
  for (const std::int64_t rows : {0, 1, 2, 5, 33, 1025}) {
    const RandomQuotes quotes(rows, seed.value() + static_cast<std::uint64_t>(rows));
    for (const VolatilityModel model :
         {VolatilityModel::black_scholes, VolatilityModel::black76, VolatilityModel::bachelier}) {
      finance::ImpliedVolatilityOptions options;
      options.model = model;
      for (const finance::Precision precision :
           {finance::Precision::float64, finance::Precision::float32}) {
        const finance::ImpliedVolatilityBookResult expected =
            finance::implied_volatility_book(context(1), quotes.view, precision, options);
        if (rows > 1) {  // not vacuous: some row has a volatility
          ASSERT_TRUE(any_positive(expected.volatility));
        }
        for (const int workers : {2, 3}) {
          SCOPED_TRACE(::testing::Message()
                       << rows << " rows on " << workers << " workers, model "
                       << static_cast<int>(model) << ", "
                       << (precision == finance::Precision::float32 ? "float" : "double"));
          const finance::ImpliedVolatilityBookResult got =
              scale_out::implied_volatility_book(job_of(workers), quotes.view, precision, options);
          EXPECT_TRUE(same_bits(expected.volatility, got.volatility));
          EXPECT_TRUE(same_bits(expected.status, got.status));
        }
      }
    }
  }
}

TEST_P(SpreadCalls, MonteCarloOnSeveralWorkersHasTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  // Every barrier kind, one block a row; then rows of three blocks each (3 x 2^21 + 5 paths:
  // the split cuts inside rows, and the root merges blocks).
  struct Case {
    std::int64_t rows, paths;
    bool barriers, greeks;
  };
  for (const Case c :
       {Case{7, 3001, true, true}, Case{2, 3 * (std::int64_t{1} << 21) + 5, false, false}}) {
    const RandomBook book(c.rows, seed.value() + static_cast<std::uint64_t>(c.paths), c.barriers);
    finance::MonteCarloOptions options;
    options.paths = c.paths;
    options.seed = seed.value();
    options.greeks = c.greeks;
    options.control_variate = true;
    options.variance_reduction_factors = true;
    const finance::MonteCarloBookResult expected =
        finance::price_monte_carlo_book(context(1), book.view, options);
    ASSERT_TRUE(any_positive(expected.price));
    for (const int workers : {2, 3}) {
      SCOPED_TRACE(::testing::Message()
                   << c.rows << " rows of " << c.paths << " paths on " << workers << " workers");
      expect_same_columns(expected,
                          scale_out::price_monte_carlo_book(job_of(workers), book.view, options));
    }
  }
}

// The sobol sampler (a block a replicate) and early-exercise rows (a row's first block carries
// its whole Longstaff-Schwartz pricing) spread over the workers with the bits of one.
TEST_P(SpreadCalls, SobolAndEarlyExerciseBooksOnSeveralWorkersHaveTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  const RandomBook book(7, seed.value(), true);
  SobolAndEarlyExercise cases(book, seed.value());
  cases.sobol.greeks = true;
  for (const auto& [view, options] :
       {std::pair{book.view, cases.sobol}, std::pair{cases.early_view, cases.early}}) {
    const finance::MonteCarloBookResult expected =
        finance::price_monte_carlo_book(context(1), view, options);
    ASSERT_TRUE(any_positive(expected.price));
    for (const int workers : {2, 3}) {
      SCOPED_TRACE(::testing::Message()
                   << (options.sampler == finance::MonteCarloSampler::sobol ? "sobol" : "early")
                   << " on " << workers << " workers");
      expect_same_columns(expected,
                          scale_out::price_monte_carlo_book(job_of(workers), view, options));
    }
  }
}

// The workers of a job keep their threads (lanes) and, on a GPU, their stream and buffers from
// one call to the next: calls of growing and shrinking books, calls made at once from several
// threads, and a call that fails on one worker all leave the next call with the bits of one.
TEST_P(SpreadCalls, RepeatedConcurrentAndFailedCallsKeepTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  const scale_out::Job job = job_of(2);
  finance::MonteCarloOptions options;
  options.paths = 3001;
  options.seed = seed.value();
  options.control_variate = true;
  const RandomBook small(7, seed.value() + 1, true), large(40, seed.value() + 2, true);
  const finance::MonteCarloBookResult small_one =
      finance::price_monte_carlo_book(context(1), small.view, options);
  const finance::MonteCarloBookResult large_one =
      finance::price_monte_carlo_book(context(1), large.view, options);
  ASSERT_TRUE(any_positive(small_one.price));
  const RandomBook european(300, seed.value() + 3, false);
  const finance::EuropeanBookResult european_one =
      finance::price_european_book(context(1), european.view, finance::Precision::float32, false);
  ASSERT_TRUE(any_positive(european_one.price));
  // Growing, shrinking and growing again: the workers' buffers are reused and grown.
  for (const RandomBook* book : {&small, &large, &small, &large}) {
    SCOPED_TRACE(::testing::Message() << book->view.count << " rows");
    expect_same_columns(book == &small ? small_one : large_one,
                        scale_out::price_monte_carlo_book(job, book->view, options));
  }
  // Three callers at once on the same workers (they take turns on each worker's lane).
  std::vector<finance::MonteCarloBookResult> mc(3);
  std::vector<finance::EuropeanBookResult> bs(3);
  std::vector<std::thread> callers;
  for (std::size_t c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      mc[c] = scale_out::price_monte_carlo_book(job, (c % 2 ? large : small).view, options);
      bs[c] = scale_out::price_black_scholes_book(job, european.view, finance::Precision::float32,
                                                  false, {});
    });
  }
  for (std::thread& t : callers) t.join();
  for (std::size_t c = 0; c < 3; ++c) {
    SCOPED_TRACE(::testing::Message() << "caller " << c);
    expect_same_columns(c % 2 ? large_one : small_one, mc[c]);
    EXPECT_TRUE(same_bits(european_one.price, bs[c].price));
  }
  // A bad row in the second worker's share alone fails the call on that worker; the next call
  // on the same workers has the bits of one.
  RandomBook bad(40, seed.value() + 2, true);
  bad.barrier[39] = -1;  // row 39 is a barrier row (40 % 5 != 0): its barrier must be > 0
  ASSERT_NE(bad.barrier_type[39], finance::BarrierType::none);
  EXPECT_THROW(scale_out::price_monte_carlo_book(job, bad.view, options), InvalidInput);
  expect_same_columns(large_one, scale_out::price_monte_carlo_book(job, large.view, options));
  RandomBook barrier_in_bs(300, seed.value() + 3, false);
  barrier_in_bs.barrier_type[299] = finance::BarrierType::up_out;
  barrier_in_bs.view.barrier_type = barrier_in_bs.barrier_type.data();
  barrier_in_bs.view.barrier = barrier_in_bs.barrier.data();
  EXPECT_THROW(scale_out::price_black_scholes_book(job, barrier_in_bs.view,
                                                   finance::Precision::float32, false, {}),
               InvalidInput);
  EXPECT_TRUE(
      same_bits(european_one.price, scale_out::price_black_scholes_book(
                                        job, european.view, finance::Precision::float32, false, {})
                                        .price));
}

template <class T>
std::vector<T> random_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<T> values(n);
  for (T& v : values) {
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(std::uniform_real_distribution<double>(-1, 1)(gen));
    } else {
      v = static_cast<T>(gen() % 2001) - static_cast<T>(std::is_signed_v<T> ? 1000 : 0);
    }
  }
  return values;
}

// Every operation of T at sizes of one tile, less than one, and several with a short last one.
template <class T>
void expect_reductions_of_one(const Context& one, std::uint64_t seed) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{16383}, std::size_t{3 * 16384 + 7}}) {
    const std::vector<T> values = random_values<T>(n, seed + n);
    std::vector<primitives::ReduceOp> ops = {primitives::ReduceOp::sum, primitives::ReduceOp::min,
                                             primitives::ReduceOp::max};
    if constexpr (std::is_floating_point_v<T>) ops.push_back(primitives::ReduceOp::product);
    for (const primitives::ReduceOp op : ops) {
      for (const bool accurate : {false, true}) {
        if (accurate && (!std::is_floating_point_v<T> || op != primitives::ReduceOp::sum)) continue;
        primitives::ReduceOptions options;
        options.accurate_sum = accurate;
        const auto expected = primitives::reduce<T>(one, std::span<const T>(values), op, options);
        for (const int workers : {2, 3}) {
          SCOPED_TRACE(::testing::Message()
                       << n << " elements, " << primitives::reduce_op_name(op)
                       << (accurate ? " accurate" : "") << ", " << workers << " workers");
          distributed::Workers w;
          for (int i = 0; i < workers; ++i) w.contexts.push_back(one);
          const auto got = scale_out::reduce<T>(scale_out::join_job(std::move(w)),
                                                std::span<const T>(values), op, options);
          EXPECT_EQ(std::memcmp(&expected, &got, sizeof got), 0) << got << " vs " << expected;
        }
      }
    }
  }
}

TEST_P(SpreadCalls, ReductionsOnSeveralWorkersHaveTheBitsOfOne) {
  const gpukit::testing::TestSeed seed;
  expect_reductions_of_one<std::int32_t>(context(1), seed.value());
  expect_reductions_of_one<std::int64_t>(context(1), seed.value());
  expect_reductions_of_one<std::uint32_t>(context(1), seed.value());
  expect_reductions_of_one<float>(context(1), seed.value());
  expect_reductions_of_one<double>(context(1), seed.value());
}

TEST_P(SpreadCalls, ErrorsAreTheOneDeviceCallsErrors) {
  const scale_out::Job job = job_of(2);
  // The empty sum is 0; min of nothing is refused, as reduce refuses it.
  EXPECT_EQ(scale_out::reduce<float>(job, {}, primitives::ReduceOp::sum), 0.0f);
  EXPECT_THROW(scale_out::reduce<float>(job, {}, primitives::ReduceOp::min), InvalidInput);
  const std::vector<std::int64_t> huge(20000, std::numeric_limits<std::int64_t>::max() / 4);
  EXPECT_THROW(scale_out::reduce<std::int64_t>(job, huge, primitives::ReduceOp::sum), InvalidInput);
  // A barrier row is Monte Carlo's, on every worker as on one device.
  const RandomBook barriers(6, 7, true);
  EXPECT_THROW(
      finance::price_european_book(context(1), barriers.view, finance::Precision::float64, false),
      InvalidInput);
  EXPECT_THROW(scale_out::price_black_scholes_book(job, barriers.view, finance::Precision::float64,
                                                   false, {}),
               InvalidInput);
  finance::MonteCarloOptions odd;
  odd.paths = 1001;
  odd.antithetic = true;
  EXPECT_THROW(scale_out::price_monte_carlo_book(job, barriers.view, odd), InvalidInput);
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(SpreadCalls);

// The root phase and the root's values in a job of one process: the phase runs, its error passes
// unchanged, and the value is the root's own.
TEST(JobOfOneProcess, OnRootRunsThePhaseAndPassesItsErrorUnchanged) {
  distributed::Workers cpu;
  cpu.contexts.push_back(Context::cpu(1));
  const scale_out::Job job = scale_out::join_job(std::move(cpu));
  EXPECT_FALSE(job.spread);
  EXPECT_EQ(scale_out::on_root(job, [] { return 42; }), std::optional<int>(42));
  EXPECT_THROW(scale_out::on_root(job, [] { throw IoError("disk"); }), IoError);
  EXPECT_EQ(scale_out::from_root(job, 7.5), 7.5);
  std::vector<int> values = {1, 2, 3};
  scale_out::share_from_root(job, values);
  EXPECT_EQ(values, (std::vector<int>{1, 2, 3}));
  EXPECT_THROW(scale_out::join_job(distributed::Workers{}), InvalidInput);
}

}  // namespace
}  // namespace gpukit::scale_out_testing
