#pragma once
// The distribution style for work that is a sum of fixed blocks: fixed blocks, computed anywhere,
// combined in canonical order (Monte Carlo's paths, a reduction's elements).
//
// Why fixed blocks. A Monte Carlo price is a statistic over a row's paths and a reduction a fold
// over an array; both combine many partial results, and floating-point combination is not
// associative: combining per GPU, or in the order results arrive, would make the bits depend on
// the number of GPUs and on timing. So each case study cuts its work into blocks whose
// boundaries depend on the problem alone (finance/monte_carlo_blocks.hpp: 2^10 tiles of a row;
// primitives/reduce_partials.hpp: tiles of the canonical tree), each block an aligned subtree of
// the one-device computation, so its partial result is the value the one-device run computes at
// that node, whoever computes it. Workers take contiguous ranges of blocks in rank and worker
// order (so rank order is block order), the partials come to the root in block order, and the
// root runs the tree above them: the bits of one device for any split. What crosses between
// ranks is small (64 bytes a Monte Carlo block, one accumulator a reduction block), so the
// partials travel to the host and the fold runs there; no all-reduce, whose order depends on the
// rank count and topology, is used. (Rows, rows.hpp, are the other style: results that need no
// combination at all.)
//
// This header only says who computes which block, moves the root's data to the ranks that need
// it, runs the workers and brings the partials to the root (on gpukit/distributed's partition
// and workers); the case's own call (monte_carlo.hpp, reduce.hpp) defines the blocks and folds.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/distributed/partition.hpp"
#include "gpukit/distributed/test_fault.hpp"
#include "gpukit/distributed/workers.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

using distributed::BlockRange;
using distributed::ReportProgress;

/// Who computes which of a call's fixed blocks: contiguous ranges over every worker of the job,
/// in rank and worker order. Every rank must make it with the same blocks (from data every rank
/// holds, or a count shared with from_root). Collective.
class BlockPlan {
 public:
  /// `blocks` blocks of equal weight (distributed::split_evenly).
  BlockPlan(const Job& job, std::int64_t blocks);
  /// One block per weight, shared out by weight (distributed::split_by_weight: a 252-date
  /// barrier row's blocks weigh 252 times a European row's).
  BlockPlan(const Job& job, std::span<const double> weights);

  std::int64_t blocks() const noexcept { return work_.blocks; }
  /// Rank r's blocks (its workers' ranges joined), this rank's, and this rank's worker w's.
  BlockRange rank_range(int rank) const {
    return work_.rank_ranges[static_cast<std::size_t>(rank)];
  }
  BlockRange mine() const { return rank_range(job_->comm->rank()); }
  BlockRange worker_range(int worker) const {
    return work_.local_ranges[static_cast<std::size_t>(worker)];
  }
  const std::vector<BlockRange>& rank_ranges() const noexcept { return work_.rank_ranges; }

  /// The root's `all` (its blocks' bytes, in block order), cut into each rank's piece:
  /// bytes_of(rank_range(r)) bytes for rank r, consecutive (evaluated on the root only). Returns
  /// this rank's piece; in a job of one process nothing is copied and the result is empty (the
  /// caller uses its own data). Collective.
  std::vector<std::byte> scatter(std::span<const std::byte> all,
                                 const std::function<std::int64_t(BlockRange)>& bytes_of) const;
  /// Each rank's piece made on the root by pack(rank_range(r)) (a failure there is agreed), sent
  /// to its rank: this rank's piece. In a job of one process, nothing is packed and the result is
  /// empty. Collective.
  std::vector<std::byte> scatter_packed(
      const std::function<std::vector<std::byte>(BlockRange)>& pack) const;

  /// Runs work(worker, its context, its blocks, report) for every worker of this rank, each on
  /// its device's long-lived worker thread (distributed::run_workers: kept between calls, with
  /// what the case study keeps on it), and agrees on the outcome: a failure on any
  /// worker of any rank makes every rank throw the same error. `progress` (calling thread) sees
  /// the workers' mean fraction done. The scale-out tests' fault hook (rank-out-of-memory:R,
  /// distributed/test_fault.hpp) fires in every worker. Collective.
  void run(const std::function<void(int worker, const Context& context, BlockRange blocks,
                                    const ReportProgress& report)>& work,
           const std::function<void(double)>& progress = {}) const;

  /// The blocks' outputs, `per_block` values of T a block, computed by the workers
  /// (compute(context, blocks, report) returns its range's, block-major) and gathered on the
  /// root in block order: blocks() * per_block values there, none elsewhere. Failures as run().
  /// Collective.
  template <class T, class Compute>
  std::vector<T> gather(std::int64_t per_block, Compute&& compute,
                        const std::function<void(double)>& progress = {}) const {
    return distributed::compute_blocks<T>(
        *job_->comm, job_->workers.contexts, work_, per_block,
        [&](const Context& context, BlockRange range, const ReportProgress& report) {
          distributed::inject_rank_fault(*job_->comm);
          return compute(context, range, report);
        },
        progress);
  }

 private:
  const Job* job_;
  distributed::WorkPlan work_;
};

}  // namespace gpukit::scale_out
