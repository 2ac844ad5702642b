#pragma once
// GPU-to-GPU exchanges among the parts of a job: one part per GPU entry of each rank's device
// list, numbered across the job in rank order (rank 0's parts first) and within a rank in the
// order of its list. Each part sends blocks of device memory to other parts and receives theirs,
// all at once: the all-to-all transposes of the distributed Poisson solver
// (gpukit/scale_out/poisson.hpp) are two such exchanges a solve.
//
// Two engines, one interface:
//   - NCCL (built_with_nccl()): one NCCL communicator per part, all parts of all ranks in one
//     clique (ncclGetUniqueId on rank 0, broadcast by the Communicator, ncclCommInitRank per part
//     in one group), and each exchange one NCCL group of ncclSend/ncclRecv over every local part
//     (one thread drives all its GPUs). NCCL takes each GPU once in the job: a GPU listed twice,
//     or more ranks on a host than GPUs for their lists, is refused.
//   - peer copies: a job of one process; each block is a cudaMemcpyPeerAsync on the receiving
//     part's stream, after every part's stream has reached the exchange (events), and every part
//     waits for every receiver before it reuses its buffers. Parts may share a GPU (cuda:0,0), so
//     a single-GPU machine runs the whole exchange.
// Blocks a part sends to itself are device-to-device copies on its stream in both engines.
//
// Plain C++: streams are gpukit::StreamHandle, sizes are bytes, devices CUDA ordinals; no CUDA or
// NCCL header leaks out. Built without CUDA, constructing one throws DeviceUnavailable. Tested by
// the distributed Poisson solver's GPU tests (tests/scale_out/poisson_gpu_test.cpp: the copy
// engine with several parts on one GPU; poisson_multigpu_test.cpp: NCCL across GPUs, bit for bit
// the copy engine).

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/distributed/communicator.hpp"

namespace gpukit::distributed {

enum class ExchangeEngine { nccl, peer_copy };

/// "nccl" or "peer-copy".
std::string_view exchange_engine_name(ExchangeEngine engine) noexcept;

/// A block a local part sends: `bytes` at `source` (device memory of that part's GPU) to part
/// `to` (a global part index, possibly the sender itself).
struct DeviceSend {
  int local_part = 0;
  int to = 0;
  const void* source = nullptr;
  std::size_t bytes = 0;
};
/// A block a local part receives from part `from` into `destination` (its GPU's memory).
struct DeviceReceive {
  int local_part = 0;
  int from = 0;
  void* destination = nullptr;
  std::size_t bytes = 0;
};

/// The parts of a job and the engine that moves blocks between them. Made once (collectively),
/// used for many exchanges; not used by two threads at once.
class DeviceExchange {
 public:
  /// Collective over `comm`. `devices`: this rank's parts' CUDA ordinals, in part order;
  /// `streams`: each part's stream (created on its device; it must outlive the exchange's use).
  /// Throws on every rank alike (agreed): InvalidInput for a list the engine refuses (above), or
  /// the peer-copy engine across several ranks; DeviceUnavailable for an ordinal that is not a
  /// usable GPU, or a build without CUDA; CudaError when NCCL or CUDA fails.
  DeviceExchange(Communicator& comm, ExchangeEngine engine, std::span<const int> devices,
                 std::span<const StreamHandle> streams);
  DeviceExchange(DeviceExchange&&) noexcept;
  DeviceExchange& operator=(DeviceExchange&&) noexcept;
  ~DeviceExchange();

  ExchangeEngine engine() const noexcept;
  /// Parts over the job, this rank's parts, and the global index of its first.
  int parts() const noexcept;
  int local_parts() const noexcept;
  int first_part() const noexcept;

  /// Queues one exchange on the parts' streams and returns: every send meets the receive of the
  /// same (sender, receiver) pair with the same byte count (at most one block per pair and
  /// direction), which every rank passes for its own parts; zero-byte blocks may be left out.
  /// Work queued on a part's stream before the call is complete before its blocks leave; work
  /// queued after it runs once its blocks have arrived. Collective: every rank calls it, the
  /// same number of times, with the other ranks' matching blocks. Not agreed: throws CudaError
  /// (or InvalidInput for a send without its receive, peer-copy) on the rank that met it; a
  /// caller agrees before its next collective.
  void exchange(std::span<const DeviceSend> sends, std::span<const DeviceReceive> receives);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpukit::distributed
