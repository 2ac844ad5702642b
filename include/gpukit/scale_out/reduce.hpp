#pragma once
// A reduction of an array over the GPUs of a process and the ranks of an MPI job, with the bits
// of one device (on any backend: the tree is fixed and evaluated alike on CPU and GPU): the call
// `gpukit reduce --device cuda:all` and `mpirun gpukit reduce` make, and Python's reduce with a
// device list or under mpirun. Fixed blocks (blocks.hpp): the blocks are tiles of the canonical
// tree (primitives/reduce_partials.hpp); the root sends each rank its blocks' elements, each
// worker computes its blocks' partials, and the root runs the levels above them in block order.
//
// Tested in tests/scale_out/reduce_test.cpp (two CPU workers of one process against one, every
// type and operation), reduce_mpi_test.cpp (mpirun -np 1, 2, 3), and by the CLI
// (tests/distributed/mpi_cli_test.cpp, distributed_cli_gpu_test.cpp).

#include <span>

#include "gpukit/primitives/reduce.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::scale_out {

/// primitives::reduce of `values` (host memory) over the job's workers. `values` is the root's
/// (the other ranks' is ignored, but every rank must pass the same element type T:
/// InvalidInput otherwise); the root sends each rank its blocks' elements. Returns the result on
/// the root (T's result type's zero on the other ranks), or on every rank with
/// Results::on_every_rank. Bits: primitives::reduce of the whole array, for any number of
/// workers and ranks and any mix of backends. A job of one worker is the one-device call itself.
/// Errors as primitives::reduce's (InvalidInput for min or max of nothing, a bitwise operation
/// on floats, an integer sum that overflows), agreed: every rank throws the same one.
/// Collective.
template <class T>
primitives::reduce_result_t<T> reduce(const Job& job, std::span<const T> values,
                                      primitives::ReduceOp op,
                                      const primitives::ReduceOptions& options = {},
                                      Results results = Results::on_root);

}  // namespace gpukit::scale_out
