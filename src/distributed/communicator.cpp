// The job's processes: a duplicate of MPI_COMM_WORLD when built with MPI and started by a launcher,
// else a job of one (every collective a copy); the failure agreement (communicator.hpp's rule).

#include "gpukit/distributed/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <new>
#include <thread>
#include <utility>

#include <fmt/format.h>

#if GPUKIT_HAVE_MPI
// MPI's C interface only (CMake's MPI_CXX_SKIP_MPICXX says the same; this file says it itself).
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

namespace gpukit::distributed {

namespace {

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

#if GPUKIT_HAVE_MPI
// A failure as it travels: its kind (an ErrorKind as an int, or kUnexpected for an exception that
// is not a gpukit::Error) and its message.
constexpr int kUnexpected = -1;
struct Failure {
  int kind = kUnexpected;
  std::string message;
};

Failure describe(const std::exception_ptr& failure) {
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return {static_cast<int>(e.kind()), e.what()};
  } catch (const std::bad_alloc&) {
    return {static_cast<int>(ErrorKind::out_of_memory), "a host allocation failed"};
  } catch (const std::exception& e) {
    return {kUnexpected, e.what()};
  } catch (...) {
    return {kUnexpected, "an exception of unknown type"};
  }
}

// The cause this rank's own failure carries when it is an interruption (what its caller's
// progress callback threw), else null.
std::exception_ptr own_interruption_cause(const std::exception_ptr& failure) {
  if (!failure) return nullptr;
  try {
    std::rethrow_exception(failure);
  } catch (const Interrupted& e) {
    return e.cause();
  } catch (...) {
    return nullptr;
  }
}

// The rule of communicator.hpp: the lowest failing rank's kind and message, its rank named for
// every kind but invalid input, the class of the kind where it is made from a message alone; an
// interruption as an Interrupted with this rank's own cause (`own`, null where it was not
// interrupted itself).
[[noreturn]] void throw_agreed(const Failure& f, int origin, int size, std::exception_ptr own) {
  const auto kind = static_cast<ErrorKind>(f.kind);
  if (f.kind != kUnexpected && kind == ErrorKind::invalid_input) {
    throw AgreedFailure<InvalidInput>(origin, f.message);
  }
  const std::string message = fmt::format("{} (MPI rank {} of {})", f.message, origin, size);
  if (f.kind == kUnexpected) throw AgreedFailure<std::runtime_error>(origin, message);
  if (kind == ErrorKind::io) throw AgreedFailure<IoError>(origin, message);
  if (kind == ErrorKind::device_unavailable)
    throw AgreedFailure<DeviceUnavailable>(origin, message);
  if (kind == ErrorKind::interrupted)
    throw AgreedFailure<Interrupted>(origin, message, std::move(own));
  throw AgreedFailure<Error>(origin, kind, message);
}

MPI_Comm handle_of(void* comm) { return *static_cast<MPI_Comm*>(comm); }

// [done, bytes) in pieces of at most `piece` bytes (MPI counts are int).
template <class Move>
void in_pieces(std::int64_t bytes, std::int64_t piece, const Move& move) {
  for (std::int64_t done = 0; done < bytes; done += piece) {
    move(done, static_cast<int>(std::min(piece, bytes - done)));
  }
}
#endif

}  // namespace

bool built_with_mpi() noexcept { return GPUKIT_HAVE_MPI != 0; }
bool built_with_nccl() noexcept { return GPUKIT_HAVE_NCCL != 0; }

bool started_by_mpi_launcher() noexcept {
  for (const char* name :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MPI_LOCALNRANKS"}) {
    if (environment(name) != nullptr) return true;
  }
  return false;
}

int launcher_job_size() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    if (const char* value = environment(name)) return std::atoi(value);
  }
  return 0;
}

int launcher_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* value = environment(name)) return std::atoi(value);
  }
  return 0;
}

Environment::Environment([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
  if (!started_by_mpi_launcher()) return;
#if GPUKIT_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    problem_ = "MPI was finalized already: this process cannot join the job";
    return;
  }
  if (initialized == 0) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    owner_ = true;
  }
  Communicator::world().attach_mpi();
  attached_ = true;
#else
  if (launcher_job_size() > 1) {
    problem_ = fmt::format(
        "this gpukit was built without MPI, but an MPI launcher started {} copies of it, each of "
        "which would run the whole command alone (build gpukit where MPI is installed: "
        "scripts/setup.sh installs libopenmpi-dev)",
        launcher_job_size());
  }
#endif
}

Environment::~Environment() {
#if GPUKIT_HAVE_MPI
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) return;
  if (attached_) Communicator::world().detach_mpi();
  if (owner_) MPI_Finalize();
#endif
}

void abort_job(int code) noexcept {
#if GPUKIT_HAVE_MPI
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized != 0 && finalized == 0) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  std::_Exit(code);
}

Communicator& Communicator::world() {
  static Communicator world;
  return world;
}

void Communicator::set_piece_bytes(std::int64_t bytes) {
  if (bytes < 1 || bytes > (std::int64_t{1} << 30)) {
    throw InvalidInput(fmt::format("distributed: a piece of {} bytes (1 to 2^30)", bytes));
  }
  piece_bytes_ = bytes;
}

void Communicator::attach_mpi() {
#if GPUKIT_HAVE_MPI
  auto* comm = new MPI_Comm;
  MPI_Comm_dup(MPI_COMM_WORLD, comm);
  comm_ = comm;
  MPI_Comm_rank(*comm, &rank_);
  MPI_Comm_size(*comm, &size_);
  MPI_Comm host;
  MPI_Comm_split_type(*comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
  const int first_on_host = local_rank_ == 0 ? 1 : 0;
  MPI_Allreduce(&first_on_host, &hosts_, 1, MPI_INT, MPI_SUM, *comm);
  auto* exit_comm = new MPI_Comm;
  MPI_Comm_dup(MPI_COMM_WORLD, exit_comm);
  exit_comm_ = exit_comm;
#endif
}

void Communicator::detach_mpi() {
#if GPUKIT_HAVE_MPI
  for (void** held : {&comm_, &exit_comm_}) {
    if (*held == nullptr) continue;
    auto* comm = static_cast<MPI_Comm*>(*held);
    MPI_Comm_free(comm);
    delete comm;
    *held = nullptr;
  }
  rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1, hosts_ = 1;
#endif
}

bool Communicator::all_reach_exit([[maybe_unused]] std::chrono::milliseconds timeout) {
  if (!mpi()) return true;
#if GPUKIT_HAVE_MPI
  MPI_Request request;
  MPI_Ibarrier(handle_of(exit_comm_), &request);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done != 0) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
#else
  return true;
#endif
}

void Communicator::barrier() {
#if GPUKIT_HAVE_MPI
  if (mpi()) MPI_Barrier(handle_of(comm_));
#endif
}

void Communicator::broadcast([[maybe_unused]] std::span<std::byte> bytes,
                             [[maybe_unused]] int root) {
#if GPUKIT_HAVE_MPI
  if (!mpi()) return;
  in_pieces(static_cast<std::int64_t>(bytes.size()), piece_bytes_, [&](std::int64_t at, int n) {
    MPI_Bcast(bytes.data() + at, n, MPI_BYTE, root, handle_of(comm_));
  });
#endif
}

void Communicator::broadcast([[maybe_unused]] std::vector<std::byte>& bytes,
                             [[maybe_unused]] int root) {
#if GPUKIT_HAVE_MPI
  if (!mpi()) return;
  auto size = static_cast<std::int64_t>(bytes.size());
  MPI_Bcast(&size, 1, MPI_INT64_T, root, handle_of(comm_));
  if (rank_ != root) bytes.assign(static_cast<std::size_t>(size), std::byte{0});
  broadcast(std::span<std::byte>(bytes), root);
#endif
}

std::vector<std::int64_t> Communicator::all_gather(std::int64_t value) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(size_), value);
#if GPUKIT_HAVE_MPI
  if (mpi()) {
    MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, handle_of(comm_));
  }
#endif
  return values;
}

std::vector<std::byte> Communicator::gather(std::span<const std::byte> mine,
                                            [[maybe_unused]] int root,
                                            std::vector<std::int64_t>* sizes) {
  if (!mpi()) {
    if (sizes != nullptr) *sizes = {static_cast<std::int64_t>(mine.size())};
    return {mine.begin(), mine.end()};
  }
  std::vector<std::byte> all;
#if GPUKIT_HAVE_MPI
  const std::vector<std::int64_t> counts = all_gather(static_cast<std::int64_t>(mine.size()));
  const MPI_Comm comm = handle_of(comm_);
  if (rank_ != root) {
    in_pieces(counts[static_cast<std::size_t>(rank_)], piece_bytes_, [&](std::int64_t at, int n) {
      MPI_Send(mine.data() + at, n, MPI_BYTE, root, 0, comm);
    });
    return {};
  }
  std::int64_t total = 0;
  for (const std::int64_t s : counts) total += s;
  all.resize(static_cast<std::size_t>(total));
  std::int64_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    std::byte* at = all.data() + offset;
    if (r == rank_) {
      std::copy(mine.begin(), mine.end(), at);
    } else {
      in_pieces(counts[static_cast<std::size_t>(r)], piece_bytes_, [&](std::int64_t done, int n) {
        MPI_Recv(at + done, n, MPI_BYTE, r, 0, comm, MPI_STATUS_IGNORE);
      });
    }
    offset += counts[static_cast<std::size_t>(r)];
  }
  if (sizes != nullptr) *sizes = counts;
#endif
  return all;
}

std::vector<std::byte> Communicator::scatter(std::span<const std::byte> all,
                                             std::span<const std::int64_t> sizes, int root) {
  if (rank_ == root) {
    if (static_cast<int>(sizes.size()) != size_) {
      throw InvalidInput(fmt::format("scatter: {} sizes for {} ranks", sizes.size(), size_));
    }
    std::int64_t total = 0;
    for (const std::int64_t s : sizes) {
      if (s < 0) throw InvalidInput(fmt::format("scatter: a negative size, {}", s));
      total += s;
    }
    if (total != static_cast<std::int64_t>(all.size())) {
      throw InvalidInput(
          fmt::format("scatter: the sizes add up to {} bytes, not {}", total, all.size()));
    }
  }
  if (!mpi()) return {all.begin(), all.end()};
  std::vector<std::byte> piece;
#if GPUKIT_HAVE_MPI
  const MPI_Comm comm = handle_of(comm_);
  std::int64_t my_size = 0;
  MPI_Scatter(rank_ == root ? sizes.data() : nullptr, 1, MPI_INT64_T, &my_size, 1, MPI_INT64_T,
              root, comm);
  piece.resize(static_cast<std::size_t>(my_size));
  if (rank_ == root) {
    std::int64_t at = 0;
    for (int r = 0; r < size_; ++r) {
      const std::int64_t bytes = sizes[static_cast<std::size_t>(r)];
      const std::byte* from = all.data() + at;
      if (r == rank_) {
        std::copy(from, from + bytes, piece.begin());
      } else {
        in_pieces(bytes, piece_bytes_, [&](std::int64_t done, int n) {
          MPI_Send(from + done, n, MPI_BYTE, r, 0, comm);
        });
      }
      at += bytes;
    }
  } else {
    in_pieces(my_size, piece_bytes_, [&](std::int64_t done, int n) {
      MPI_Recv(piece.data() + done, n, MPI_BYTE, root, 0, comm, MPI_STATUS_IGNORE);
    });
  }
#endif
  return piece;
}

void Communicator::settle(std::exception_ptr failure) {
  if (!mpi()) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
#if GPUKIT_HAVE_MPI
  int mine = failure ? rank_ : size_, lowest = size_;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, handle_of(comm_));
  if (lowest == size_) return;
  Failure f;
  if (rank_ == lowest) f = describe(failure);
  MPI_Bcast(&f.kind, 1, MPI_INT, lowest, handle_of(comm_));
  std::vector<std::byte> text(f.message.size());
  std::copy_n(reinterpret_cast<const std::byte*>(f.message.data()), f.message.size(), text.begin());
  broadcast(text, lowest);
  f.message.assign(reinterpret_cast<const char*>(text.data()), text.size());
  throw_agreed(f, lowest, size_, own_interruption_cause(failure));
#endif
}

}  // namespace gpukit::distributed
