#pragma once
// A book of quotes inverted to implied volatilities over the GPUs of a process and the ranks of
// an MPI job, with the bits of one device: the call `gpukit iv --device cuda:all` and
// `mpirun gpukit iv` make, and Python's implied_volatility and price_book with a device list or
// under mpirun. Independent rows (rows.hpp): each rank gets its rows' quotes from the root, each
// worker inverts its rows with finance::implied_volatility_book, and the volatility and status
// columns come back in row order.
//
// Tested in tests/scale_out/spread_test.cpp (two and three workers of one process against one,
// every split bit for bit), spread_mpi_test.cpp (mpirun -np 1, 2, 3), and by the CLI
// (tests/distributed/mpi_cli_test.cpp, distributed_cli_test.cpp, distributed_cli_gpu_test.cpp).

#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

/// finance::implied_volatility_book of `book` over the job's workers. `book` is the root's (the
/// other ranks' is ignored: pass an empty view); the root sends each rank its rows. Returns each
/// row's volatility and status in row order on the root, empty columns on the other ranks, or
/// the whole result on every rank with Results::on_every_rank. Bits: implied_volatility_book on
/// one device of the job's backend, for any number of workers and ranks (a job that mixes CPU
/// and GPU workers gives each row its worker's bits: Job::mixes_backends). A job of one worker
/// is the one-device call itself. Errors as implied_volatility_book's (OutOfMemory, CudaError,
/// DeviceUnavailable), agreed: every rank throws the same one (distributed/communicator.hpp's
/// rule). Collective.
finance::ImpliedVolatilityBookResult implied_volatility_book(
    const Job& job, const finance::ImpliedVolatilityBookView& book, finance::Precision precision,
    const finance::ImpliedVolatilityOptions& options, Results results = Results::on_root);

}  // namespace gpukit::scale_out
