// tests/docs/examples/scale_out.cpp: the example of docs/library.md, built and run by ctest.
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <gpukit/core/device.hpp>
#include <gpukit/finance/monte_carlo.hpp>
#include <gpukit/scale_out/job.hpp>
#include <gpukit/scale_out/monte_carlo.hpp>

int main() {
  using namespace gpukit;
  // Every GPU of the host, or the CPU where there is none (under mpirun: this rank's share).
  const scale_out::Job job = scale_out::join_job(cuda_device_count() > 0 ? "cuda:all" : "cpu", 0);
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
  // One call: the book's fixed blocks shared out over the job's workers by their work, the
  // moments merged in block order on the root (rank 0).
  const finance::MonteCarloBookResult spread =
      scale_out::price_monte_carlo_book(job, book, options);
  if (!job.is_root()) return 0;
  // The same bits as the book priced on one device of that backend.
  const finance::MonteCarloBookResult one =
      finance::price_monte_carlo_book(job.workers.contexts[0], book, options);
  for (int i = 0; i < 3; ++i) {
    std::printf("option %d: %.6f +- %.6f on %s\n", i, spread.price[i], spread.std_error[i],
                job.description.c_str());
  }
  return std::memcmp(spread.price.data(), one.price.data(), 3 * sizeof(double)) == 0 ? 0 : 1;
}
