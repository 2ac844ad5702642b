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
  constexpr std::array<std::string_view, 4> kCommands = {"mc", "bs", "reduce", "poisson"};
  return std::find(kCommands.begin(), kCommands.end(), command) != kCommands.end();
}

Job join_job(const DeviceOptions& options, const std::string& command) {
  Job job;
  job.comm = &distributed::Communicator::world();
  distributed::Communicator& comm = *job.comm;
  job.workers = distributed::agree(comm, [&] {
    return distributed::select_workers(options.device, options.threads, comm.local_rank(),
                                       comm.local_size());
  });
  // Every rank's devices, for the job's line and for what its results carry: bit 0 a CPU
  // worker, bit 1 a GPU worker; the worker count above them.
  const std::int64_t mine = (job.workers.any_cpu() ? 1 : 0) | (job.workers.any_cuda() ? 2 : 0) |
                            (static_cast<std::int64_t>(job.workers.contexts.size()) << 2);
  std::int64_t workers = 0;
  for (const std::int64_t r : comm.all_gather(mine)) {
    job.job_has_cpu = job.job_has_cpu || (r & 1) != 0;
    job.job_has_cuda = job.job_has_cuda || (r & 2) != 0;
    workers += r >> 2;
  }
  job.spread = workers > 1;
  const std::string here = job.workers.describe();
  if (!comm.distributed()) {
    job.description = here;
    if (!quiet()) {
      if (!job.workers.notice.empty()) {
        fmt::print(stderr, "{}\n", job.workers.notice);
      } else if (job.spread) {
        fmt::print(stderr, "gpukit: {}: {} devices: {}\n", command, workers, here);
      }
    }
    return job;
  }
  // Rank 0 names every rank's devices in one line; the other ranks print nothing.
  std::vector<std::byte> text(here.size());
  std::copy_n(reinterpret_cast<const std::byte*>(here.data()), here.size(), text.begin());
  const std::vector<std::int64_t> sizes = comm.all_gather(static_cast<std::int64_t>(text.size()));
  const std::vector<std::byte> all = comm.gather(text);
  if (comm.is_root()) {
    std::string line;
    std::size_t at = 0;
    for (int r = 0; r < comm.size(); ++r) {
      const auto n = static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)]);
      line += fmt::format("{}rank {} {}", r == 0 ? "" : ", ", r,
                          std::string_view(reinterpret_cast<const char*>(all.data()) + at, n));
      at += n;
    }
    job.description = fmt::format("{} ranks on {} host{}: {}", comm.size(), comm.hosts(),
                                  comm.hosts() == 1 ? "" : "s", line);
    if (!quiet()) fmt::print(stderr, "gpukit: {}: {}\n", command, job.description);
  }
  return job;
}

void warn_if_mixed(const Job& job, const std::string& command) {
  if (!job.is_root() || !(job.job_has_cpu && job.job_has_cuda)) return;
  fmt::print(stderr,
             "gpukit: {}: warning: the job mixes CPU and GPU workers, whose math libraries differ "
             "in the last bits: the results are deterministic for this assignment of devices, "
             "within --check's bound of either backend, but not bitwise those of one backend\n",
             command);
}

void inject_rank_fault(const Job& job) {
  const char* fault = std::getenv("GPUKIT_TEST_FAULT");
  constexpr std::string_view kFault = "rank-out-of-memory:";
  if (fault == nullptr || !std::string_view(fault).starts_with(kFault)) return;
  if (std::atoi(fault + kFault.size()) != job.comm->rank()) return;
  throw OutOfMemory(
      fmt::format("cudaMalloc (a fault planted on rank {} by GPUKIT_TEST_FAULT)", job.comm->rank()),
      std::size_t{1} << 30);
}

void inject_lone_failure(const Job& job) {
  const char* fault = std::getenv("GPUKIT_TEST_FAULT");
  constexpr std::string_view kFault = "rank-fails-alone:";
  if (fault == nullptr || !std::string_view(fault).starts_with(kFault)) return;
  if (std::atoi(fault + kFault.size()) != job.comm->rank()) return;
  throw IoError(
      fmt::format("a failure planted on rank {} alone by GPUKIT_TEST_FAULT", job.comm->rank()));
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
