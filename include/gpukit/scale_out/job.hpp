#pragma once
// The ranks and devices of a scale-out call (docs/scale-out.md): which processes (the ranks of an
// MPI job, or this process alone) and which devices of each (one worker per entry of its
// --device list) a call runs on, found once, collectively, for the whole call. The case studies'
// scale-out calls (poisson.hpp, ...) take a Job; the CLI and Python make one from the user's
// device value and print or return what it says in their own words.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/devices.hpp"

namespace gpukit::scale_out {

/// This process's part of a job.
struct Job {
  distributed::Communicator* comm = nullptr;
  distributed::Workers workers;  // this rank's devices, one worker each (and auto's notice)
  bool job_has_cuda = false;     // some worker of some rank is a GPU
  bool job_has_cpu = false;      // some worker of some rank is the CPU
  int job_workers = 1;           // workers over every rank
  /// The job's devices in one line: this process's workers ("cuda:0 (NVIDIA H200), cuda:1 (...)")
  /// in a job of one process; "3 ranks on 1 host: rank 0 cpu (1 threads), rank 1 ..." on rank 0
  /// of several (empty on the other ranks).
  std::string description;
  /// More than one worker in the whole job: the work is split (blocks, slabs).
  bool spread = false;

  bool is_root() const { return comm->is_root(); }
  int ranks() const { return comm->size(); }
  /// The backend whose arithmetic the job's partial results carry (CPU only when every worker
  /// is a CPU).
  Backend arithmetic() const { return job_has_cuda ? Backend::cuda : Backend::cpu; }
  /// The rule for case studies whose CPU and GPU results differ in the last bits (Black-Scholes,
  /// Monte Carlo: their math libraries evaluate exp, log and erfc differently): a job that mixes
  /// CPU and GPU workers is deterministic for its assignment of devices and within either
  /// backend's check bound, but not bitwise either backend's. The front doors warn when true.
  bool mixes_backends() const { return job_has_cpu && job_has_cuda; }
};

/// Where a scale-out call leaves its results: on the root rank alone (a front door that writes
/// one file there: the CLI), or on every rank (an SPMD program, such as a Python script under
/// mpirun, in which every rank goes on with the result). In a job of one process both are the
/// same.
enum class Results { on_root, on_every_rank };

/// Resolves a device value ("auto", "cpu", "cuda", "cuda:N", "cuda:all", "cuda:A,B,...") for
/// this rank of `comm` (distributed::select_workers with the rank's place on its host, `threads`
/// CPU threads per worker, 0: the host's share), agrees on failure (a GPU missing on one host
/// stops every rank with that rank's error: communicator.hpp's rule) and learns what every rank
/// took. Collective. Throws as select_workers does (InvalidInput for bad syntax,
/// DeviceUnavailable), on every rank alike.
Job join_job(std::string_view device, int threads,
             distributed::Communicator& comm = distributed::Communicator::world());

/// The job of `workers` on this rank of `comm` (each rank its own; join_job above resolves them
/// from a device value): for a caller that makes its contexts itself, such as a test that
/// spreads a call over two CPU workers of one process to check that any split gives the bits of
/// one worker. Collective (learns what every rank took). InvalidInput for no worker.
Job join_job(distributed::Workers workers,
             distributed::Communicator& comm = distributed::Communicator::world());

/// Runs `phase` on the root rank alone and agrees on its outcome with the other ranks
/// (distributed::agree): when it throws on the root, every rank throws the same error. For what
/// one rank does for the whole job (read the input, write the output). Returns phase()'s value
/// on the root and std::nullopt on the other ranks (nothing for a void phase). Collective.
template <class F>
auto on_root(const Job& job, F&& phase) {
  using R = std::invoke_result_t<F&>;
  if constexpr (std::is_void_v<R>) {
    distributed::agree(*job.comm, [&] {
      if (job.is_root()) phase();
    });
  } else {
    return distributed::agree(*job.comm, [&]() -> std::optional<R> {
      if (!job.is_root()) return std::nullopt;
      return std::optional<R>(phase());
    });
  }
}

/// The root's `value` on every rank (plain data; the others' `value` is ignored). Collective.
template <class T>
T from_root(const Job& job, T value) {
  static_assert(std::is_trivially_copyable_v<T>);
  job.comm->broadcast_value(value);
  return value;
}

/// The root's `values` in every rank's `values` (plain data; resized on the others).
/// Collective.
template <class T>
void share_from_root(const Job& job, std::vector<T>& values) {
  if (!job.comm->distributed()) return;
  std::vector<std::byte> bytes;
  if (job.is_root()) {
    const std::span<const std::byte> mine = distributed::as_bytes(values);
    bytes.assign(mine.begin(), mine.end());
  }
  job.comm->broadcast(bytes);
  values = distributed::from_bytes<T>(bytes);
}

}  // namespace gpukit::scale_out
