#pragma once
// The distribution style for independent rows: a book's rows split evenly over the workers,
// each row's results gathered in row order (Black-Scholes; implied volatility next).
//
// Why rows. A Black-Scholes price (or an implied volatility) of a row depends on that row's
// terms alone, with no combination across rows: a row priced on any worker has the bits it has
// on one device of the same backend, so the split needs no canonical order beyond the rows'
// own, and any split gives the one-device result. The work per row is the same for every row,
// so rows are shared out evenly (contiguous ranges in rank and worker order: rank order is row
// order). Unlike fixed blocks (blocks.hpp), the data is the work: the root sends each rank only
// its rows' terms and gathers each result column, so across hosts the link into the root, not
// the GPUs, sets the pace (docs/scale-out.md, "What crosses").
//
// The pieces of a rows call: plan_rows (the row count shared from the root, the even split),
// BlockPlan::scatter_packed (each rank's rows' terms from the root), BlockPlan::run (each worker
// on its rows) and gather_rows (each result column in row order, on the root or every rank).

#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/distributed/communicator.hpp"
#include "gpukit/scale_out/blocks.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

/// The root's `rows` (the others' value is ignored) split evenly over every worker of the job,
/// one block a row. Collective.
inline BlockPlan plan_rows(const Job& job, std::int64_t rows) {
  return BlockPlan(job, from_root(job, rows));
}

/// This rank's rows' values of a column (plain data, one T a row, in row order) joined in rank
/// order: the whole column in row order on the root (empty on the other ranks), or on every rank
/// with Results::on_every_rank. In a job of one process, `mine` itself. Collective.
template <class T>
std::vector<T> gather_rows(const Job& job, std::vector<T> mine, Results results) {
  if (!job.comm->distributed()) return mine;
  std::vector<T> all = distributed::from_bytes<T>(job.comm->gather(distributed::as_bytes(mine)));
  if (results == Results::on_every_rank) share_from_root(job, all);
  return all;
}

}  // namespace gpukit::scale_out
