// price_black_scholes_book: Black-Scholes rows over the job's workers (black_scholes.hpp).

#include "gpukit/scale_out/black_scholes.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "gpukit/finance/option_book_bytes.hpp"
#include "gpukit/scale_out/rows.hpp"

namespace gpukit::scale_out {

finance::EuropeanBookResult price_black_scholes_book(const Job& job,
                                                     const finance::OptionBookView& book,
                                                     finance::Precision precision, bool greeks,
                                                     const finance::BlackScholesOptions& options,
                                                     Results results) {
  if (!job.spread) {
    return finance::price_european_book(job.workers.contexts.front(), book, precision, greeks,
                                        options);
  }
  const BlockPlan rows = plan_rows(job, book.count);
  const BlockRange mine = rows.mine();

  // This rank's rows: the root's book itself in a job of one process, else what the root sent.
  std::unique_ptr<finance::PackedOptionBook> received;
  if (job.comm->distributed()) {
    const std::vector<std::byte> piece = rows.scatter_packed(
        [&](BlockRange r) { return finance::pack_option_book(book, r.first, r.count); });
    distributed::agree(*job.comm,
                       [&] { received = std::make_unique<finance::PackedOptionBook>(piece); });
  }
  const finance::OptionBookView local = received ? received->view() : book;

  // Each worker prices its rows into this rank's columns.
  finance::EuropeanBookResult result;
  const auto n = static_cast<std::size_t>(mine.count);
  std::vector<std::vector<double>*> columns = {&result.price};
  if (greeks) {
    for (auto* c : {&result.delta, &result.gamma, &result.vega, &result.theta, &result.rho}) {
      columns.push_back(c);
    }
  }
  for (std::vector<double>* c : columns) c->resize(n);
  rows.run([&](int, const Context& context, BlockRange range, const ReportProgress&) {
    const std::int64_t at = range.first - mine.first;
    const finance::EuropeanBookResult part = finance::price_european_book(
        context, finance::book_rows(local, at, range.count), precision, greeks, options);
    const std::vector<const std::vector<double>*> from = {&part.price, &part.delta, &part.gamma,
                                                          &part.vega,  &part.theta, &part.rho};
    for (std::size_t c = 0; c < columns.size(); ++c) {
      std::copy(from[c]->begin(), from[c]->end(), columns[c]->begin() + at);
    }
  });
  received.reset();
  for (std::vector<double>* c : columns) *c = gather_rows(job, std::move(*c), results);
  return result;
}

}  // namespace gpukit::scale_out
