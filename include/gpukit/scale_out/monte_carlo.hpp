#pragma once
// A Monte Carlo option book (European and barrier rows) priced over the GPUs of a process and
// the ranks of an MPI job, with the bits of one device: the call `gpukit mc --device cuda:all`
// and `mpirun gpukit mc` make, and Python's monte_carlo and price_book with a device list or
// under mpirun. Fixed blocks (blocks.hpp): every rank gets the book's terms (at most 70 bytes a
// row) from the root, each worker prices its share of the book's blocks
// (finance/monte_carlo_blocks.hpp, shared out by their path-steps), and the root merges the
// blocks' moments in block order with the arithmetic of the job's backend.
//
// Tested in tests/scale_out/monte_carlo_test.cpp (two CPU workers of one process against one),
// monte_carlo_mpi_test.cpp (mpirun -np 1, 2, 3), and by the CLI (tests/distributed/
// mpi_cli_test.cpp, distributed_cli_gpu_test.cpp).

#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

/// finance::price_monte_carlo_book of `book` over the job's workers. `book` is the root's (the
/// other ranks' is ignored: pass an empty view), stream keys included; the root sends it to
/// every rank. options.progress, when set, is told on the calling thread of every rank the
/// fraction of that rank's work done (a front door reports the root's). Returns the result in
/// row order on the root (empty columns on the other ranks), or on every rank with
/// Results::on_every_rank. Bits: price_monte_carlo_book on one device of the job's backend, for
/// any number of workers and ranks (a job that mixes CPU and GPU workers: deterministic for its
/// assignment of devices and within the check bound of either backend, Job::mixes_backends). A
/// job of one worker is the one-device call itself. Errors as price_monte_carlo_book's, agreed:
/// every rank throws the same one. Collective.
finance::MonteCarloBookResult price_monte_carlo_book(const Job& job,
                                                     const finance::MonteCarloBookView& book,
                                                     const finance::MonteCarloOptions& options,
                                                     Results results = Results::on_root);

}  // namespace gpukit::scale_out
