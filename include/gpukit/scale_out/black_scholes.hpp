#pragma once
// A European option book priced with Black-Scholes over the GPUs of a process and the ranks of
// an MPI job, with the bits of one device: the call `gpukit bs --device cuda:all` and
// `mpirun gpukit bs` make, and Python's black_scholes and price_book with a device list or under
// mpirun. Independent rows (rows.hpp): each rank gets its rows' terms from the root, each worker
// prices its rows with finance::price_european_book, and the result columns come back in row
// order.
//
// Tested in tests/scale_out/black_scholes_test.cpp (two CPU workers of one process against one,
// every split bit for bit), black_scholes_mpi_test.cpp (mpirun -np 1, 2, 3), and by the CLI
// (tests/distributed/mpi_cli_test.cpp, distributed_cli_gpu_test.cpp).

#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

/// finance::price_european_book of `book` over the job's workers. `book` is the root's (the
/// other ranks' is ignored: pass an empty view); the root sends each rank its rows. Returns each
/// option's price (and Greeks) in row order on the root, empty columns on the other ranks, or
/// the whole result on every rank with Results::on_every_rank. Bits: price_european_book on one
/// device of the job's backend, for any number of workers and ranks (a job that mixes CPU and
/// GPU workers gives each row its worker's bits: Job::mixes_backends). A job of one worker is
/// the one-device call itself. Errors as price_european_book's (InvalidInput for a bad row,
/// OutOfMemory, CudaError), agreed: every rank throws the same one (distributed/
/// communicator.hpp's rule). Collective.
finance::EuropeanBookResult price_black_scholes_book(const Job& job,
                                                     const finance::OptionBookView& book,
                                                     finance::Precision precision, bool greeks,
                                                     const finance::BlackScholesOptions& options,
                                                     Results results = Results::on_root);

}  // namespace gpukit::scale_out
