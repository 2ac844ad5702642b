// join_job: the ranks and devices of a call (job.hpp).

#include "gpukit/scale_out/job.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::scale_out {

Job join_job(std::string_view device, int threads, distributed::Communicator& comm) {
  return join_job(distributed::agree(comm,
                                     [&] {
                                       return distributed::select_workers(
                                           device, threads, comm.local_rank(), comm.local_size());
                                     }),
                  comm);
}

Job join_job(distributed::Workers workers, distributed::Communicator& comm) {
  distributed::agree(comm, [&] {
    if (workers.contexts.empty()) throw InvalidInput("a job's rank needs at least one worker");
  });
  Job job;
  job.comm = &comm;
  job.workers = std::move(workers);
  // Every rank's devices, for the job's line and for what its results carry: bit 0 a CPU
  // worker, bit 1 a GPU worker; the worker count above them.
  const std::int64_t mine = (job.workers.any_cpu() ? 1 : 0) | (job.workers.any_cuda() ? 2 : 0) |
                            (static_cast<std::int64_t>(job.workers.contexts.size()) << 2);
  std::int64_t all_workers = 0;
  for (const std::int64_t r : comm.all_gather(mine)) {
    job.job_has_cpu = job.job_has_cpu || (r & 1) != 0;
    job.job_has_cuda = job.job_has_cuda || (r & 2) != 0;
    all_workers += r >> 2;
  }
  job.job_workers = static_cast<int>(all_workers);
  job.spread = all_workers > 1;
  const std::string here = job.workers.describe();
  if (!comm.distributed()) {
    job.description = here;
    return job;
  }
  // Rank 0 names every rank's devices in one line.
  std::vector<std::byte> text(here.size());
  std::copy_n(reinterpret_cast<const std::byte*>(here.data()), here.size(), text.begin());
  std::vector<std::int64_t> sizes;
  const std::vector<std::byte> all = comm.gather(text, 0, &sizes);
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
  }
  return job;
}

}  // namespace gpukit::scale_out
