// tests/docs/examples/scale_out.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <gpukit/core/device.hpp>
#include <gpukit/distributed/devices.hpp>
#include <gpukit/distributed/partition.hpp>
#include <gpukit/distributed/workers.hpp>
#include <gpukit/finance/monte_carlo.hpp>
#include <gpukit/finance/monte_carlo_blocks.hpp>

int main() {
  using namespace gpukit;
  // Every GPU of the host, or the CPU where there is none.
  const distributed::Workers workers =
      distributed::select_workers(cuda_device_count() > 0 ? "cuda:all" : "cpu", 0);
  const std::uint8_t is_put[] = {0, 1, 0};
  const double spot[] = {100, 100, 100}, strike[] = {90, 100, 110}, maturity[] = {1, 1, 2};
  finance::MonteCarloBookView book;
  book.count = 3;
  book.is_put = is_put;
  book.spot = spot;
  book.strike = strike;
  book.maturity = maturity;
  book.rate.scalar = 0.05;
  book.volatility.scalar = 0.2;
  finance::MonteCarloOptions options;
  options.paths = 5'000'000;  // 3 blocks a row: 2^21 samples each, the last one short
  // The book's fixed blocks, shared out by their work; each worker prices its range on a thread
  // of its own; the moments merge on the host in block order.
  const finance::MonteCarloBlocks blocks = finance::monte_carlo_blocks(book, options);
  const auto n = static_cast<int>(workers.contexts.size());
  const std::vector<distributed::BlockRange> ranges =
      distributed::split_by_weight(blocks.weight, n);
  std::vector<std::vector<finance::MonteCarloBlockMoments>> parts(static_cast<std::size_t>(n));
  distributed::run_workers(n, [&](int w, const distributed::ReportProgress&) {
    const distributed::BlockRange r = ranges[static_cast<std::size_t>(w)];
    parts[static_cast<std::size_t>(w)] = finance::price_monte_carlo_blocks(
        workers.contexts[static_cast<std::size_t>(w)], book, options, r.first, r.count);
  });
  std::vector<finance::MonteCarloBlockMoments> moments;
  for (const auto& p : parts) moments.insert(moments.end(), p.begin(), p.end());
  const Backend backend = workers.contexts[0].backend;
  const finance::MonteCarloBookResult spread =
      finance::monte_carlo_result_from_blocks(book, options, moments, backend);
  // The same bits as the book priced on one device of that backend.
  const finance::MonteCarloBookResult one =
      finance::price_monte_carlo_book(workers.contexts[0], book, options);
  for (int i = 0; i < 3; ++i) {
    std::printf("option %d: %.6f +- %.6f on %s\n", i, spread.price[i], spread.std_error[i],
                workers.describe().c_str());
  }
  return std::memcmp(spread.price.data(), one.price.data(), 3 * sizeof(double)) == 0 ? 0 : 1;
}
