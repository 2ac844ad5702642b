// ProgressPacer on a clock the test moves: silent at first, then by the fraction done or by time,
// and the end once.

#include <gtest/gtest.h>

#include <vector>

#include "gpukit/core/progress.hpp"

namespace gpukit {
namespace {

struct FakeClock {
  double now = 100;  // any origin: the pacer measures from its construction
  ProgressPacer::Clock clock() {
    return [this] { return now; };
  }
};

TEST(ProgressPacer, SilentAtFirstThenEveryFivePercentAndTheEndOnce) {
  FakeClock t;
  ProgressPacer pacer({}, t.clock());
  t.now += 1.9;
  EXPECT_FALSE(pacer.due(0.30));  // a short call says nothing
  t.now += 0.2;
  EXPECT_TRUE(pacer.due(0.31));  // 2.1 s in: the first line, whatever the fraction
  t.now += 5;
  EXPECT_FALSE(pacer.due(0.35));  // 4% more
  EXPECT_TRUE(pacer.due(0.37));   // 6% more, seconds apart
  t.now += 0.5;
  EXPECT_FALSE(pacer.due(0.60));  // 24% more, but half a second after the last line
  t.now += 0.5;
  EXPECT_TRUE(pacer.due(0.60));
  EXPECT_TRUE(pacer.due(1.0));   // the end, at once
  EXPECT_FALSE(pacer.due(1.0));  // once
}

TEST(ProgressPacer, ASlowRunShowsItIsAliveEveryHalfMinute) {
  FakeClock t;
  ProgressPacer pacer({}, t.clock());
  t.now += 3;
  EXPECT_TRUE(pacer.due(0.001));
  t.now += 29;
  EXPECT_FALSE(pacer.due(0.002));
  t.now += 1;
  EXPECT_TRUE(pacer.due(0.003));
}

TEST(ProgressPacer, AShortRunEndsSilentlyAndALongOneSaysItEnded) {
  FakeClock t;
  ProgressPacer short_run({}, t.clock());
  t.now += 0.5;
  EXPECT_FALSE(short_run.due(0.5));
  EXPECT_FALSE(short_run.due(1.0));
  ProgressPacer long_run({}, t.clock());
  t.now += 2.5;  // one report, of the end, after the first two seconds
  EXPECT_TRUE(long_run.due(1.0));
  EXPECT_FALSE(long_run.due(1.0));
}

TEST(ProgressPacer, ARuleOfNoWaitingShowsEveryStepOfItsFraction) {
  FakeClock t;
  ProgressPacer pacer({0, 0.25, 0, 30}, t.clock());
  std::vector<double> shown;
  for (double f : {0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.8, 1.0, 1.0}) {
    if (pacer.due(f)) shown.push_back(f);
  }
  EXPECT_EQ(shown, (std::vector<double>{0.0, 0.3, 0.6, 1.0}));
}

TEST(ProgressPacer, TheSteadyClockIsTheDefault) {
  ProgressPacer pacer;
  EXPECT_FALSE(pacer.due(0.5));  // not two seconds yet
  ProgressPacer immediate({0, 0.05, 0, 30});
  EXPECT_TRUE(immediate.due(0.5));
}

}  // namespace
}  // namespace gpukit
