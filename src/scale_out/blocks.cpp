// BlockPlan: fixed blocks over the job's workers (blocks.hpp).

#include "gpukit/scale_out/blocks.hpp"

namespace gpukit::scale_out {

BlockPlan::BlockPlan(const Job& job, std::int64_t blocks)
    : job_(&job),
      work_(distributed::plan_work(*job.comm, static_cast<int>(job.workers.contexts.size()),
                                   blocks)) {}

BlockPlan::BlockPlan(const Job& job, std::span<const double> weights)
    : job_(&job),
      work_(distributed::plan_work(*job.comm, static_cast<int>(job.workers.contexts.size()),
                                   weights)) {}

std::vector<std::byte> BlockPlan::scatter(
    std::span<const std::byte> all, const std::function<std::int64_t(BlockRange)>& bytes_of) const {
  distributed::Communicator& comm = *job_->comm;
  if (!comm.distributed()) return {};
  std::vector<std::int64_t> sizes;
  if (comm.is_root()) {
    for (const BlockRange& r : work_.rank_ranges) sizes.push_back(bytes_of(r));
  }
  return comm.scatter(comm.is_root() ? all : std::span<const std::byte>{}, sizes);
}

std::vector<std::byte> BlockPlan::scatter_packed(
    const std::function<std::vector<std::byte>(BlockRange)>& pack) const {
  distributed::Communicator& comm = *job_->comm;
  if (!comm.distributed()) return {};
  std::vector<std::byte> all;
  std::vector<std::int64_t> sizes;
  on_root(*job_, [&] {
    for (const BlockRange& r : work_.rank_ranges) {
      const std::vector<std::byte> piece = pack(r);
      all.insert(all.end(), piece.begin(), piece.end());
      sizes.push_back(static_cast<std::int64_t>(piece.size()));
    }
  });
  std::vector<std::byte> mine = comm.scatter(all, sizes);
  return mine;
}

void BlockPlan::run(
    const std::function<void(int, const Context&, BlockRange, const ReportProgress&)>& work,
    const std::function<void(double)>& progress) const {
  const std::vector<Context>& contexts = job_->workers.contexts;
  distributed::agree(*job_->comm, [&] {
    distributed::run_workers(
        contexts,
        [&](int w, const ReportProgress& report) {
          distributed::inject_rank_fault(*job_->comm);
          work(w, contexts[static_cast<std::size_t>(w)], worker_range(w), report);
        },
        progress);
  });
}

}  // namespace gpukit::scale_out
