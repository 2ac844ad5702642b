// The communicator across MPI ranks (run by CTest under `mpirun -np 1`, `-np 2` and `-np 3`;
// alone, every scenario runs as a job of one): every collective moves payloads of any size in
// pieces (shown with pieces of 7 bytes, so that payloads span many pieces and end mid-piece,
// sizes differ per rank and some are empty, and once with the default pieces above 2 GiB, one
// MPI message's int count); the failure agreement's one rule (communicator.hpp: the lowest
// failing rank's kind, class and message, " (MPI rank r of N)" for every kind but invalid input,
// std::bad_alloc as out of memory, errors unchanged in a job of one; a caller's interruption
// stays an Interrupted on every rank, each stopped rank keeping its own cause); the native handle.
//
// No assertion returns early between collectives, so a failure on one rank cannot leave the
// others waiting (CTest's timeout is the last resort).

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>

#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"

namespace gpukit::distributed {
namespace {

Communicator& comm() { return Communicator::world(); }

std::string where() {
  return "rank " + std::to_string(comm().rank()) + " of " + std::to_string(comm().size());
}

// Byte i of rank r's payload.
std::byte pattern(int r, std::size_t i) { return std::byte(static_cast<unsigned>(r * 31 + i * 7)); }

std::vector<std::byte> payload(int r, std::size_t n) {
  std::vector<std::byte> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = pattern(r, i);
  return p;
}

// Pieces of 7 bytes for the scope of a test, restored after.
struct SmallPieces {
  std::int64_t kept = comm().piece_bytes();
  SmallPieces() { comm().set_piece_bytes(7); }
  ~SmallPieces() { comm().set_piece_bytes(kept); }
};

TEST(CommunicatorMpi, BroadcastsPayloadsOfAnySizeInPieces) {
  SCOPED_TRACE(where());
  const SmallPieces pieces;
  for (const int root : {0, comm().size() - 1}) {
    for (const std::size_t n : {0, 1, 6, 7, 8, 50}) {
      SCOPED_TRACE("root " + std::to_string(root) + ", " + std::to_string(n) + " bytes");
      std::vector<std::byte> fixed =
          comm().rank() == root ? payload(root, n) : std::vector<std::byte>(n, std::byte{0});
      comm().broadcast(std::span<std::byte>(fixed), root);
      EXPECT_EQ(fixed, payload(root, n));
      std::vector<std::byte> sized = comm().rank() == root ? payload(root, n) : payload(9, 3);
      comm().broadcast(sized, root);
      EXPECT_EQ(sized, payload(root, n));
    }
    double value = comm().rank() == root ? 2.5 : -1.0;
    comm().broadcast_value(value, root);
    EXPECT_EQ(value, 2.5);
  }
}

TEST(CommunicatorMpi, GathersEveryRanksBytesAndSizesInRankOrder) {
  SCOPED_TRACE(where());
  const SmallPieces pieces;
  for (const int root : {0, comm().size() - 1}) {
    // Rank r sends 11 r + 3 bytes (rank 1 of 3 sends none: 0 bytes).
    auto size_of = [](int r) { return r == 1 ? std::size_t{0} : std::size_t(11 * r + 3); };
    std::vector<std::int64_t> sizes;
    const std::vector<std::byte> all =
        comm().gather(payload(comm().rank(), size_of(comm().rank())), root, &sizes);
    if (comm().rank() == root) {
      std::vector<std::byte> expected;
      std::vector<std::int64_t> expected_sizes;
      for (int r = 0; r < comm().size(); ++r) {
        const std::vector<std::byte> p = payload(r, size_of(r));
        expected.insert(expected.end(), p.begin(), p.end());
        expected_sizes.push_back(static_cast<std::int64_t>(p.size()));
      }
      EXPECT_EQ(all, expected);
      EXPECT_EQ(sizes, expected_sizes);
    } else {
      EXPECT_TRUE(all.empty());
    }
  }
}

TEST(CommunicatorMpi, ScattersPiecesOfAnySize) {
  SCOPED_TRACE(where());
  const SmallPieces pieces;
  const int root = comm().size() - 1;
  std::vector<std::int64_t> sizes;
  std::vector<std::byte> all;
  for (int r = 0; r < comm().size(); ++r) {
    sizes.push_back(r == 0 ? 20 : (r == 1 ? 0 : 9));
    const std::vector<std::byte> p = payload(r, static_cast<std::size_t>(sizes.back()));
    all.insert(all.end(), p.begin(), p.end());
  }
  const bool mine = comm().rank() == root;
  const std::vector<std::byte> piece = comm().scatter(
      mine ? std::span<const std::byte>(all) : std::span<const std::byte>(),
      mine ? std::span<const std::int64_t>(sizes) : std::span<const std::int64_t>(), root);
  EXPECT_EQ(piece,
            payload(comm().rank(), static_cast<std::size_t>(sizes[std::size_t(comm().rank())])));
  EXPECT_EQ(comm().all_gather(comm().rank() * 10), [] {
    std::vector<std::int64_t> v;
    for (int r = 0; r < comm().size(); ++r) v.push_back(r * 10);
    return v;
  }());
}

// The defect ProcessGroup had (the distributed Poisson solver's collectives): one message of at
// most 2 GiB, a larger payload refused as an internal error. The last rank sends 2^31 + 5 bytes.
TEST(CommunicatorMpi, GathersAPayloadAboveTwoGiB) {
  SCOPED_TRACE(where());
  const std::size_t big = (std::size_t{1} << 31) + 5;
  const bool last = comm().rank() == comm().size() - 1;
  std::vector<std::byte> mine(last ? big : 3, std::byte{7});
  if (last) mine.back() = std::byte{9};
  std::vector<std::int64_t> sizes;
  std::vector<std::byte> all;
  EXPECT_NO_THROW(all = comm().gather(mine, 0, &sizes));
  std::vector<std::byte>().swap(mine);
  if (comm().rank() == 0) {
    EXPECT_EQ(all.size(), big + 3 * static_cast<std::size_t>(comm().size() - 1));
    EXPECT_EQ(sizes.back(), static_cast<std::int64_t>(big));
    if (!all.empty()) {
      EXPECT_EQ(all.back(), std::byte{9});
    }
  }
}

// What every rank catches from agree() when `failing` ranks throw what `thrower` throws.
struct Caught {
  std::string message = "(nothing thrown)";
  int kind = -2;  // an ErrorKind, -1 for a std::exception that is not a gpukit::Error
  bool invalid_input_class = false, io_class = false, agreed = false;
  int origin = -1;
};

template <class Throw>
Caught caught(Throw&& thrower) {
  Caught c;
  try {
    agree(comm(), thrower);
  } catch (const std::exception& e) {
    c.message = e.what();
    const auto* error = dynamic_cast<const Error*>(&e);
    c.kind = error != nullptr ? static_cast<int>(error->kind()) : -1;
    c.invalid_input_class = dynamic_cast<const InvalidInput*>(&e) != nullptr;
    c.io_class = dynamic_cast<const IoError*>(&e) != nullptr;
    const auto* agreed = dynamic_cast<const Agreed*>(&e);
    c.agreed = agreed != nullptr;
    if (agreed != nullptr) c.origin = agreed->origin_rank();
  }
  return c;
}

TEST(CommunicatorMpi, OneFailureRuleForEveryKind) {
  SCOPED_TRACE(where());
  const int n = comm().size(), last = n - 1;
  const auto suffix = [&](int r) {
    return n == 1 ? std::string()
                  : " (MPI rank " + std::to_string(r) + " of " + std::to_string(n) + ")";
  };
  // Out of memory on the last rank: its kind and message, its rank named.
  Caught c = caught([&] {
    if (comm().rank() == last) throw OutOfMemory("a test failure", 1024);
  });
  EXPECT_EQ(c.kind, static_cast<int>(ErrorKind::out_of_memory));
  EXPECT_EQ(c.message, std::string(OutOfMemory("a test failure", 1024).what()) + suffix(last));
  EXPECT_EQ(c.agreed, n > 1);
  if (n > 1) {
    EXPECT_EQ(c.origin, last);
  }
  // Several ranks fail with invalid input: rank 0's, unchanged, as an InvalidInput.
  c = caught([&] { throw InvalidInput("bad input on rank " + std::to_string(comm().rank())); });
  EXPECT_EQ(c.message, "bad input on rank 0");
  EXPECT_TRUE(c.invalid_input_class);
  // An I/O error keeps its class and names its rank; the lowest failing rank wins.
  c = caught([&] {
    if (comm().rank() >= last) throw IoError("cannot write here");
  });
  EXPECT_TRUE(c.io_class);
  EXPECT_EQ(c.message, "cannot write here" + suffix(last));
  // A host allocation that failed counts as out of memory (in a job of one, it stays itself).
  c = caught([&] {
    if (comm().rank() == last) throw std::bad_alloc();
  });
  if (n > 1) {
    EXPECT_EQ(c.kind, static_cast<int>(ErrorKind::out_of_memory));
    EXPECT_EQ(c.message, "a host allocation failed" + suffix(last));
  } else {
    EXPECT_EQ(c.kind, -1);
  }
  // Any other exception: std::runtime_error with its message (a job of one: unchanged).
  c = caught([&] {
    if (comm().rank() == 0) throw std::logic_error("an internal slip");
  });
  EXPECT_EQ(c.kind, -1);
  EXPECT_EQ(c.message, "an internal slip" + suffix(0));
  // Nobody fails: nothing thrown, and the next collective still lines up.
  EXPECT_EQ(caught([] {}).message, "(nothing thrown)");
  EXPECT_EQ(comm().all_gather(1).size(), static_cast<std::size_t>(n));
}

// What every rank catches from agree() when an interruption is among the failures: whether it is
// an Interrupted (and an Agreed, of which origin), its message, and what its cause() rethrows.
struct CaughtInterruption {
  bool interrupted = false, agreed = false;
  int origin = -1;
  std::string message = "(nothing thrown)", cause = "(none)";
};

// The exception a caller means to see again (Python: its KeyboardInterrupt).
struct CallersOwn : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class Throw>
CaughtInterruption caught_interruption(Throw&& thrower) {
  CaughtInterruption c;
  try {
    agree(comm(), thrower);
  } catch (const Interrupted& e) {
    c.interrupted = true;
    c.message = e.what();
    const auto* agreed = dynamic_cast<const Agreed*>(&e);
    c.agreed = agreed != nullptr;
    if (agreed != nullptr) c.origin = agreed->origin_rank();
    if (e.cause()) {
      try {
        std::rethrow_exception(e.cause());
      } catch (const CallersOwn& own) {
        c.cause = own.what();
      } catch (...) {
        c.cause = "(another exception)";
      }
    }
  } catch (const std::exception& e) {
    c.message = e.what();
  }
  return c;
}

// A caller's cancellation (Interrupted: its progress callback threw, as Python's Ctrl-C check
// does) stays one on every rank: an Interrupted with the lowest interrupted rank's message, that
// rank named; each rank that was itself interrupted keeps its own cause (its front door rethrows
// it: Python's KeyboardInterrupt), the others get none. In a job of one, unchanged. Among other
// failures it is one kind like the others: the lowest failing rank's error wins.
TEST(CommunicatorMpi, AnInterruptionStaysOneOnEveryRankAndEachStoppedRankKeepsItsCause) {
  SCOPED_TRACE(where());
  const int n = comm().size(), last = n - 1, me = comm().rank();
  const auto suffix = [&](int r) {
    return n == 1 ? std::string()
                  : " (MPI rank " + std::to_string(r) + " of " + std::to_string(n) + ")";
  };
  const auto stop = [&](int r) {
    throw Interrupted("stopped by the caller on rank " + std::to_string(r),
                      std::make_exception_ptr(CallersOwn("Ctrl-C on rank " + std::to_string(r))));
  };
  // Only the last rank is stopped (a signal sent to one process).
  CaughtInterruption c = caught_interruption([&] {
    if (me == last) stop(me);
  });
  EXPECT_TRUE(c.interrupted) << c.message;
  EXPECT_EQ(c.message, "stopped by the caller on rank " + std::to_string(last) + suffix(last));
  EXPECT_EQ(c.agreed, n > 1);
  if (n > 1) {
    EXPECT_EQ(c.origin, last);
  }
  EXPECT_EQ(c.cause, me == last ? "Ctrl-C on rank " + std::to_string(last) : "(none)");
  // Every rank is stopped (a launcher that forwards SIGINT to each): rank 0's message, and each
  // rank its own cause.
  c = caught_interruption([&] { stop(me); });
  EXPECT_TRUE(c.interrupted) << c.message;
  EXPECT_EQ(c.message, "stopped by the caller on rank 0" + suffix(0));
  EXPECT_EQ(c.cause, "Ctrl-C on rank " + std::to_string(me));
  // A lower rank's I/O error wins over the last rank's interruption.
  if (n > 1) {
    c = caught_interruption([&] {
      if (me == 0) throw IoError("cannot write here");
      if (me == last) stop(me);
    });
    EXPECT_FALSE(c.interrupted);
    EXPECT_EQ(c.message, "cannot write here" + suffix(0));
  }
  EXPECT_EQ(comm().all_gather(1).size(), static_cast<std::size_t>(n));
}

TEST(CommunicatorMpi, NativeHandleIsTheJobsCommunicator) {
  SCOPED_TRACE(where());
  if (!started_by_mpi_launcher()) {
    EXPECT_EQ(comm().native_handle(), nullptr);
    return;
  }
  ASSERT_NE(comm().native_handle(), nullptr);
  const MPI_Comm handle = *static_cast<const MPI_Comm*>(comm().native_handle());
  int size = 0, rank = 0;
  MPI_Comm_size(handle, &size);
  MPI_Comm_rank(handle, &rank);
  EXPECT_EQ(size, comm().size());
  EXPECT_EQ(rank, comm().rank());
  // A duplicate of the world's, not the world itself: gpukit's messages stay apart.
  int compared = MPI_IDENT;
  MPI_Comm_compare(handle, MPI_COMM_WORLD, &compared);
  EXPECT_EQ(compared, MPI_CONGRUENT);
}

}  // namespace
}  // namespace gpukit::distributed

// MPI starts when mpirun started the test (and ends after the tests), as in gpukit's main().
int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const gpukit::distributed::Environment environment(argc, argv);
  return RUN_ALL_TESTS();
}
