#pragma once
// The processes of a job and what passes between them: MPI (Debian's OpenMPI) when gpukit is
// built with it and the process was started by an MPI launcher (mpirun, mpiexec, srun), else a
// job of one process in which every collective is a copy. The only code of gpukit that calls MPI
// (FFTW's MPI planner aside, which gets this communicator's MPI_Comm through native_handle()).
//
// Collectives are called by every rank, in the same order. They move bytes (64-bit sizes, any
// size: a payload travels in pieces of at most piece_bytes(), 1 GiB by default, since one MPI
// message counts its bytes in an int), so the hosts of a job must share byte order and type
// sizes. Results are gathered to rank 0 in rank order, and the work is planned so that rank
// order is block order (workers.hpp): nothing is combined in the order results arrive, and no
// floating-point all-reduce, whose order would depend on the rank count, is ever used.
//
// Failure: a phase that may throw runs inside agree() (or ends with settle()). Every rank then
// learns whether any rank failed and, if one did, every rank throws the same error: the rule,
// written once here for every command (mc, bs, reduce, poisson) and every library caller:
//   - the error is the lowest failing rank's: its kind (so its exit code) and its message;
//   - in a job of several ranks the message gets " (MPI rank r of N)" appended, r the lowest
//     failing rank, for every kind except invalid input, whose message describes the input and
//     reads the same on one rank or many (a bad row names its file, line and column);
//   - it is thrown as the failing error's class where that class is made from a message alone
//     (InvalidInput, IoError, DeviceUnavailable), else as an Error of its kind (out of memory,
//     CUDA, check failed), or as std::runtime_error for an exception that is not a gpukit::Error;
//     std::bad_alloc counts as OutOfMemory ("a host allocation failed"). Every such error also
//     derives from Agreed (its origin rank): a program may let one rank report it (the CLI:
//     rank 0), since every rank holds the same one;
//   - an interruption (Interrupted: a caller's progress callback stopped the call, Python's
//     Ctrl-C) is thrown as an Interrupted on every rank, so that a front door stops each rank as
//     it stops one process; each rank that was interrupted itself keeps its own cause() (what its
//     callback threw: Python's KeyboardInterrupt, for its front door to raise again), the others
//     get none. Among other failures it is one kind like the others (the lowest rank wins);
//   - in a job of one, the error passes unchanged (its own class, its own message).
// So all ranks stop at the same point with the same exit code instead of leaving the others
// waiting in a collective. Tested in tests/distributed/communicator_mpi_test.cpp (mpirun -np 1,
// 2, 3) and by the CLI under mpirun (tests/distributed/mpi_cli_test.cpp,
// tests/cli/poisson_mpi_cli_test.cpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpukit/core/error.hpp"

namespace gpukit::distributed {

/// True when this gpukit was built with MPI (GPUKIT_HAVE_MPI): a launcher's ranks form one job.
bool built_with_mpi() noexcept;
/// True when this gpukit was built with NCCL (GPUKIT_HAVE_NCCL): DeviceExchange's NCCL engine
/// (device_exchange.hpp).
bool built_with_nccl() noexcept;

/// Whether an MPI launcher started this process, from the variables launchers set
/// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, ...); and how many processes the job has, when the
/// launcher says (0 when it does not).
bool started_by_mpi_launcher() noexcept;
int launcher_job_size() noexcept;
/// This process's rank as the launcher says (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), 0 when
/// it says nothing: who speaks for a job that cannot start MPI.
int launcher_rank() noexcept;

/// Initializes MPI for the life of the object when the process is a rank of an MPI job (started
/// by a launcher) and gpukit has MPI, and attaches Communicator::world() to it; finalizes MPI at
/// destruction when it was the one to initialize it (a program that initialized MPI itself, such
/// as an mpi4py script, keeps it). A process started alone never touches MPI (an MPI singleton
/// start costs about a second). One per process, made first thing in main(); worker threads never
/// call MPI (MPI_THREAD_FUNNELED).
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// Why this process cannot run as launched, or "" when it can: a launcher started several
  /// processes of a gpukit built without MPI (each would run the whole command alone).
  const std::string& problem() const noexcept { return problem_; }

 private:
  bool attached_ = false;  // world() uses MPI
  bool owner_ = false;     // this object initialized MPI (and finalizes it)
  std::string problem_;
};

/// Ends every rank of the job at once with `code` (MPI_Abort), for a failure that could not be
/// agreed (a rank failed outside agree()); in a job of one, std::_Exit(code).
[[noreturn]] void abort_job(int code) noexcept;

/// What every error thrown by an agreement of several ranks also is (see the rule at the top):
/// the same error on every rank, found first on origin_rank().
class Agreed {
 public:
  explicit Agreed(int origin_rank) : origin_rank_(origin_rank) {}
  virtual ~Agreed() = default;
  /// The lowest rank on which the phase failed.
  int origin_rank() const noexcept { return origin_rank_; }

 private:
  int origin_rank_;
};
/// An agreed error of class `Base` (InvalidInput, IoError, DeviceUnavailable, Error,
/// std::runtime_error).
template <class Base>
class AgreedFailure final : public Base, public Agreed {
 public:
  template <class... Args>
  explicit AgreedFailure(int origin_rank, Args&&... args)
      : Base(std::forward<Args>(args)...), Agreed(origin_rank) {}
};

/// The job as this process sees it. Not for concurrent use: collectives are called by one thread
/// of each rank (MPI_THREAD_FUNNELED).
class Communicator {
 public:
  /// The process's communicator: every rank of the MPI job once an Environment has initialized
  /// MPI, else a job of one process.
  static Communicator& world();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// This rank's place among the ranks on its host, and how many there are (device choice:
  /// devices.hpp).
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// Hosts in the job.
  int hosts() const noexcept { return hosts_; }
  bool is_root() const noexcept { return rank_ == 0; }
  bool distributed() const noexcept { return size_ > 1; }

  /// Waits for every rank.
  void barrier();
  /// Root's `bytes` copied into every rank's `bytes`, which has the same size on every rank.
  void broadcast(std::span<std::byte> bytes, int root = 0);
  /// Root's bytes on every rank (`bytes` is resized and replaced on the others).
  void broadcast(std::vector<std::byte>& bytes, int root = 0);
  /// Root's `value` in every rank's `value` (plain data).
  template <class T>
  void broadcast_value(T& value, int root = 0) {
    static_assert(std::is_trivially_copyable_v<T>);
    broadcast(std::as_writable_bytes(std::span(&value, 1)), root);
  }
  /// Every rank's value in rank order, on every rank.
  std::vector<std::int64_t> all_gather(std::int64_t value);
  /// Every rank's bytes (any size on each) concatenated in rank order, on `root` (empty on the
  /// others). `sizes`, when given, receives on root each rank's byte count, in rank order.
  std::vector<std::byte> gather(std::span<const std::byte> mine, int root = 0,
                                std::vector<std::int64_t>* sizes = nullptr);
  /// Root's `all`, cut into sizes[r] bytes for rank r in rank order: this rank's piece. `all`
  /// and `sizes` (one per rank, summing to all.size()) are read on root only; the others pass
  /// empty spans. InvalidInput on root (not agreed: root alone sees it) for sizes that do not fit.
  std::vector<std::byte> scatter(std::span<const std::byte> all,
                                 std::span<const std::int64_t> sizes, int root = 0);

  /// For an error that was not agreed (thrown outside agree()): waits up to `timeout` for every
  /// rank to reach this call too, on a communicator of its own (so it never meets another
  /// collective). True when they all did (the error was everyone's: each rank may exit
  /// normally), false when they did not (this rank failed alone: the caller ends the job,
  /// abort_job). A job of one: true at once.
  bool all_reach_exit(std::chrono::milliseconds timeout);

  /// The agreement after a phase (agree() calls it): `failure` is this rank's exception, or null.
  /// Returns when no rank failed; else throws the error of the rule at the top of this file, on
  /// every rank. Collective.
  void settle(std::exception_ptr failure);

  /// The job's MPI communicator, for a library that takes one (FFTW's MPI planner): a pointer to
  /// an MPI_Comm (a duplicate of MPI_COMM_WORLD, so that gpukit's messages never meet the
  /// program's own), valid while MPI is initialized; nullptr in a job of one without MPI. Opaque
  /// so that no MPI header leaks out of this header: `*static_cast<const MPI_Comm*>(handle)`.
  const void* native_handle() const noexcept { return comm_; }

  /// The largest piece one MPI call moves, in bytes (1 GiB unless set; MPI counts are int).
  /// Tests set a few bytes, the same on every rank, to make payloads span many pieces.
  std::int64_t piece_bytes() const noexcept { return piece_bytes_; }
  void set_piece_bytes(std::int64_t bytes);

  /// A job of one process (what world() is without MPI); the tests make their own.
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

 private:
  friend class Environment;
  void attach_mpi();  // fills the fields from MPI_COMM_WORLD (Environment)
  void detach_mpi();  // frees what attach_mpi made, before MPI_Finalize (Environment)
  bool mpi() const noexcept { return comm_ != nullptr && size_ > 1; }
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, hosts_ = 1;
  std::int64_t piece_bytes_ = std::int64_t{1} << 30;
  void* comm_ = nullptr;       // MPI_Comm* (a duplicate of the world's) for every collective
  void* exit_comm_ = nullptr;  // MPI_Comm* (another duplicate) for all_reach_exit
};

/// Runs `phase` on this rank, then agrees with the other ranks on the outcome
/// (Communicator::settle): returns phase()'s value when no rank failed, else throws the same
/// error on every rank. Collective.
template <class F>
auto agree(Communicator& comm, F&& phase) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  std::exception_ptr failure;
  if constexpr (std::is_void_v<R>) {
    try {
      phase();
    } catch (...) {
      failure = std::current_exception();
    }
    comm.settle(failure);
  } else {
    std::optional<R> result;
    try {
      result.emplace(phase());
    } catch (...) {
      failure = std::current_exception();
    }
    comm.settle(failure);
    return std::move(*result);
  }
}

/// A vector of plain values as bytes, and back (for the byte collectives).
template <class T>
std::span<const std::byte> as_bytes(const std::vector<T>& values) {
  static_assert(std::is_trivially_copyable_v<T>);
  return std::as_bytes(std::span<const T>(values));
}
template <class T>
std::vector<T> from_bytes(std::span<const std::byte> bytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (bytes.size() % sizeof(T) != 0) {
    throw InvalidInput("distributed: a byte count that is not a whole number of values");
  }
  std::vector<T> values(bytes.size() / sizeof(T));
  if (!bytes.empty()) std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

}  // namespace gpukit::distributed
