// The scale-out calls of books and arrays (gpukit/scale_out/black_scholes.hpp,
// implied_volatility.hpp, monte_carlo.hpp, reduce.hpp) across MPI ranks (run by CTest under `mpirun
// -np 1`, `-np 2` and `-np 3`; alone, every scenario runs with one rank): on CPU ranks, rank r with
// r + 1 workers, the root's book or array priced or reduced over the job has the bits of the
// one-device call, on the root (Results::on_root: the other ranks get nothing) or on every rank
// (Results::on_every_rank); the other ranks' arguments are ignored; a failure on the root's data
// stops every rank with the same error; ranks that pass different element types are refused on
// every rank.
//
// No assertion returns early between collectives, so a failure on one rank cannot leave the
// others waiting (CTest's timeout is the last resort).

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
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

using scale_out::Results;

distributed::Communicator& world() { return distributed::Communicator::world(); }

std::string where() {
  return "rank " + std::to_string(world().rank()) + " of " + std::to_string(world().size());
}

// Rank r works with r + 1 CPU workers: ranks of different sizes in one plan.
scale_out::Job cpu_job() {
  distributed::Workers workers;
  for (int i = 0; i <= world().rank(); ++i) workers.contexts.push_back(Context::cpu(1));
  return scale_out::join_job(std::move(workers));
}

// An empty book, what the other ranks pass (theirs is ignored).
const finance::OptionBookView kNoBook{};

TEST(SpreadMpi, BlackScholesHasTheBitsOfOneDeviceOnTheRootOrEveryRank) {
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  const scale_out::Job job = cpu_job();
  EXPECT_EQ(job.spread, world().size() > 1);
  for (const std::int64_t rows : {0, 1, 4, 1001}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    const RandomBook book(rows, seed.value() + static_cast<std::uint64_t>(rows), false);
    const finance::EuropeanBookResult expected =
        finance::price_european_book(Context::cpu(1), book.view, finance::Precision::float64, true);
    const finance::OptionBookView& mine = job.is_root() ? book.view : kNoBook;
    const finance::EuropeanBookResult on_root = scale_out::price_black_scholes_book(
        job, mine, finance::Precision::float64, true, {}, Results::on_root);
    if (job.is_root()) {
      EXPECT_TRUE(same_bits(expected.price, on_root.price));
      EXPECT_TRUE(same_bits(expected.delta, on_root.delta));
      EXPECT_TRUE(same_bits(expected.rho, on_root.rho));
    } else {
      EXPECT_TRUE(on_root.price.empty());
    }
    const finance::EuropeanBookResult everywhere = scale_out::price_black_scholes_book(
        job, mine, finance::Precision::float32, true, {}, Results::on_every_rank);
    const finance::EuropeanBookResult expected_float =
        finance::price_european_book(Context::cpu(1), book.view, finance::Precision::float32, true);
    EXPECT_TRUE(same_bits(expected_float.price, everywhere.price));
    EXPECT_TRUE(same_bits(expected_float.gamma, everywhere.gamma));
    EXPECT_TRUE(same_bits(expected_float.theta, everywhere.theta));
  }
}

TEST(SpreadMpi, ImpliedVolatilityHasTheBitsOfOneDeviceOnTheRootOrEveryRank) {
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  const scale_out::Job job = cpu_job();
  const finance::ImpliedVolatilityBookView no_quotes{};
  for (const std::int64_t rows : {0, 1, 4, 1001}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    const RandomQuotes quotes(rows, seed.value() + static_cast<std::uint64_t>(rows));
    const finance::ImpliedVolatilityBookView& mine = job.is_root() ? quotes.view : no_quotes;
    finance::ImpliedVolatilityOptions options;
    options.model = finance::VolatilityModel::black76;
    const finance::ImpliedVolatilityBookResult expected = finance::implied_volatility_book(
        Context::cpu(1), quotes.view, finance::Precision::float64, options);
    const finance::ImpliedVolatilityBookResult on_root = scale_out::implied_volatility_book(
        job, mine, finance::Precision::float64, options, Results::on_root);
    if (job.is_root()) {
      EXPECT_TRUE(same_bits(expected.volatility, on_root.volatility));
      EXPECT_TRUE(same_bits(expected.status, on_root.status));
    } else {
      EXPECT_TRUE(on_root.volatility.empty());
      EXPECT_TRUE(on_root.status.empty());
    }
    options.model = finance::VolatilityModel::black_scholes;
    const finance::ImpliedVolatilityBookResult expected_float = finance::implied_volatility_book(
        Context::cpu(1), quotes.view, finance::Precision::float32, options);
    const finance::ImpliedVolatilityBookResult everywhere = scale_out::implied_volatility_book(
        job, mine, finance::Precision::float32, options, Results::on_every_rank);
    EXPECT_TRUE(same_bits(expected_float.volatility, everywhere.volatility));
    EXPECT_TRUE(same_bits(expected_float.status, everywhere.status));
  }
}

TEST(SpreadMpi, MonteCarloHasTheBitsOfOneDeviceOnEveryRank) {
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  const scale_out::Job job = cpu_job();
  const RandomBook book(9, seed.value(), true);
  finance::MonteCarloOptions options;
  options.paths = 4001;
  options.seed = seed.value();
  options.greeks = true;
  const finance::MonteCarloBookResult expected =
      finance::price_monte_carlo_book(Context::cpu(1), book.view, options);
  const finance::MonteCarloBookResult got = scale_out::price_monte_carlo_book(
      job, job.is_root() ? book.view : kNoBook, options, Results::on_every_rank);
  EXPECT_TRUE(same_bits(expected.price, got.price));
  EXPECT_TRUE(same_bits(expected.std_error, got.std_error));
  EXPECT_TRUE(same_bits(expected.ci_low, got.ci_low));
  EXPECT_TRUE(same_bits(expected.ci_high, got.ci_high));
  EXPECT_TRUE(same_bits(expected.paths, got.paths));
  EXPECT_TRUE(same_bits(expected.delta, got.delta));
  EXPECT_TRUE(same_bits(expected.vega, got.vega));
  const finance::MonteCarloBookResult on_root = scale_out::price_monte_carlo_book(
      job, job.is_root() ? book.view : kNoBook, options, Results::on_root);
  if (job.is_root()) {
    EXPECT_TRUE(same_bits(expected.price, on_root.price));
  } else {
    EXPECT_TRUE(on_root.price.empty());
  }
}

// The sobol sampler and early-exercise rows across ranks: the packed book carries the exercise
// column, a block is a replicate or an early-exercise row's whole pricing.
TEST(SpreadMpi, SobolAndEarlyExerciseHaveTheBitsOfOneDeviceOnEveryRank) {
  SCOPED_TRACE(where());
  const gpukit::testing::TestSeed seed;
  const scale_out::Job job = cpu_job();
  const RandomBook book(7, seed.value(), true);
  const SobolAndEarlyExercise cases(book, seed.value());
  for (const auto& [view, options] :
       {std::pair{book.view, cases.sobol}, std::pair{cases.early_view, cases.early}}) {
    const finance::MonteCarloBookResult expected =
        finance::price_monte_carlo_book(Context::cpu(1), view, options);
    const finance::MonteCarloBookResult got = scale_out::price_monte_carlo_book(
        job, job.is_root() ? view : kNoBook, options, Results::on_every_rank);
    EXPECT_TRUE(same_bits(expected.price, got.price));
    EXPECT_TRUE(same_bits(expected.std_error, got.std_error));
    EXPECT_TRUE(same_bits(expected.delta, got.delta));
    EXPECT_TRUE(same_bits(expected.vega, got.vega));
  }
}

template <class T>
void expect_sum_of_one_device(const scale_out::Job& job, std::size_t n) {
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    values[i] = static_cast<T>((i * 2654435761u) % 1999) / static_cast<T>(7);
  }
  const auto expected =
      primitives::reduce<T>(Context::cpu(1), std::span<const T>(values), primitives::ReduceOp::sum);
  const std::span<const T> mine = job.is_root() ? std::span<const T>(values) : std::span<const T>();
  const auto got =
      scale_out::reduce<T>(job, mine, primitives::ReduceOp::sum, {}, Results::on_every_rank);
  EXPECT_EQ(std::memcmp(&expected, &got, sizeof got), 0) << got << " vs " << expected;
}

TEST(SpreadMpi, ReductionsHaveTheBitsOfOneDeviceOnEveryRank) {
  SCOPED_TRACE(where());
  const scale_out::Job job = cpu_job();
  for (const std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{7 * 16384 + 3}}) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    expect_sum_of_one_device<std::int32_t>(job, n);
    expect_sum_of_one_device<std::int64_t>(job, n);
    expect_sum_of_one_device<std::uint32_t>(job, n);
    expect_sum_of_one_device<float>(job, n);
    expect_sum_of_one_device<double>(job, n);
  }
}

TEST(SpreadMpi, FailuresStopEveryRankWithTheSameError) {
  SCOPED_TRACE(where());
  const scale_out::Job job = cpu_job();
  // A barrier row in the root's book: Black-Scholes refuses it on the rank that prices it, and
  // every rank throws that error (invalid input keeps its message on every rank).
  const RandomBook barriers(4, 11, true);
  std::string message;
  try {
    scale_out::price_black_scholes_book(job, job.is_root() ? barriers.view : kNoBook,
                                        finance::Precision::float64, false, {});
    ADD_FAILURE() << "a barrier row was priced by Black-Scholes";
  } catch (const InvalidInput& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("barrier"), std::string::npos) << message;
  // Ranks that pass arrays of different element types (the root float, the others double).
  if (world().size() > 1) {
    const std::vector<float> floats(10, 1.0f);
    const std::vector<double> doubles(10, 1.0);
    EXPECT_THROW(job.is_root() ? static_cast<double>(scale_out::reduce<float>(
                                     job, floats, primitives::ReduceOp::sum))
                               : scale_out::reduce<double>(job, doubles, primitives::ReduceOp::sum),
                 InvalidInput);
  }
}

}  // namespace
}  // namespace gpukit::scale_out_testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const gpukit::distributed::Environment environment(argc, argv);
  return RUN_ALL_TESTS();
}
