#pragma once
// Test hooks of the scale-out tests, not for users: the environment variable GPUKIT_TEST_FAULT
// plants a failure on one rank of a job, so that the MPI tests (tests/distributed/mpi_cli_test.cpp,
// tests/cli/poisson_mpi_cli_test.cpp) can show every rank stopping with that rank's message and
// exit code, or the job ending instead of hanging. Read here, in one place, by whoever runs a
// job's work (gpukit/scale_out's calls, which the CLI's mc, bs, reduce and poisson make). Unset
// (always, outside the tests), every hook does nothing.
//
//   rank-out-of-memory:R  inject_rank_fault() throws OutOfMemory on rank R, as a GPU out of
//                         memory does ("cudaMalloc (a fault planted on rank R by
//                         GPUKIT_TEST_FAULT)"): called inside an agreement, so every rank fails
//                         with rank R's error.
//   rank-fails-alone:R    inject_lone_failure() throws IoError on rank R where no agreement
//                         follows, as an unexpected failure would: the job must end (the CLI's
//                         grace period, then MPI_Abort) instead of hanging.

#include "gpukit/distributed/communicator.hpp"

namespace gpukit::distributed {

/// Throws OutOfMemory on rank R when GPUKIT_TEST_FAULT is rank-out-of-memory:R; else nothing.
void inject_rank_fault(const Communicator& comm);

/// Throws IoError on rank R when GPUKIT_TEST_FAULT is rank-fails-alone:R; else nothing.
void inject_lone_failure(const Communicator& comm);

}  // namespace gpukit::distributed
