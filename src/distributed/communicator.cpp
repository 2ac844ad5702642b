// The job's processes: MPI_COMM_WORLD when built with MPI and started by a launcher, else a job of
// one (every collective a copy).

#include "gpukit/distributed/communicator.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>
#include <thread>

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

// Large payloads move in pieces of at most this many bytes (MPI counts are int).
constexpr std::int64_t kPieceBytes = std::int64_t{1} << 30;

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

#if GPUKIT_HAVE_MPI
// A failure as it travels: an ErrorKind (as an int) or -1 for an unexpected error, and the text.
struct Failure {
  int kind = -1;
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
    return {-1, e.what()};
  } catch (...) {
    return {-1, "an exception of unknown type"};
  }
}

void send_pieces(const std::byte* data, std::int64_t bytes, int to) {
  for (std::int64_t done = 0; done < bytes; done += kPieceBytes) {
    MPI_Send(data + done, static_cast<int>(std::min(kPieceBytes, bytes - done)), MPI_BYTE, to, 0,
             MPI_COMM_WORLD);
  }
}
void receive_pieces(std::byte* data, std::int64_t bytes, int from) {
  for (std::int64_t done = 0; done < bytes; done += kPieceBytes) {
    MPI_Recv(data + done, static_cast<int>(std::min(kPieceBytes, bytes - done)), MPI_BYTE, from, 0,
             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}
#endif

}  // namespace

bool built_with_mpi() noexcept { return GPUKIT_HAVE_MPI != 0; }

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
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  initialized_ = true;
  Communicator::world().attach_mpi();
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
  if (initialized_) {
    Communicator::world().detach_mpi();
    MPI_Finalize();
  }
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

void Communicator::attach_mpi() {
#if GPUKIT_HAVE_MPI
  mpi_ = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &host);
  MPI_Comm_rank(host, &local_rank_);
  MPI_Comm_size(host, &local_size_);
  MPI_Comm_free(&host);
  const int first_on_host = local_rank_ == 0 ? 1 : 0;
  MPI_Allreduce(&first_on_host, &hosts_, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  auto* exit_comm = new MPI_Comm;
  MPI_Comm_dup(MPI_COMM_WORLD, exit_comm);
  exit_comm_ = exit_comm;
#endif
}

void Communicator::detach_mpi() {
#if GPUKIT_HAVE_MPI
  if (exit_comm_ != nullptr) {
    auto* exit_comm = static_cast<MPI_Comm*>(exit_comm_);
    MPI_Comm_free(exit_comm);
    delete exit_comm;
    exit_comm_ = nullptr;
  }
#endif
}

bool Communicator::all_reach_exit([[maybe_unused]] std::chrono::milliseconds timeout) {
  if (!mpi_ || size_ == 1) return true;
#if GPUKIT_HAVE_MPI
  MPI_Request request;
  MPI_Ibarrier(*static_cast<MPI_Comm*>(exit_comm_), &request);
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
  if (mpi_) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

void Communicator::broadcast([[maybe_unused]] std::vector<std::byte>& bytes,
                             [[maybe_unused]] int root) {
#if GPUKIT_HAVE_MPI
  if (!mpi_ || size_ == 1) return;
  auto size = static_cast<std::int64_t>(bytes.size());
  MPI_Bcast(&size, 1, MPI_INT64_T, root, MPI_COMM_WORLD);
  if (rank_ != root) bytes.assign(static_cast<std::size_t>(size), std::byte{0});
  for (std::int64_t done = 0; done < size; done += kPieceBytes) {
    MPI_Bcast(bytes.data() + done, static_cast<int>(std::min(kPieceBytes, size - done)), MPI_BYTE,
              root, MPI_COMM_WORLD);
  }
#endif
}

std::vector<std::int64_t> Communicator::all_gather(std::int64_t value) {
  std::vector<std::int64_t> values(static_cast<std::size_t>(size_), value);
#if GPUKIT_HAVE_MPI
  if (mpi_ && size_ > 1) {
    MPI_Allgather(&value, 1, MPI_INT64_T, values.data(), 1, MPI_INT64_T, MPI_COMM_WORLD);
  }
#endif
  return values;
}

std::vector<std::byte> Communicator::gather(std::span<const std::byte> mine,
                                            [[maybe_unused]] int root) {
  if (!mpi_ || size_ == 1) return {mine.begin(), mine.end()};
  std::vector<std::byte> all;
#if GPUKIT_HAVE_MPI
  const std::vector<std::int64_t> sizes = all_gather(static_cast<std::int64_t>(mine.size()));
  if (rank_ != root) {
    send_pieces(mine.data(), static_cast<std::int64_t>(mine.size()), root);
    return {};
  }
  std::int64_t total = 0;
  for (const std::int64_t s : sizes) total += s;
  all.resize(static_cast<std::size_t>(total));
  std::int64_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    std::byte* at = all.data() + offset;
    if (r == rank_) {
      std::copy(mine.begin(), mine.end(), at);
    } else {
      receive_pieces(at, sizes[static_cast<std::size_t>(r)], r);
    }
    offset += sizes[static_cast<std::size_t>(r)];
  }
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
    for (const std::int64_t s : sizes) total += s;
    if (total != static_cast<std::int64_t>(all.size())) {
      throw InvalidInput(
          fmt::format("scatter: the sizes add up to {} bytes, not {}", total, all.size()));
    }
  }
  if (!mpi_ || size_ == 1) return {all.begin(), all.end()};
  std::vector<std::byte> piece;
#if GPUKIT_HAVE_MPI
  std::int64_t my_size = 0;
  MPI_Scatter(rank_ == root ? sizes.data() : nullptr, 1, MPI_INT64_T, &my_size, 1, MPI_INT64_T,
              root, MPI_COMM_WORLD);
  piece.resize(static_cast<std::size_t>(my_size));
  if (rank_ == root) {
    std::int64_t at = 0;
    for (int r = 0; r < size_; ++r) {
      const std::int64_t bytes = sizes[static_cast<std::size_t>(r)];
      if (r == rank_) {
        std::copy(all.begin() + at, all.begin() + at + bytes, piece.begin());
      } else {
        send_pieces(all.data() + at, bytes, r);
      }
      at += bytes;
    }
  } else {
    receive_pieces(piece.data(), my_size, root);
  }
#endif
  return piece;
}

void Communicator::settle(std::exception_ptr failure) {
  if (!mpi_ || size_ == 1) {
    if (failure) std::rethrow_exception(failure);
    return;
  }
#if GPUKIT_HAVE_MPI
  int mine = failure ? rank_ : size_, lowest = size_;
  MPI_Allreduce(&mine, &lowest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (lowest == size_) return;
  Failure f;
  if (rank_ == lowest) f = describe(failure);
  MPI_Bcast(&f.kind, 1, MPI_INT, lowest, MPI_COMM_WORLD);
  std::vector<std::byte> text(f.message.size());
  std::copy_n(reinterpret_cast<const std::byte*>(f.message.data()), f.message.size(), text.begin());
  broadcast(text, lowest);
  std::string message(reinterpret_cast<const char*>(text.data()), text.size());
  if (lowest != 0) message += fmt::format(" (on rank {} of {})", lowest, size_);
  if (f.kind < 0) throw AgreedUnexpectedError(message, lowest);
  throw AgreedError(static_cast<ErrorKind>(f.kind), message, lowest);
#endif
}

}  // namespace gpukit::distributed
