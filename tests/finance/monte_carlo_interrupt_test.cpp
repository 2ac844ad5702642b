// Stopping a Monte Carlo pricing from its progress callback (MonteCarloOptions::progress's
// contract, how Python's Ctrl-C stops a long call): each scenario written once and run on the CPU
// and on CUDA (`Cpu/` and `Cuda/` instances; the device-data API's own case is in
// monte_carlo_gpu_test.cpp). A callback that throws after k calls stops the call with its
// exception, is not called again, and leaves nothing behind: the next call on the same backend
// gives the bits of a call never stopped.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "every_backend_test_support.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::barrier_rows;
using testing::expect_same_result;
using testing::McBook;
using testing::McRow;
using testing::random_european_rows;

// What the callback throws: not a gpukit::Error, so that nothing on the way can take it for one.
struct Stopped {
  int after_calls = 0;
};

// A progress callback that counts its calls and throws Stopped on call `stop_at` (1-based; never
// when 0).
struct StoppingProgress {
  explicit StoppingProgress(int stop = 0) : stop_at(stop) {}

  std::function<void(double)> callback() {
    return [this](double) {
      if (++calls == stop_at) throw Stopped{calls};
    };
  }

  int stop_at = 0;
  int calls = 0;
};

class MonteCarloInterruptTest : public gpukit::testing::EveryBackendTest {
 protected:
  // European and barrier rows, with Greeks and both variance reductions: five books simulated
  // one after the other, so the callback is called at least five times on every backend.
  static std::vector<McRow> rows() {
    std::vector<McRow> all = random_european_rows(5, 17);
    for (const McRow& r : barrier_rows(7)) all.push_back(r);
    return all;
  }
  static MonteCarloOptions options() {
    MonteCarloOptions o;
    o.paths = 3 * kMonteCarloTileSamples + 6;
    o.seed = 29;
    o.greeks = true;
    o.antithetic = true;
    o.control_variate = true;
    o.variance_reduction_factors = true;
    return o;
  }
};

TEST_P(MonteCarloInterruptTest, AThrowingProgressStopsTheCallAndLeavesNothingBehind) {
  const McBook book(rows());
  const MonteCarloOptions plain = options();
  const MonteCarloBookResult expected = price_monte_carlo_book(context(), book.view(), plain);

  // Uninterrupted: how many times the callback is called (the result does not depend on it).
  StoppingProgress counting;
  MonteCarloOptions watched = plain;
  watched.progress = counting.callback();
  expect_same_result(price_monte_carlo_book(context(), book.view(), watched), expected,
                     "watched, not stopped");
  ASSERT_GE(counting.calls, 5);

  for (int stop_at = 1; stop_at <= counting.calls; ++stop_at) {
    const std::string what =
        "stopped at call " + std::to_string(stop_at) + " of " + std::to_string(counting.calls);
    StoppingProgress stopping{stop_at};
    MonteCarloOptions stopped = plain;
    stopped.progress = stopping.callback();
    try {
      price_monte_carlo_book(context(), book.view(), stopped);
      ADD_FAILURE() << what << ": the call returned";
    } catch (const Stopped& e) {
      EXPECT_EQ(e.after_calls, stop_at) << what;  // the callback's own exception, unchanged
    }
    EXPECT_EQ(stopping.calls, stop_at) << what << ": called again after it threw";
    // Nothing left in flight or half made: the next call has the bits of one never stopped.
    expect_same_result(price_monte_carlo_book(context(), book.view(), plain), expected, what);
  }
}

TEST_P(MonteCarloInterruptTest, AThrowingProgressStopsAPricingOfBlocks) {
  const McBook book(rows());
  const MonteCarloOptions plain = options();
  const MonteCarloBlocks blocks = monte_carlo_blocks(book.view(), plain);
  const std::vector<MonteCarloBlockMoments> expected =
      price_monte_carlo_blocks(context(), book.view(), plain, 0, blocks.count());

  StoppingProgress counting;
  MonteCarloOptions watched = plain;
  watched.progress = counting.callback();
  price_monte_carlo_blocks(context(), book.view(), watched, 0, blocks.count());
  ASSERT_GE(counting.calls, 5);

  for (const int stop_at : {1, counting.calls / 2, counting.calls}) {
    StoppingProgress stopping{stop_at};
    MonteCarloOptions stopped = plain;
    stopped.progress = stopping.callback();
    EXPECT_THROW(price_monte_carlo_blocks(context(), book.view(), stopped, 0, blocks.count()),
                 Stopped);
    EXPECT_EQ(stopping.calls, stop_at);
    const std::vector<MonteCarloBlockMoments> again =
        price_monte_carlo_blocks(context(), book.view(), plain, 0, blocks.count());
    ASSERT_EQ(again.size(), expected.size());
    EXPECT_EQ(std::memcmp(again.data(), expected.data(),
                          expected.size() * sizeof(MonteCarloBlockMoments)),
              0)
        << "stopped at call " << stop_at;
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(MonteCarloInterruptTest);

// How soon a callback can stop a CPU pricing: the CPU backend calls it after every
// kMonteCarloCpuProgressPathSteps path-steps or so (a chunk of tiles), whatever the book: one
// long row too. (A GPU calls it after each launch.)
TEST(MonteCarloInterrupt, TheCpuBackendCallsProgressAfterEveryChunkOfPathSteps) {
  McRow row;
  const McBook book({row});
  MonteCarloOptions options;
  options.paths = std::int64_t{1} << 25;
  int calls = 0;
  options.progress = [&calls](double) { ++calls; };
  price_monte_carlo_book(Context::cpu(), book.view(), options);
  const double path_steps = double(options.paths);
  EXPECT_GE(calls, static_cast<int>(path_steps / double(mc::kMonteCarloCpuProgressPathSteps)));
}

}  // namespace
}  // namespace gpukit::finance
