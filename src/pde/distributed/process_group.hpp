#pragma once
// Internal to the distributed Poisson solver: the processes a solve runs over (every rank of an
// MPI communicator, or this process alone), the few host collectives it needs, and the rule that
// makes a failure on one rank a failure on every rank with the same message and exit code.
//
// Plain C++: no MPI header leaks out (the MPI calls live in process_group.cpp, built with MPI
// where CMake finds it; without it only ProcessGroup::self() exists). The general MPI layer of
// gpukit (the `distributed` module) may later own these collectives; this one holds only what the
// Poisson slabs need.

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <span>
#include <vector>

namespace gpukit::pde::distributed {

/// True when this gpukit was built with MPI (CMake found it): mpi_world() and the CPU's FFTW MPI
/// engine exist.
bool built_with_mpi() noexcept;

// Whether an MPI launcher started this process, and its rank before MPI is initialized:
// distributed::started_by_mpi_launcher() and distributed::launcher_rank()
// (gpukit/distributed/communicator.hpp).

/// True once ProcessGroup::settle() has thrown a failure that every process of its group threw
/// alike: a program may then let one rank report it (the CLI: rank 0).
bool failure_agreed() noexcept;

/// Initializes MPI (MPI_THREAD_FUNNELED: only the main thread calls MPI; OpenMP threads and CUDA
/// streams work under it) unless it already is, and finalizes it on destruction when it was the
/// one to initialize it: a command can hold one whether or not main() initialized MPI before.
/// InvalidInput when gpukit was built without MPI.
class MpiSession {
 public:
  MpiSession();
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

 private:
  bool owner_ = false;
};

/// The processes of a distributed solve: rank() of size(). Copies share one communicator.
/// Every member function except rank(), size() and the accessors is collective: every process
/// of the group calls it, in the same order.
class ProcessGroup {
 public:
  /// This process alone (no MPI): size() 1, every collective a copy or a no-op.
  static ProcessGroup self();
  /// Every rank of MPI_COMM_WORLD (a duplicate of it, so that its messages never meet the
  /// caller's). MPI must be initialized (MpiSession); InvalidInput when built without MPI.
  static ProcessGroup mpi_world();

  int rank() const;
  int size() const;
  bool uses_mpi() const;
  /// This process's index among the processes of its host (MPI_COMM_TYPE_SHARED), and their
  /// count: how a rank picks its GPU (local_rank modulo the device count).
  int local_rank() const;
  int local_size() const;

  /// `bytes` of `root` copied into every process's `bytes` (same size everywhere).
  void broadcast(std::span<std::byte> bytes, int root) const;
  /// Every process's `mine` (any size, each below 2 GiB), concatenated in rank order at `root`;
  /// empty elsewhere. `sizes`, when given, receives at root the byte count of each rank's part.
  std::vector<std::byte> gather(std::span<const std::byte> mine, int root,
                                std::vector<std::int64_t>* sizes = nullptr) const;
  /// Every process's `value`, in rank order, on every process.
  std::vector<std::int64_t> all_gather(std::int64_t value) const;
  void barrier() const;

  /// The failure rule. Collective: every process passes what its own step threw (nullptr: it
  /// succeeded). When any process failed, every process throws the error of the lowest failing
  /// rank: the same kind (so the same exit code) and the same message, with " (MPI rank r of N)"
  /// appended for errors other than invalid input when N > 1 (a bad input file says the same on
  /// one process or many). std::bad_alloc counts as OutOfMemory, any other non-gpukit exception
  /// as an internal error (std::runtime_error with its message). With nullptr everywhere it
  /// returns. So no process waits forever in a later collective for one that gave up.
  void settle(std::exception_ptr failure) const;

  /// Runs `step` on this process and settles its outcome (see settle()).
  template <class Step>
  void agree(Step&& step) const {
    std::exception_ptr failure;
    try {
      step();
    } catch (...) {
      failure = std::current_exception();
    }
    settle(failure);
  }

  /// The MPI_Comm (a pointer to it, for FFTW's MPI planner); nullptr for self().
  const void* mpi_comm() const;

  struct Impl;

 private:
  explicit ProcessGroup(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace gpukit::pde::distributed
