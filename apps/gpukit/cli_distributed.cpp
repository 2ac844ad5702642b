#include "cli_distributed.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string_view>

#include <fmt/format.h>

#include "gpukit/core/progress.hpp"

namespace gpukit::cli {

bool runs_across_ranks(std::string_view command) {
  constexpr std::array<std::string_view, 5> kCommands = {"mc", "bs", "iv", "reduce", "poisson"};
  return std::find(kCommands.begin(), kCommands.end(), command) != kCommands.end();
}

Job join_job(const DeviceOptions& options, const std::string& command, bool announce) {
  Job job = scale_out::join_job(options.device, options.threads);
  if (quiet() || !job.is_root()) return job;
  if (!job.comm->distributed()) {
    if (!job.workers.notice.empty()) {
      fmt::print(stderr, "{}\n", job.workers.notice);
    } else if (job.spread && announce) {
      fmt::print(stderr, "gpukit: {}: {} devices: {}\n", command, job.job_workers, job.description);
    }
    return job;
  }
  if (announce) {
    fmt::print(stderr, "gpukit: {}: {}\n", command, job.description);
  } else if (!job.workers.notice.empty()) {
    fmt::print(stderr, "{}\n", job.workers.notice);
  }
  return job;
}

void warn_if_mixed(const Job& job, const std::string& command) {
  if (!job.is_root() || !job.mixes_backends()) return;
  fmt::print(stderr,
             "gpukit: {}: warning: the job mixes CPU and GPU workers, whose math libraries differ "
             "in the last bits: the results are deterministic for this assignment of devices, "
             "within --check's bound of either backend, but not bitwise those of one backend\n",
             command);
}

std::function<void(double)> progress_lines(const Job& job,
                                           std::function<std::string(int percent)> line) {
  if (!job.is_root() || quiet()) return {};
  if (!job.comm->distributed() && ::isatty(2) == 0) return {};
  ProgressPacer::Rule rule;
  const char* hook = std::getenv("GPUKIT_TEST_PROGRESS");
  if (hook != nullptr && std::string_view(hook) == "immediate") {
    rule.first_after_seconds = 0, rule.at_least_apart_seconds = 0;
  }
  auto pacer = std::make_shared<ProgressPacer>(rule);
  return [pacer, line = std::move(line)](double fraction) {
    if (!pacer->due(fraction)) return;
    fmt::print(stderr, "{}\n", line(static_cast<int>(std::min(fraction, 1.0) * 100)));
  };
}

}  // namespace gpukit::cli
