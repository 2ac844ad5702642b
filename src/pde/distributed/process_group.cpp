// ProcessGroup: this process alone, or an MPI communicator (when built with MPI), and the failure
// rule every distributed step goes through (settle()).

#include "pde/distributed/process_group.hpp"

#include <algorithm>
#include <atomic>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_MPI
#include <mpi.h>
#endif

namespace gpukit::pde::distributed {

bool built_with_mpi() noexcept { return GPUKIT_HAVE_MPI != 0; }

namespace {
std::atomic<bool> g_failure_agreed{false};
}  // namespace

bool failure_agreed() noexcept { return g_failure_agreed.load(); }

#if GPUKIT_HAVE_MPI

namespace {

// How a failure travels: its kind (ErrorKind + 1; 0 none; kInternal a non-gpukit exception) and
// its message.
constexpr int kInternal = 100;

struct Failure {
  int kind = 0;
  std::string message;
};

Failure describe(std::exception_ptr failure) {
  if (!failure) return {};
  try {
    std::rethrow_exception(failure);
  } catch (const Error& e) {
    return {static_cast<int>(e.kind()) + 1, e.what()};
  } catch (const std::bad_alloc&) {
    return {static_cast<int>(ErrorKind::out_of_memory) + 1, "a host allocation failed"};
  } catch (const std::exception& e) {
    return {kInternal, e.what()};
  } catch (...) {
    return {kInternal, "an unknown exception"};
  }
}

[[noreturn]] void throw_failure(const Failure& f, int rank, int size) {
  g_failure_agreed = true;
  if (f.kind == kInternal) throw std::runtime_error(f.message);
  const auto kind = static_cast<ErrorKind>(f.kind - 1);
  // A bad input file reads the same on one process or many; other failures say where they were.
  if (kind == ErrorKind::invalid_input) throw InvalidInput(f.message);
  const std::string message = fmt::format("{} (MPI rank {} of {})", f.message, rank, size);
  // The kinds whose classes take a message alone keep their class; the others (out of memory,
  // CUDA) keep their kind, which is what decides the exit code.
  if (kind == ErrorKind::io) throw IoError(message);
  if (kind == ErrorKind::device_unavailable) throw DeviceUnavailable(message);
  throw Error(kind, message);
}

}  // namespace
#endif

struct ProcessGroup::Impl {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
#if GPUKIT_HAVE_MPI
  bool mpi = false;
  MPI_Comm comm = MPI_COMM_NULL;
  ~Impl() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (mpi && !finalized && comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
  }
#endif
};

ProcessGroup ProcessGroup::self() { return ProcessGroup(std::make_shared<Impl>()); }

int ProcessGroup::rank() const { return impl_->rank; }
int ProcessGroup::size() const { return impl_->size; }
int ProcessGroup::local_rank() const { return impl_->local_rank; }
int ProcessGroup::local_size() const { return impl_->local_size; }

#if GPUKIT_HAVE_MPI

namespace {

int checked_count(std::size_t bytes, const char* what) {
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error(fmt::format("{}: {} bytes exceed one MPI message", what, bytes));
  return static_cast<int>(bytes);
}

}  // namespace

MpiSession::MpiSession() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) throw InvalidInput("MPI was finalized already: a distributed solve cannot start");
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    owner_ = true;
  }
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (owner_ && !finalized) MPI_Finalize();
}

ProcessGroup ProcessGroup::mpi_world() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) throw InvalidInput("ProcessGroup::mpi_world: MPI is not initialized");
  auto impl = std::make_shared<Impl>();
  impl->mpi = true;
  MPI_Comm_dup(MPI_COMM_WORLD, &impl->comm);
  MPI_Comm_rank(impl->comm, &impl->rank);
  MPI_Comm_size(impl->comm, &impl->size);
  MPI_Comm local = MPI_COMM_NULL;
  MPI_Comm_split_type(impl->comm, MPI_COMM_TYPE_SHARED, impl->rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &impl->local_rank);
  MPI_Comm_size(local, &impl->local_size);
  MPI_Comm_free(&local);
  return ProcessGroup(std::move(impl));
}

bool ProcessGroup::uses_mpi() const { return impl_->mpi; }

const void* ProcessGroup::mpi_comm() const { return impl_->mpi ? &impl_->comm : nullptr; }

void ProcessGroup::broadcast(std::span<std::byte> bytes, int root) const {
  if (!impl_->mpi || impl_->size == 1 || bytes.empty()) return;
  MPI_Bcast(bytes.data(), checked_count(bytes.size(), "broadcast"), MPI_BYTE, root, impl_->comm);
}

std::vector<std::byte> ProcessGroup::gather(std::span<const std::byte> mine, int root,
                                            std::vector<std::int64_t>* sizes) const {
  if (!impl_->mpi || impl_->size == 1) {
    if (sizes != nullptr) *sizes = {static_cast<std::int64_t>(mine.size())};
    return {mine.begin(), mine.end()};
  }
  const int count = checked_count(mine.size(), "gather");
  std::vector<int> counts(static_cast<std::size_t>(impl_->size)), offsets(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, impl_->comm);
  std::vector<std::byte> all;
  if (impl_->rank == root) {
    std::size_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      offsets[r] = checked_count(total, "gather");
      total += static_cast<std::size_t>(counts[r]);
    }
    checked_count(total, "gather");
    all.resize(total);
    if (sizes != nullptr) sizes->assign(counts.begin(), counts.end());
  }
  MPI_Gatherv(mine.data(), count, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
              root, impl_->comm);
  return all;
}

std::vector<std::int64_t> ProcessGroup::all_gather(std::int64_t value) const {
  std::vector<std::int64_t> all(static_cast<std::size_t>(impl_->size));
  if (!impl_->mpi || impl_->size == 1) {
    all[0] = value;
    return all;
  }
  static_assert(sizeof(long long) == sizeof(std::int64_t));
  long long mine = value;
  MPI_Allgather(&mine, 1, MPI_LONG_LONG, all.data(), 1, MPI_LONG_LONG, impl_->comm);
  return all;
}

void ProcessGroup::barrier() const {
  if (impl_->mpi && impl_->size > 1) MPI_Barrier(impl_->comm);
}

void ProcessGroup::settle(std::exception_ptr failure) const {
  if (!impl_->mpi || impl_->size == 1) {
    // One process: its own exception, unchanged (a solve on one rank is the plain solve).
    if (failure) {
      g_failure_agreed = true;
      std::rethrow_exception(failure);
    }
    return;
  }
  Failure mine = describe(failure);
  const int candidate = failure ? impl_->rank : impl_->size;
  int first = impl_->size;
  MPI_Allreduce(&candidate, &first, 1, MPI_INT, MPI_MIN, impl_->comm);
  if (first == impl_->size) return;
  int header[2] = {mine.kind, checked_count(mine.message.size(), "settle")};
  MPI_Bcast(header, 2, MPI_INT, first, impl_->comm);
  mine.kind = header[0];
  mine.message.resize(static_cast<std::size_t>(header[1]));
  MPI_Bcast(mine.message.data(), header[1], MPI_CHAR, first, impl_->comm);
  throw_failure(mine, first, impl_->size);
}

#else  // without MPI: only self()

MpiSession::MpiSession() {
  throw InvalidInput(
      "this gpukit was built without MPI (install libopenmpi-dev and rebuild): it cannot run "
      "under mpirun");
}
MpiSession::~MpiSession() = default;

ProcessGroup ProcessGroup::mpi_world() {
  throw InvalidInput("this gpukit was built without MPI: no MPI process group");
}

bool ProcessGroup::uses_mpi() const { return false; }
const void* ProcessGroup::mpi_comm() const { return nullptr; }
void ProcessGroup::broadcast(std::span<std::byte>, int) const {}
std::vector<std::byte> ProcessGroup::gather(std::span<const std::byte> mine, int,
                                            std::vector<std::int64_t>* sizes) const {
  if (sizes != nullptr) *sizes = {static_cast<std::int64_t>(mine.size())};
  return {mine.begin(), mine.end()};
}
std::vector<std::int64_t> ProcessGroup::all_gather(std::int64_t value) const { return {value}; }
void ProcessGroup::barrier() const {}
void ProcessGroup::settle(std::exception_ptr failure) const {
  if (failure) {
    g_failure_agreed = true;
    std::rethrow_exception(failure);
  }
}

#endif

}  // namespace gpukit::pde::distributed
