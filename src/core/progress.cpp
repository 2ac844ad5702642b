#include "gpukit/core/progress.hpp"

#include <chrono>
#include <utility>

namespace gpukit {

namespace {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ProgressPacer::ProgressPacer(Rule rule, Clock clock)
    : rule_(rule), clock_(clock ? std::move(clock) : Clock(steady_seconds)), start_(clock_()) {}

bool ProgressPacer::due(double fraction_done) {
  const double now = clock_();
  bool show = false;
  if (fraction_done >= 1) {
    // The end: said once, and only by a run that said something before.
    show = shown_any_ && !shown_end_;
    if (!show && !shown_any_) show = now - start_ >= rule_.first_after_seconds;
    shown_end_ = shown_end_ || show;
  } else if (!shown_any_) {
    show = now - start_ >= rule_.first_after_seconds;
  } else {
    const double apart = now - last_time_;
    show = (fraction_done - last_fraction_ >= rule_.every_fraction &&
            apart >= rule_.at_least_apart_seconds) ||
           apart >= rule_.at_most_apart_seconds;
  }
  if (show) {
    shown_any_ = true;
    last_time_ = now;
    last_fraction_ = fraction_done;
  }
  return show;
}

}  // namespace gpukit
