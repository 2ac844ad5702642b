// price_monte_carlo_book: Monte Carlo blocks over the job's workers (monte_carlo.hpp).

#include "gpukit/scale_out/monte_carlo.hpp"

#include <cstddef>
#include <memory>
#include <vector>

#include "gpukit/distributed/test_fault.hpp"
#include "gpukit/finance/monte_carlo_blocks.hpp"
#include "gpukit/finance/option_book_bytes.hpp"
#include "gpukit/scale_out/blocks.hpp"

namespace gpukit::scale_out {

finance::MonteCarloBookResult price_monte_carlo_book(const Job& job,
                                                     const finance::MonteCarloBookView& book,
                                                     const finance::MonteCarloOptions& options,
                                                     Results results) {
  if (!job.spread) {
    return finance::price_monte_carlo_book(job.workers.contexts.front(), book, options);
  }
  distributed::Communicator& comm = *job.comm;
  // Every rank prices from the root's terms, received as bytes (in a job of one process too:
  // the packed book is the one every worker reads, wherever the caller's columns live).
  std::vector<std::byte> packed = on_root(job, [&] {
                                    return finance::pack_option_book(book, 0, book.count);
                                  }).value_or(std::vector<std::byte>{});
  comm.broadcast(packed);
  std::unique_ptr<finance::PackedOptionBook> terms;
  const finance::MonteCarloBlocks blocks = distributed::agree(comm, [&] {
    terms = std::make_unique<finance::PackedOptionBook>(packed);
    return finance::monte_carlo_blocks(terms->view(), options);
  });
  std::vector<std::byte>().swap(packed);
  const finance::MonteCarloBookView& view = terms->view();
  distributed::inject_lone_failure(comm);
  const BlockPlan plan(job, blocks.weight);
  const std::vector<finance::MonteCarloBlockMoments> moments =
      plan.gather<finance::MonteCarloBlockMoments>(
          finance::monte_carlo_scenarios(view, options),
          [&](const Context& context, BlockRange range, const ReportProgress& report) {
            // A worker reports only for a caller that asked: a device reporting progress waits
            // for each launch to end before the next (the launcher's rule), which costs a
            // launch's latency a group of tiles.
            finance::MonteCarloOptions mine = options;
            mine.progress = options.progress ? report : ReportProgress{};
            return finance::price_monte_carlo_blocks(context, view, mine, range.first, range.count);
          },
          options.progress);
  finance::MonteCarloBookResult result =
      on_root(job, [&] {
        return finance::monte_carlo_result_from_blocks(view, options, moments, job.arithmetic());
      }).value_or(finance::MonteCarloBookResult{});
  if (results == Results::on_every_rank) {
    for (std::vector<double>* c : {&result.price, &result.std_error, &result.ci_low,
                                   &result.ci_high, &result.paths, &result.delta, &result.gamma,
                                   &result.vega, &result.vrf_antithetic, &result.vrf_control}) {
      share_from_root(job, *c);
    }
  }
  return result;
}

}  // namespace gpukit::scale_out
