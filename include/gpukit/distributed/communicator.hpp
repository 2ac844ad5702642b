#pragma once
// The processes of a job and what passes between them: MPI (Debian's OpenMPI) when gpukit is
// built with it and the process was started by an MPI launcher (mpirun, mpiexec, srun), else a
// job of one process in which every collective is a copy.
//
// Collectives are called by every rank, in the same order. They move bytes (64-bit sizes; large
// payloads in pieces of at most 1 GiB), so the hosts of a job must share byte order and type
// sizes. Results are gathered to rank 0 in rank order, and the work is planned so that rank
// order is block order (workers.hpp): nothing is combined in the order results arrive, and no
// floating-point all-reduce, whose order would depend on the rank count, is ever used.
//
// Failure: a phase that may throw runs inside agree(). Every rank then learns whether any rank
// failed and, if one did, every rank throws the same error (the lowest failing rank's kind and
// message), so that all of them stop at the same point with the same exit code instead of
// leaving the others waiting in a collective.

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

/// True when this gpukit was built with MPI (GPUKIT_HAVE_MPI).
bool built_with_mpi() noexcept;

/// Whether an MPI launcher started this process, from the variables launchers set
/// (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK, ...); and how many processes the job has, when the
/// launcher says (0 when it does not).
bool started_by_mpi_launcher() noexcept;
int launcher_job_size() noexcept;
/// This process's rank as the launcher says (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK), 0 when
/// it says nothing: who speaks for a job that cannot start MPI.
int launcher_rank() noexcept;

/// Initializes MPI for the life of the object when the process is a rank of an MPI job (started
/// by a launcher) and gpukit has MPI; finalizes it at destruction. A process started alone never
/// touches MPI (an MPI singleton start costs about a second). One per process, made first thing
/// in main(); worker threads never call MPI (MPI_THREAD_FUNNELED).
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
  bool initialized_ = false;
  std::string problem_;
};

/// Ends every rank of the job at once with `code` (MPI_Abort), for a failure that could not be
/// agreed (a rank failed outside agree()); in a job of one, std::exit(code).
[[noreturn]] void abort_job(int code) noexcept;

/// An error every rank of the job throws after agree(): the same kind (or none: an unexpected
/// error, exit code 1), message and origin on every rank.
class Agreed {
 public:
  explicit Agreed(int origin_rank) : origin_rank_(origin_rank) {}
  virtual ~Agreed() = default;
  /// The lowest rank on which the phase failed.
  int origin_rank() const noexcept { return origin_rank_; }

 private:
  int origin_rank_;
};
class AgreedError : public Error, public Agreed {
 public:
  AgreedError(ErrorKind kind, const std::string& message, int origin_rank)
      : Error(kind, message), Agreed(origin_rank) {}
};
class AgreedUnexpectedError : public std::runtime_error, public Agreed {
 public:
  AgreedUnexpectedError(const std::string& message, int origin_rank)
      : std::runtime_error(message), Agreed(origin_rank) {}
};

/// The job as this process sees it.
class Communicator {
 public:
  /// The process's communicator: every rank of the MPI job once an Environment has initialized
  /// MPI, else a job of one process.
  static Communicator& world();

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  /// This rank's place among the ranks on its host, and how many there are (GPU choice).
  int local_rank() const noexcept { return local_rank_; }
  int local_size() const noexcept { return local_size_; }
  /// Hosts in the job.
  int hosts() const noexcept { return hosts_; }
  bool is_root() const noexcept { return rank_ == 0; }
  bool distributed() const noexcept { return size_ > 1; }

  /// Waits for every rank.
  void barrier();
  /// Root's bytes on every rank (`bytes` is replaced on the others).
  void broadcast(std::vector<std::byte>& bytes, int root = 0);
  /// Every rank's value in rank order, on every rank.
  std::vector<std::int64_t> all_gather(std::int64_t value);
  /// Every rank's bytes concatenated in rank order, on `root` (empty on the others).
  std::vector<std::byte> gather(std::span<const std::byte> mine, int root = 0);
  /// Root's `all`, cut into sizes[r] bytes for rank r in rank order: this rank's piece. `all`
  /// and `sizes` (one per rank, summing to all.size()) are read on root only; the others pass
  /// empty spans.
  std::vector<std::byte> scatter(std::span<const std::byte> all,
                                 std::span<const std::int64_t> sizes, int root = 0);

  /// For an error that was not agreed (thrown outside agree(), such as a module's own agreement
  /// of its ranks): waits up to `timeout` for every rank to reach this call too, on a
  /// communicator of its own (so it never meets another collective). True when they all did
  /// (the error was everyone's: each rank may exit normally), false when they did not (this
  /// rank failed alone: the caller ends the job, abort_job). A job of one: true at once.
  bool all_reach_exit(std::chrono::milliseconds timeout);

  /// The agreement after a phase (agree() calls it): `failure` is this rank's exception, or null.
  /// Returns when no rank failed; else throws AgreedError (or AgreedUnexpectedError) with the
  /// lowest failing rank's kind and message, on every rank. In a job of one, rethrows `failure`
  /// unchanged.
  void settle(std::exception_ptr failure);

  /// A job of one process (what world() is without MPI); the tests make their own.
  Communicator() = default;

 private:
  friend class Environment;
  void attach_mpi();  // fills the fields from MPI_COMM_WORLD (Environment)
  void detach_mpi();  // frees what attach_mpi made, before MPI_Finalize (Environment)
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, hosts_ = 1;
  bool mpi_ = false;
  void* exit_comm_ = nullptr;  // MPI_Comm (a duplicate of the world's) for all_reach_exit
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
