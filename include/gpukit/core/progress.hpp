#pragma once
// When a long operation's progress is worth a line to a person watching: by the time it has run,
// not by the amount of work, so that a pricing on a laptop's CPU speaks up as soon as one on a GPU
// (a threshold sized for a GPU kept the CPU silent for minutes).

#include <functional>

namespace gpukit {

/// The timing of ProgressPacer's reports (its fields are explained there).
struct ProgressRule {
  double first_after_seconds = 2;
  double every_fraction = 0.05;
  double at_least_apart_seconds = 1;
  double at_most_apart_seconds = 30;
};

/// Decides when a progress report of one long operation is shown. The rule: nothing during the
/// first Rule::first_after_seconds (a short call stays silent); after that a report when the
/// fraction done has grown by Rule::every_fraction since the last one shown and
/// Rule::at_least_apart_seconds have passed, or when Rule::at_most_apart_seconds have passed (a
/// slow run still shows it is alive); and the end (a fraction of 1) once, when any report was
/// shown, so that a run that spoke up also says it finished. The first report is due at the first
/// call after first_after_seconds whatever the fraction.
///
/// One pacer per operation, called from one thread. Tested in tests/core/progress_test.cpp with
/// a clock of its own.
class ProgressPacer {
 public:
  using Rule = ProgressRule;
  /// Seconds on a monotonic clock.
  using Clock = std::function<double()>;

  /// Paces by `rule` on `clock` (empty: std::chrono::steady_clock); the operation starts now.
  explicit ProgressPacer(Rule rule = {}, Clock clock = {});

  /// True when the report of `fraction_done` (0 to 1) is to be shown now; the pacer then counts it
  /// as shown.
  bool due(double fraction_done);

 private:
  Rule rule_;
  Clock clock_;
  double start_ = 0;
  bool shown_any_ = false;
  bool shown_end_ = false;
  double last_time_ = 0;
  double last_fraction_ = 0;
};

}  // namespace gpukit
