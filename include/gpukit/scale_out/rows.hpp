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
// on its rows) and gather_rows (each result column in row order, on the root or every rank);
// compute_rows puts them together for a case that says how to cut, pack and compute its book.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <tuple>
#include <type_traits>
#include <utility>
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

/// A rows call, whole: `book`'s rows (the root's; the other ranks' is ignored) over the job's
/// workers, each worker computing its rows with the case's one-device call, the result columns
/// joined in row order on the root (empty on the other ranks) or on every rank. A job of one
/// worker is the one-device call itself. `rows_case` says how (black_scholes.cpp,
/// implied_volatility.cpp):
///   Case::View, Case::Result: the book's view and the one-device call's result;
///   Case::Packed: a book made from bytes (constructed from std::span<const std::byte>), whose
///     view() is a Case::View;
///   rows_case.rows(view, first, count): rows [first, first + count) as a view of their own;
///   rows_case.pack(view, first, count): those rows as Case::Packed's bytes;
///   rows_case.compute(context, view): the one-device call, a Case::Result;
///   rows_case.columns(result): std::tie of the result's row columns (std::vector<T> of plain
///     data, one T a row, or empty where the call leaves a column out: it stays empty).
/// Errors as the one-device call's, agreed on every rank. Collective.
template <class Case>
typename Case::Result compute_rows(const Job& job, const typename Case::View& book,
                                   const Case& rows_case, Results results) {
  using Result = typename Case::Result;
  if (!job.spread) return rows_case.compute(job.workers.contexts.front(), book);
  const BlockPlan plan = plan_rows(job, book.count);
  const BlockRange mine = plan.mine();

  // This rank's rows: the root's book itself in a job of one process, else what the root sent.
  std::unique_ptr<typename Case::Packed> received;
  if (job.comm->distributed()) {
    const std::vector<std::byte> piece =
        plan.scatter_packed([&](BlockRange r) { return rows_case.pack(book, r.first, r.count); });
    distributed::agree(*job.comm,
                       [&] { received = std::make_unique<typename Case::Packed>(piece); });
  }
  const typename Case::View local = received ? received->view() : book;

  // Each worker computes its rows; the parts are joined in worker order (row order).
  std::vector<Result> parts(job.workers.contexts.size());
  plan.run([&](int worker, const Context& context, BlockRange range, const ReportProgress&) {
    parts[static_cast<std::size_t>(worker)] =
        rows_case.compute(context, rows_case.rows(local, range.first - mine.first, range.count));
  });
  received.reset();
  Result result;
  auto whole = rows_case.columns(result);
  const auto join_column = [&](auto& column, auto index) {  // index: its place in columns()
    for (Result& part : parts) {
      auto& from = std::get<decltype(index)::value>(rows_case.columns(part));
      column.insert(column.end(), from.begin(), from.end());
      from = {};
    }
    column = gather_rows(job, std::move(column), results);
  };
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (join_column(std::get<I>(whole), std::integral_constant<std::size_t, I>{}), ...);
  }
  (std::make_index_sequence<std::tuple_size_v<decltype(whole)>>{});
  return result;
}

}  // namespace gpukit::scale_out
