#pragma once
// Fixed blocks of work across the job's workers: every rank's workers (one per device of its
// --device list), rank 0's first, each taking a contiguous range of blocks in that order, so that
// the workers' outputs concatenated in rank and worker order are in block order. A case study
// defines its blocks and what a block's output is, and combines the outputs in its canonical
// order (finance/monte_carlo_blocks.hpp, primitives/reduce_partials.hpp); this layer only says
// who computes what, runs the workers, and brings the outputs to rank 0.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <type_traits>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/partition.hpp"

namespace gpukit::distributed {

/// Who takes which blocks.
struct WorkPlan {
  std::int64_t blocks = 0;
  std::vector<BlockRange> rank_ranges;   // per rank: its workers' ranges joined (contiguous)
  std::vector<BlockRange> local_ranges;  // this rank's workers', in worker order
};

/// Splits blocks weighted by `weights` (split_by_weight) over every worker of the job:
/// all-gathers each rank's worker count, so every rank gets the same plan. Collective.
WorkPlan plan_work(Communicator& comm, int local_workers, std::span<const double> weights);
/// The same for `blocks` blocks of equal weight (split_evenly).
WorkPlan plan_work(Communicator& comm, int local_workers, std::int64_t blocks);

/// Told by a worker the fraction of its own work done, in [0, 1]; may be called from its thread.
using ReportProgress = std::function<void(double fraction)>;

/// Runs work(worker, report) for worker = 0 .. workers - 1, each on a thread of its own (one
/// worker: on the calling thread), and returns when all have ended. The first failure in worker
/// order is rethrown then. `progress`, when set, is called on the calling thread, about twice a
/// second and at the end, with the workers' mean fraction done (one worker: whenever it reports).
void run_workers(int workers, const std::function<void(int worker, const ReportProgress&)>& work,
                 const std::function<void(double fraction)>& progress = {});

/// The same for one worker a context of `workers` (the devices of a job), each run on the
/// long-lived thread its device keeps for it (a lane, core/worker_lanes.hpp): the thread, its
/// OpenMP team and what the case study keeps on it between calls (a GPU's stream and scratch
/// buffers) are made by the first call only, and the workers of different devices run side by
/// side with no host synchronization between them until the last one ends. Concurrent callers
/// with the same devices take turns on each device's lanes; called from a worker's own thread,
/// the workers get threads of their own. One context: on the calling thread. InvalidInput for no
/// context.
void run_workers(std::span<const Context> workers,
                 const std::function<void(int worker, const ReportProgress&)>& work,
                 const std::function<void(double fraction)>& progress = {});

/// The blocks of `plan` computed by this rank's workers and gathered on rank 0 in block order.
/// compute(context, range, report) returns `range`'s outputs, `per_block` values of T a block
/// (plain data), for worker context `workers[w]` and range plan.local_ranges[w]. Rank 0 gets
/// plan.blocks * per_block values; the other ranks get an empty vector. A failure on any worker of
/// any rank is agreed (agree()): every rank throws the same error. Collective.
template <class T, class Compute>
std::vector<T> compute_blocks(Communicator& comm, std::span<const Context> workers,
                              const WorkPlan& plan, std::int64_t per_block, Compute&& compute,
                              const std::function<void(double fraction)>& progress = {}) {
  static_assert(std::is_trivially_copyable_v<T>);
  // Each worker copies its outputs into this rank's, at its range's place, on its own thread.
  const std::int64_t first = plan.local_ranges.empty() ? 0 : plan.local_ranges.front().first;
  std::int64_t local_blocks = 0;
  for (const BlockRange& r : plan.local_ranges) local_blocks += r.count;
  std::vector<T> mine(static_cast<std::size_t>(local_blocks * per_block));
  agree(comm, [&] {
    run_workers(
        workers,
        [&](int w, const ReportProgress& report) {
          const auto at = static_cast<std::size_t>(w);
          const BlockRange range = plan.local_ranges[at];
          const std::vector<T> output = compute(workers[at], range, report);
          if (static_cast<std::int64_t>(output.size()) != range.count * per_block) {
            throw InvalidInput("distributed: a worker returned the wrong number of values");
          }
          std::copy(output.begin(), output.end(),
                    mine.begin() + static_cast<std::ptrdiff_t>((range.first - first) * per_block));
        },
        progress);
  });
  if (!comm.distributed()) return mine;
  return from_bytes<T>(comm.gather(as_bytes(mine)));
}

}  // namespace gpukit::distributed
