// DeviceExchange (device_exchange.hpp) in CUDA builds: the NCCL engine (grouped ncclSend /
// ncclRecv over one clique of every part of the job) and the peer-copy engine (cudaMemcpyPeerAsync
// between the parts of one process, ordered by events).

#include "gpukit/distributed/device_exchange.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/cuda/check.hpp"
#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

#if GPUKIT_HAVE_NCCL
#include <nccl.h>

#define GPUKIT_NCCL_CHECK(call)                                                            \
  do {                                                                                     \
    const ncclResult_t gpukit_nccl_status_ = (call);                                       \
    if (gpukit_nccl_status_ != ncclSuccess)                                                \
      throw CudaError(#call, ncclGetErrorString(gpukit_nccl_status_), __FILE__, __LINE__); \
  } while (0)
#endif

namespace gpukit::distributed {

struct DeviceExchange::Impl {
  struct Part {
    int device = 0;
    StreamHandle stream = nullptr;
    cuda::Event ready, done;  // the peer-copy engine's barriers around an exchange
#if GPUKIT_HAVE_NCCL
    ncclComm_t nccl = nullptr;
#endif
  };

  Communicator* comm = nullptr;
  ExchangeEngine engine = ExchangeEngine::peer_copy;
  int parts = 0, first = 0;
  std::vector<std::unique_ptr<Part>> local;

  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  ~Impl() {
#if GPUKIT_HAVE_NCCL
    for (const auto& part : local) {
      if (part->nccl == nullptr) continue;
      cudaSetDevice(part->device);
      ncclCommDestroy(part->nccl);
    }
#endif
  }

  // The engine's rules on this rank's list (agreed by the caller).
  void check(std::span<const int> devices, std::span<const StreamHandle> streams) const {
    if (devices.size() != streams.size()) {
      throw InvalidInput(fmt::format("device exchange: {} devices but {} streams", devices.size(),
                                     streams.size()));
    }
    const int count = cuda_device_count();
    for (const int d : devices) {
      if (d < 0 || d >= count) {
        throw DeviceUnavailable(fmt::format(
            "cuda:{} is not usable ({})", d,
            count == 0 ? cuda_unavailable_reason() : fmt::format("{} CUDA devices", count)));
      }
    }
    if (engine == ExchangeEngine::peer_copy) {
      if (comm->size() > 1) {
        throw InvalidInput(
            "the peer-copy exchange runs in one process; across MPI ranks the GPUs need NCCL");
      }
      return;
    }
    if (!built_with_nccl()) throw InvalidInput("this gpukit was built without NCCL");
    for (const int d : devices) {
      if (std::count(devices.begin(), devices.end(), d) > 1) {
        throw InvalidInput(fmt::format(
            "NCCL takes each GPU once; cuda:{} is listed twice (the peer-copy exchange runs "
            "several parts on one GPU)",
            d));
      }
    }
    // More ranks on a host than its GPUs would put two NCCL ranks on one GPU, which NCCL refuses
    // only inside its collective set-up: refused here, where every rank agrees.
    const long driven = static_cast<long>(comm->local_size()) * static_cast<long>(devices.size());
    if (driven > count) {
      throw InvalidInput(fmt::format(
          "{} processes on this host drive {} GPU{} each, but the host has {}: NCCL takes each "
          "GPU once (start at most {} ranks per host)",
          comm->local_size(), devices.size(), devices.size() == 1 ? "" : "s", count,
          std::max<long>(1, count / static_cast<long>(std::max<std::size_t>(devices.size(), 1)))));
    }
  }

  // Peer copies go straight over NVLink or PCIe between GPUs that can reach each other (without
  // peer access cudaMemcpyPeerAsync stages through the host).
  void enable_peer_access() const {
    for (const auto& a : local) {
      for (const auto& b : local) {
        if (a->device == b->device) continue;
        int can = 0;
        GPUKIT_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, a->device, b->device));
        if (can == 0) continue;
        cuda::set_device(a->device);
        const cudaError_t status = cudaDeviceEnablePeerAccess(b->device, 0);
        if (status == cudaErrorPeerAccessAlreadyEnabled) {
          (void)cudaGetLastError();  // not an error: cleared so that no later check sees it
        } else {
          GPUKIT_CUDA_CHECK(status);
        }
      }
    }
  }

#if GPUKIT_HAVE_NCCL
  // One NCCL communicator per part, all parts of all ranks in one clique (NCCL ranks = parts).
  void connect() {
    ncclUniqueId id{};
    agree(*comm, [&] {
      if (comm->is_root()) GPUKIT_NCCL_CHECK(ncclGetUniqueId(&id));
    });
    comm->broadcast_value(id, 0);
    agree(*comm, [&] {
      GPUKIT_NCCL_CHECK(ncclGroupStart());
      for (std::size_t i = 0; i < local.size(); ++i) {
        cuda::set_device(local[i]->device);
        const ncclResult_t r =
            ncclCommInitRank(&local[i]->nccl, parts, id, first + static_cast<int>(i));
        if (r != ncclSuccess) {
          ncclGroupEnd();
          throw CudaError("ncclCommInitRank", ncclGetErrorString(r), __FILE__, __LINE__);
        }
      }
      GPUKIT_NCCL_CHECK(ncclGroupEnd());
    });
  }
#endif

  const DeviceReceive* receive_of(std::span<const DeviceReceive> receives, int local_part,
                                  int from) const {
    for (const DeviceReceive& r : receives) {
      if (r.local_part == local_part && r.from == from) return &r;
    }
    return nullptr;
  }

  void check_local(int local_part) const {
    if (local_part < 0 || local_part >= static_cast<int>(local.size())) {
      throw InvalidInput(
          fmt::format("device exchange: local part {} of {}", local_part, local.size()));
    }
  }

  // Blocks a part sends to itself: a copy on its stream.
  void copy_own_blocks(std::span<const DeviceSend> sends,
                       std::span<const DeviceReceive> receives) const {
    for (const DeviceSend& s : sends) {
      check_local(s.local_part);
      if (s.to != first + s.local_part || s.bytes == 0) continue;
      const DeviceReceive* r = receive_of(receives, s.local_part, s.to);
      if (r == nullptr || r->bytes != s.bytes) {
        throw InvalidInput(fmt::format(
            "device exchange: part {} sends itself {} bytes without the matching receive", s.to,
            s.bytes));
      }
      const Part& p = *local[static_cast<std::size_t>(s.local_part)];
      cuda::set_device(p.device);
      cuda::copy_device_to_device_async(r->destination, s.source, s.bytes, p.stream);
    }
  }

  void exchange_nccl([[maybe_unused]] std::span<const DeviceSend> sends,
                     [[maybe_unused]] std::span<const DeviceReceive> receives) const {
#if GPUKIT_HAVE_NCCL
    copy_own_blocks(sends, receives);
    // One group over every local part: one thread drives several GPUs.
    GPUKIT_NCCL_CHECK(ncclGroupStart());
    try {
      for (const DeviceSend& s : sends) {
        if (s.to == first + s.local_part || s.bytes == 0) continue;
        const Part& p = *local[static_cast<std::size_t>(s.local_part)];
        GPUKIT_NCCL_CHECK(ncclSend(s.source, s.bytes, ncclUint8, s.to, p.nccl, p.stream));
      }
      for (const DeviceReceive& r : receives) {
        check_local(r.local_part);
        if (r.from == first + r.local_part || r.bytes == 0) continue;
        const Part& p = *local[static_cast<std::size_t>(r.local_part)];
        GPUKIT_NCCL_CHECK(ncclRecv(r.destination, r.bytes, ncclUint8, r.from, p.nccl, p.stream));
      }
    } catch (...) {
      ncclGroupEnd();
      throw;
    }
    GPUKIT_NCCL_CHECK(ncclGroupEnd());
#endif
  }

  // Every receiver's stream waits for every part's, copies the blocks it receives, and every
  // sender waits for every receiver before it reuses its buffers.
  void exchange_peer_copy(std::span<const DeviceSend> sends,
                          std::span<const DeviceReceive> receives) const {
    for (const DeviceReceive& r : receives) check_local(r.local_part);
    for (const DeviceSend& s : sends) {
      check_local(s.local_part);
      const DeviceReceive* r =
          s.to >= 0 && s.to < parts ? receive_of(receives, s.to, s.local_part) : nullptr;
      if (s.bytes > 0 && (r == nullptr || r->bytes != s.bytes)) {
        throw InvalidInput(fmt::format(
            "device exchange: part {} sends part {} {} bytes without the matching receive",
            s.local_part, s.to, s.bytes));
      }
    }
    for (const auto& part : local) {
      cuda::set_device(part->device);
      part->ready.record(part->stream);
    }
    for (std::size_t d = 0; d < local.size(); ++d) {
      const Part& destination = *local[d];
      cuda::set_device(destination.device);
      for (const auto& source : local) {
        GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(destination.stream, source->ready.handle(), 0));
      }
      for (const DeviceSend& s : sends) {
        if (s.to != static_cast<int>(d) || s.bytes == 0) continue;
        const DeviceReceive& r = *receive_of(receives, s.to, s.local_part);
        const Part& source = *local[static_cast<std::size_t>(s.local_part)];
        GPUKIT_CUDA_CHECK(cudaMemcpyPeerAsync(r.destination, destination.device, s.source,
                                              source.device, s.bytes, destination.stream));
      }
      destination.done.record(destination.stream);
    }
    for (const auto& source : local) {
      cuda::set_device(source->device);
      for (const auto& destination : local) {
        GPUKIT_CUDA_CHECK(cudaStreamWaitEvent(source->stream, destination->done.handle(), 0));
      }
    }
  }
};

DeviceExchange::DeviceExchange(Communicator& comm, ExchangeEngine engine,
                               std::span<const int> devices, std::span<const StreamHandle> streams)
    : impl_(std::make_unique<Impl>()) {
  Impl& x = *impl_;
  x.comm = &comm;
  x.engine = engine;
  agree(comm, [&] { x.check(devices, streams); });
  const std::vector<std::int64_t> counts =
      comm.all_gather(static_cast<std::int64_t>(devices.size()));
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (static_cast<int>(r) == comm.rank()) x.first = x.parts;
    x.parts += static_cast<int>(counts[r]);
  }
  agree(comm, [&] {
    for (std::size_t i = 0; i < devices.size(); ++i) {
      auto part = std::make_unique<Impl::Part>();
      part->device = devices[i];
      part->stream = streams[i];
      cuda::set_device(part->device);
      part->ready = cuda::Event();
      part->done = cuda::Event();
      x.local.push_back(std::move(part));
    }
    if (engine == ExchangeEngine::peer_copy) x.enable_peer_access();
  });
#if GPUKIT_HAVE_NCCL
  if (engine == ExchangeEngine::nccl) x.connect();
#endif
}

void DeviceExchange::exchange(std::span<const DeviceSend> sends,
                              std::span<const DeviceReceive> receives) {
  if (impl_->engine == ExchangeEngine::nccl) {
    impl_->exchange_nccl(sends, receives);
  } else {
    impl_->exchange_peer_copy(sends, receives);
  }
}

DeviceExchange::DeviceExchange(DeviceExchange&&) noexcept = default;
DeviceExchange& DeviceExchange::operator=(DeviceExchange&&) noexcept = default;
DeviceExchange::~DeviceExchange() = default;

ExchangeEngine DeviceExchange::engine() const noexcept { return impl_->engine; }
int DeviceExchange::parts() const noexcept { return impl_->parts; }
int DeviceExchange::local_parts() const noexcept { return static_cast<int>(impl_->local.size()); }
int DeviceExchange::first_part() const noexcept { return impl_->first; }

}  // namespace gpukit::distributed
