// The CUDA engine of the distributed Poisson solver (gpukit/scale_out/poisson.hpp; the arrays are
// laid out as slab_layout.hpp says; the kernels are in poisson_slab_kernels.cu). Each part (one
// GPU, or one share of a GPU in the copy engine):
//   1. cuFFT real-to-complex along the trailing axes of a chunk of its planes (A = (rows, M, T),
//      one chunk at a time in a chunk buffer);
//   2. packs the chunk into one contiguous block per destination (the send array);
//   3. the forward transpose of that chunk: a gpukit::distributed::DeviceExchange (NCCL's grouped
//      send and receive, or peer copies within one process) lands the blocks in
//      B = (n0, columns, T), on a second stream, while steps 1-2 run on the next chunk;
//   4. once every chunk has arrived: cuFFT along axis 0 (stride columns * T), the scaling by
//      -1 / (n |k|^2), the inverse;
//   5. the inverse transpose, a chunk of each destination's planes at a time, into the packed
//      blocks, each chunk unpacked and transformed back by cuFFT complex-to-real along the
//      trailing axes while the next chunk is in flight.
// The copy engine pipelines its transposes behind the transforms in chunks (kCopyEngineChunks);
// the NCCL engine sends each whole.
// The ranks agree on their failures (a bad launch, a cuFFT error) at every chunk and synchronize
// every stream before each phase, so that a failure on one part ends every rank instead of
// leaving the others waiting inside NCCL.

#include <cuda_runtime.h>
#include <cufft.h>

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
#include "gpukit/distributed/device_exchange.hpp"
#include "gpukit/pde/cuda/detail/cufft_traits.cuh"
#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "gpukit/primitives/reduce_canonical.hpp"
#include "scale_out/cuda/poisson_slab_kernels.hpp"
#include "scale_out/poisson_engines.hpp"
#include "scale_out/slab_layout.hpp"
#include "scale_out/tile_sums.hpp"

namespace gpukit::scale_out {

namespace {

using detail::SlabLayout;
using pde::Gauge;
using pde::PoissonGrid;
using pde::PoissonOptions;
using pde::PoissonResult;
using pde::cuda_detail::Cufft;
namespace canonical = primitives::canonical;

// The chunk of data one cuFFT execution covers (at least one plane or column): bounds the work
// area cuFFT asks for, whatever the slab's size.
constexpr std::size_t kFftChunkBytes = std::size_t{1} << 30;
// Chunks of planes a transpose is cut into (fewer where a part has fewer planes) by the copy
// engine: the transforms of one chunk overlap the peer copies of the one before. On two H200s at
// 1024^3 float, 1, 2, 4, 8 and 16 chunks took 21.0, 21.9, 19.6, 19.5 and 19.5 ms: the transfers
// share the memory the transforms are bound by, so the overlap wins 7%, not the transfers'
// whole 7 ms. The NCCL engine sends each transpose whole: its kernels take multiprocessors
// from the transforms they would overlap (the same runs: 22.7 ms whole, 26.5-28.1 in chunks).
constexpr std::int64_t kCopyEngineChunks = 4;

// -------------------------------------------------------------------------------------------
// A cuFFT plan made with the 64-bit interface and no work area of its own.

class BatchedFft {
 public:
  BatchedFft() = default;
  BatchedFft(int rank, long long* n, long long* embed, long long stride, long long dist,
             cufftType type, long long batch) {
    GPUKIT_CUFFT_CHECK(cufftCreate(&handle_));
    valid_ = true;
    GPUKIT_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
    GPUKIT_CUFFT_CHECK(cufftMakePlanMany64(handle_, rank, n, embed, stride, dist, embed, stride,
                                           dist, type, batch, &work_bytes_));
  }
  BatchedFft(BatchedFft&& o) noexcept
      : handle_(o.handle_), valid_(std::exchange(o.valid_, false)), work_bytes_(o.work_bytes_) {}
  BatchedFft& operator=(BatchedFft&& o) noexcept {
    if (this != &o) {
      if (valid_) cufftDestroy(handle_);
      handle_ = o.handle_;
      valid_ = std::exchange(o.valid_, false);
      work_bytes_ = o.work_bytes_;
    }
    return *this;
  }
  BatchedFft(const BatchedFft&) = delete;
  BatchedFft& operator=(const BatchedFft&) = delete;
  ~BatchedFft() {
    if (valid_) cufftDestroy(handle_);
  }
  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return valid_ ? work_bytes_ : 0; }
  void bind(void* work, cudaStream_t stream) const {
    if (!valid_) return;
    GPUKIT_CUFFT_CHECK(cufftSetWorkArea(handle_, work));
    GPUKIT_CUFFT_CHECK(cufftSetStream(handle_, stream));
  }

 private:
  cufftHandle handle_ = 0;
  bool valid_ = false;
  std::size_t work_bytes_ = 0;
};

// A count split into chunks of `chunk` (the last one shorter): a plan for the full chunks and
// one for the rest.
struct Chunking {
  std::int64_t count = 0, chunk = 1;
  std::int64_t full() const { return count / chunk; }
  std::int64_t rest() const { return count % chunk; }
};
Chunking chunking(std::int64_t count, std::size_t bytes_each) {
  const auto fit = static_cast<std::int64_t>(kFftChunkBytes / std::max<std::size_t>(1, bytes_each));
  return {count, std::clamp<std::int64_t>(fit, 1, std::max<std::int64_t>(1, count))};
}

// -------------------------------------------------------------------------------------------

template <class Real>
class CudaSlabPoisson final : public DistributedPoissonPlan<Real>::Impl {
  using Base = typename DistributedPoissonPlan<Real>::Impl;
  using C = typename Cufft<Real>::Complex;

  // One part: its device, stream, arrays and plans.
  struct Part {
    int device = 0;
    int index = 0;  // global part index
    SlabRange rows, columns;
    std::unique_ptr<cuda::Stream> stream;
    std::unique_ptr<cuda::Stream> transfer;  // the transposes' stream, beside the transforms'
    std::unique_ptr<cuda::Event> computed, transferred;  // each stream's progress for the other
    cuda::DeviceBuffer<C> chunk;                         // A for one chunk (chunk_a)
    cuda::DeviceBuffer<C> work;                          // B (and A in one chunk)
    cuda::DeviceBuffer<C> send;                          // the packed blocks (A's size)
    cuda::DeviceBuffer<Real> slab;  // the host data path's copy of the slab, made on first use
    cuda::DeviceBuffer<std::byte> fft_work;
    cuda::DeviceBuffer<double> k2_axis0, k2_split, k2_trailing;
    cuda::DeviceBuffer<pde::detail::MeanSums> tiles;
    Chunking planes, columns_chunks;
    BatchedFft inner_r2c, inner_r2c_rest, inner_c2r, inner_c2r_rest, axis0, axis0_rest;
    Part() = default;
    Part(const Part&) = delete;
    Part& operator=(const Part&) = delete;
    ~Part() {
      // The buffers are released with their device current.
      cudaSetDevice(device);
    }
  };

 public:
  CudaSlabPoisson(const Context& context, const PoissonGrid& plan_grid,
                  const PoissonOptions& plan_options, distributed::Communicator& communicator,
                  const std::vector<int>& devices, int part_count, int first,
                  std::string_view engine_name)
      : Base(communicator), layout_(plan_grid, part_count) {
    this->grid = plan_grid;
    this->options = plan_options;
    this->engine = std::string(engine_name);
    this->parts = part_count;
    this->first_part = first;
    this->local_parts = static_cast<int>(devices.size());
    this->row_elements = plan_grid.size() / plan_grid.shape[0];
    this->host_threads = context.effective_cpu_threads();
    distributed::agree(communicator, [&] { check(); });
    distributed::agree(communicator, [&] { make_streams(devices, engine_name); });
    // The transposes' engine (collective; its rules on the device list agreed inside).
    std::vector<StreamHandle> streams;
    for (const auto& part : parts_) streams.push_back(part->transfer->handle());
    exchange_ = std::make_unique<distributed::DeviceExchange>(
        communicator,
        engine_name == kCufftNcclEngine ? distributed::ExchangeEngine::nccl
                                        : distributed::ExchangeEngine::peer_copy,
        devices, streams);
    distributed::agree(communicator, [&] { make_parts(); });
  }

  PoissonResult solve_on_device(std::span<const Real* const> f, std::span<Real* const> u) override {
    distributed::agree(*this->comm, [&] {
      if (static_cast<int>(f.size()) != this->local_parts ||
          static_cast<int>(u.size()) != this->local_parts) {
        throw InvalidInput(
            fmt::format("poisson: this process holds {} slabs; {} f and {} u were given",
                        this->local_parts, f.size(), u.size()));
      }
    });
    std::vector<detail::TileContribution> contributions(parts_.size());
    distributed::agree(*this->comm, [&] {
      // Every part's tiles queued before any is waited for: the GPUs sum at once.
      std::vector<PendingContribution> pending(parts_.size());
      for (std::size_t i = 0; i < parts_.size(); ++i)
        pending[i] = queue_contribution(*parts_[i], f[i]);
      for (std::size_t i = 0; i < parts_.size(); ++i)
        contributions[i] = finish_contribution(*parts_[i], f[i], pending[i]);
    });
    const pde::detail::MeanSums sums = detail::distributed_mean_sums(
        *this->comm,
        std::span<const detail::TileContribution>(contributions.data(), contributions.size()),
        this->grid.size());
    pde::detail::refuse_non_finite_sums(sums.total(), sums.abs_total());
    const PoissonResult result =
        pde::classify_mean<Real>(sums.total(), sums.abs_total(), this->grid.size());
    if (result.mean_removed && this->options.strict) pde::detail::throw_nonzero_mean(result);
    transform(f, u);
    if (this->options.gauge == Gauge::corner) {
      Real shift = 0;
      distributed::agree(*this->comm, [&] {
        if (this->first_part == 0) {
          cuda::set_device(parts_[0]->device);
          GPUKIT_CUDA_CHECK(cudaMemcpyAsync(&shift, u[0], sizeof(Real), cudaMemcpyDeviceToHost,
                                            parts_[0]->stream->handle()));
          parts_[0]->stream->synchronize();
        }
      });
      this->comm->broadcast_value(shift, 0);
      distributed::agree(*this->comm, [&] {
        for (std::size_t i = 0; i < parts_.size(); ++i) {
          Part& p = *parts_[i];
          const std::int64_t n = p.rows.count * this->row_elements;
          if (n == 0) continue;
          cuda::set_device(p.device);
          slab_kernels::subtract<Real>(u[i], n, shift, p.stream->handle());
        }
      });
    }
    synchronize_all();
    return result;
  }

 protected:
  void transform_host(std::span<const std::span<const Real>> f,
                      std::span<const std::span<Real>> u) override {
    std::vector<const Real*> in(parts_.size());
    std::vector<Real*> out(parts_.size());
    distributed::agree(*this->comm, [&] {
      for (std::size_t i = 0; i < parts_.size(); ++i) {
        Part& p = *parts_[i];
        cuda::set_device(p.device);
        const std::size_t n = static_cast<std::size_t>(p.rows.count * this->row_elements);
        if (p.slab.size() < n) p.slab = cuda::DeviceBuffer<Real>(n);
        if (n > 0)
          cuda::copy_to_device_async(p.slab.data(), f[i].data(), n * sizeof(Real),
                                     p.stream->handle());
        in[i] = p.slab.data();
        out[i] = p.slab.data();
      }
    });
    transform(std::span<const Real* const>(in.data(), in.size()),
              std::span<Real* const>(out.data(), out.size()));
    distributed::agree(*this->comm, [&] {
      for (std::size_t i = 0; i < parts_.size(); ++i) {
        Part& p = *parts_[i];
        cuda::set_device(p.device);
        const std::size_t n = static_cast<std::size_t>(p.rows.count * this->row_elements);
        if (n > 0)
          cuda::copy_to_host_async(u[i].data(), p.slab.data(), n * sizeof(Real),
                                   p.stream->handle());
        p.stream->synchronize();
      }
    });
  }

 private:
  // What the slab algorithm needs of the grid (the device list's rules are the exchange's).
  void check() const {
    for (int a = 0; a < this->grid.rank(); ++a) {
      if (this->grid.shape[static_cast<std::size_t>(a)] < 2) {
        throw InvalidInput(fmt::format(
            "poisson: the distributed GPU solver needs every axis of 2 or more points; axis {} "
            "of {} has 1 (solve the lower-dimensional grid)",
            a, this->grid.describe()));
      }
    }
  }

  // Each part's stream, on its device (the exchange is made on them).
  void make_streams(const std::vector<int>& devices, std::string_view engine_name) {
    const SlabLayout& L = layout_;
    for (std::size_t i = 0; i < devices.size(); ++i) {
      auto part = std::make_unique<Part>();
      Part& p = *part;
      p.device = devices[i];
      p.index = this->first_part + static_cast<int>(i);
      p.rows = L.rows(p.index);
      p.columns = L.columns(p.index);
      parts_.push_back(std::move(part));
      cuda::set_device(p.device);
      p.stream = std::make_unique<cuda::Stream>();
      p.transfer = std::make_unique<cuda::Stream>();
      p.computed = std::make_unique<cuda::Event>();
      p.transferred = std::make_unique<cuda::Event>();
    }
    // The planes' chunks, the same count for every part of the job (each chunk's transpose is
    // one collective exchange): the largest part's rows cut into kPipelineChunks, each no larger
    // than cuFFT's bounded batch.
    std::int64_t most_rows = 0;
    for (int q = 0; q < L.parts; ++q) most_rows = std::max(most_rows, L.rows(q).count);
    const std::int64_t fit =
        chunking(most_rows, static_cast<std::size_t>(L.row_complex()) * sizeof(C)).chunk;
    const std::int64_t chunks = engine_name == kCufftNcclEngine ? 1 : kCopyEngineChunks;
    chunk_rows_ = std::clamp<std::int64_t>((most_rows + chunks - 1) / chunks, 1, fit);
    chunk_count_ = (most_rows + chunk_rows_ - 1) / chunk_rows_;
  }

  // Plans first (they tell their work areas), then the memory check per device, then the
  // buffers: a grid that does not fit is refused before anything large is allocated.
  void make_parts() {
    for (const auto& part : parts_) {
      cuda::set_device(part->device);
      make_plans(*part);
    }
    std::vector<std::pair<int, std::size_t>> per_device;
    this->device_bytes.clear();
    for (const auto& part : parts_) {
      const std::size_t bytes = bytes_of(*part);
      this->device_bytes.push_back(bytes);
      auto it = std::ranges::find(per_device, part->device, &std::pair<int, std::size_t>::first);
      if (it == per_device.end()) {
        per_device.emplace_back(part->device, bytes);
      } else {
        it->second += bytes;
      }
    }
    for (const auto& [device, bytes] : per_device) {
      cuda::set_device(device);
      std::size_t free_bytes = 0, total_bytes = 0;
      GPUKIT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
      if (bytes > free_bytes) {
        throw OutOfMemory(
            fmt::format("poisson: the slabs of {} on cuda:{} need {} bytes of device "
                        "memory ({} free) over {} parts",
                        this->grid.describe(), device, bytes, free_bytes, this->parts),
            bytes);
      }
    }
    for (const auto& part : parts_) allocate(*part);
  }

  std::size_t bytes_of(const Part& p) const {
    const SlabLayout& L = layout_;
    const std::size_t work =
        std::max({p.inner_r2c.work_bytes(), p.inner_r2c_rest.work_bytes(), p.inner_c2r.work_bytes(),
                  p.inner_c2r_rest.work_bytes(), p.axis0.work_bytes(), p.axis0_rest.work_bytes()});
    const auto whole_tiles =
        static_cast<std::size_t>(p.rows.count * this->row_elements / canonical::kTile + 1);
    // (The host data path's copy of the slab comes on top, allocated on first use.)
    return static_cast<std::size_t>(work_elements(p) + L.send_elements(p.index) +
                                    chunk_elements(p)) *
               sizeof(C) +
           work + whole_tiles * sizeof(pde::detail::MeanSums) +
           static_cast<std::size_t>(L.n0 + L.m + L.t) * sizeof(double) + 4096;
  }

  void make_plans(Part& p) {
    const SlabLayout& L = layout_;
    const int rank = L.rank;
    // Trailing axes: 3D a 2D transform of (n1, n2) per plane, 2D a 1D transform of n1 per row.
    long long n_inner[2] = {L.n1, L.n2};
    if (rank == 2) n_inner[0] = L.n1;
    const int inner_rank = rank - 1;
    p.planes = Chunking{p.rows.count, chunk_rows_};
    if (p.planes.full() > 0) {
      p.inner_r2c =
          BatchedFft(inner_rank, n_inner, nullptr, 1, 0, Cufft<Real>::r2c, p.planes.chunk);
      p.inner_c2r =
          BatchedFft(inner_rank, n_inner, nullptr, 1, 0, Cufft<Real>::c2r, p.planes.chunk);
    }
    if (p.planes.rest() > 0) {
      p.inner_r2c_rest =
          BatchedFft(inner_rank, n_inner, nullptr, 1, 0, Cufft<Real>::r2c, p.planes.rest());
      p.inner_c2r_rest =
          BatchedFft(inner_rank, n_inner, nullptr, 1, 0, Cufft<Real>::c2r, p.planes.rest());
    }
    // Axis 0 of B = (n0, columns, T): stride columns * T, consecutive transforms 1 apart,
    // chunked over the columns.
    const std::int64_t row = p.columns.count * L.t;
    p.columns_chunks = chunking(p.columns.count, static_cast<std::size_t>(L.n0 * L.t) * sizeof(C));
    long long n0[1] = {L.n0};
    long long embed[1] = {L.n0};
    if (p.columns_chunks.full() > 0)
      p.axis0 = BatchedFft(1, n0, embed, row, 1, Cufft<Real>::c2c, p.columns_chunks.chunk * L.t);
    if (p.columns_chunks.rest() > 0)
      p.axis0_rest =
          BatchedFft(1, n0, embed, row, 1, Cufft<Real>::c2c, p.columns_chunks.rest() * L.t);
  }

  void allocate(Part& p) {
    const SlabLayout& L = layout_;
    cuda::set_device(p.device);
    p.chunk = cuda::DeviceBuffer<C>(
        static_cast<std::size_t>(std::max<std::int64_t>(1, chunk_elements(p))));
    p.work = cuda::DeviceBuffer<C>(
        static_cast<std::size_t>(std::max<std::int64_t>(1, work_elements(p))));
    p.send = cuda::DeviceBuffer<C>(
        static_cast<std::size_t>(std::max<std::int64_t>(1, L.send_elements(p.index))));
    const std::size_t work =
        std::max({p.inner_r2c.work_bytes(), p.inner_r2c_rest.work_bytes(), p.inner_c2r.work_bytes(),
                  p.inner_c2r_rest.work_bytes(), p.axis0.work_bytes(), p.axis0_rest.work_bytes()});
    p.fft_work = cuda::DeviceBuffer<std::byte>(std::max<std::size_t>(1, work));
    for (BatchedFft* plan : {&p.inner_r2c, &p.inner_r2c_rest, &p.inner_c2r, &p.inner_c2r_rest,
                             &p.axis0, &p.axis0_rest}) {
      plan->bind(p.fft_work.data(), p.stream->handle());
    }
    // |k|^2 per axis: axis 0 (n0), the split axis (3D: axis 1; 2D: the half axis 1) and the
    // trailing half axis (3D: axis 2; 2D: one zero).
    const auto table = pde::detail::squared_wave_numbers;
    const PoissonGrid& g = this->grid;
    const std::vector<double> k0 = table(L.n0, L.n0, g.length(0));
    const std::vector<double> km = table(L.m, L.n1, g.length(1));
    const std::vector<double> kt =
        L.rank == 3 ? table(L.t, L.n2, g.length(2)) : std::vector<double>{0.0};
    p.k2_axis0 = cuda::DeviceBuffer<double>(k0.size());
    p.k2_axis0.copy_from_host(std::span<const double>(k0.data(), k0.size()));
    p.k2_split = cuda::DeviceBuffer<double>(km.size());
    p.k2_split.copy_from_host(std::span<const double>(km.data(), km.size()));
    p.k2_trailing = cuda::DeviceBuffer<double>(kt.size());
    p.k2_trailing.copy_from_host(std::span<const double>(kt.data(), kt.size()));
    p.tiles = cuda::DeviceBuffer<pde::detail::MeanSums>(
        static_cast<std::size_t>(p.rows.count * this->row_elements / canonical::kTile + 1));
  }

  // The part's share of the mean rule's sums, from device memory: its tiles' kernel queued,
  // then (once every part's is) the results and the shared tiles' elements copied back. (A copy
  // into pageable memory waits for its stream: it would keep the next GPU from starting.)
  struct PendingContribution {
    std::int64_t offset = 0, count = 0;
    detail::TileSplit split;
  };
  PendingContribution queue_contribution(Part& p, const Real* f) {
    PendingContribution pending;
    pending.count = p.rows.count * this->row_elements;
    pending.offset = p.rows.begin * this->row_elements;
    pending.split = detail::split_tiles(pending.offset, pending.count, this->grid.size());
    cuda::set_device(p.device);
    if (pending.split.tile_count > 0) {
      slab_kernels::tile_sums<Real>(f + pending.split.head, pending.split.tile_count,
                                    pending.offset + pending.split.head, this->grid.size(),
                                    p.tiles.data(), p.stream->handle());
    }
    return pending;
  }
  detail::TileContribution finish_contribution(Part& p, const Real* f,
                                               const PendingContribution& pending) {
    const detail::TileSplit& split = pending.split;
    detail::TileContribution c;
    c.first_tile = split.first_tile;
    cuda::set_device(p.device);
    const cudaStream_t s = p.stream->handle();
    if (split.tile_count > 0) {
      c.tiles.resize(static_cast<std::size_t>(split.tile_count));
      cuda::copy_to_host_async(c.tiles.data(), p.tiles.data(),
                               c.tiles.size() * sizeof(pde::detail::MeanSums), s);
    }
    std::vector<Real> head(static_cast<std::size_t>(split.head));
    std::vector<Real> tail(static_cast<std::size_t>(pending.count - split.tail_begin));
    if (!head.empty()) cuda::copy_to_host_async(head.data(), f, head.size() * sizeof(Real), s);
    if (split.tile_count > 0 && !tail.empty())
      cuda::copy_to_host_async(tail.data(), f + split.tail_begin, tail.size() * sizeof(Real), s);
    p.stream->synchronize();
    if (!head.empty()) c.fragments.push_back({pending.offset, {head.begin(), head.end()}});
    if (split.tile_count > 0 && !tail.empty())
      c.fragments.push_back({pending.offset + split.tail_begin, {tail.begin(), tail.end()}});
    return c;
  }

  void synchronize_all() {
    distributed::agree(*this->comm, [&] {
      for (const auto& part : parts_) {
        cuda::set_device(part->device);
        part->stream->synchronize();
        part->transfer->synchronize();
      }
    });
  }

  // Rows [begin, end) of part p's planes in pipeline chunk k (empty past its last plane).
  SlabRange chunk_of(int part, std::int64_t k) const {
    const std::int64_t rows = layout_.rows(part).count;
    const std::int64_t begin = std::min(rows, k * chunk_rows_);
    return {begin, std::min(rows, begin + chunk_rows_) - begin};
  }

  // f[i] -> u[i] for every local part, the mean-gauge solution; collective. f[i] may be u[i]:
  // every plane of f is read before the first of u is written.
  void transform(std::span<const Real* const> f, std::span<Real* const> u) {
    const SlabLayout& L = layout_;
    // Forward: each chunk transformed and packed on the part's stream, then sent on its
    // transfer stream while the next chunk is transformed.
    for (std::int64_t k = 0; k < chunk_count_; ++k) {
      distributed::agree(*this->comm, [&] {
        for (std::size_t i = 0; i < parts_.size(); ++i) {
          Part& p = *parts_[i];
          const SlabRange planes = chunk_of(p.index, k);
          cuda::set_device(p.device);
          if (planes.count > 0) {
            const cudaStream_t s = p.stream->handle();
            GPUKIT_CUFFT_CHECK(Cufft<Real>::real_to_complex(
                plan_for(p, planes.count, p.inner_r2c, p.inner_r2c_rest).handle(),
                const_cast<Real*>(f[i]) + planes.begin * L.row_real(), chunk_a(p)));
            // The block for part q: columns C_q of these planes, at their rows of the block.
            for (int q = 0; q < this->parts; ++q) {
              const SlabLayout::Copy2D k2 = L.pack(p.index, q);
              slab_kernels::copy_rows<Real>(
                  p.send.data() + k2.destination_offset + planes.begin * k2.destination_pitch,
                  k2.destination_pitch, chunk_a(p) + k2.source_offset, k2.source_pitch, k2.width,
                  planes.count, s);
            }
          }
          p.computed->record(p.stream->handle());
          p.transfer->wait(p.computed->handle());
        }
      });
      exchange(/*forward=*/true, k);
    }
    for (const auto& part : parts_) wait_for_transfers(*part);
    synchronize_all();
    distributed::agree(*this->comm, [&] {
      const double inv_n = 1.0 / static_cast<double>(this->grid.size());
      for (const auto& part : parts_) {
        Part& p = *part;
        if (p.columns.count == 0) continue;
        cuda::set_device(p.device);
        const cudaStream_t s = p.stream->handle();
        auto axis0 = [&](bool forward) {
          run_chunks(p.columns_chunks, p.axis0, p.axis0_rest,
                     [&](const BatchedFft& plan, std::int64_t first) {
                       C* data = p.work.data() + first * L.t;
                       GPUKIT_CUFFT_CHECK(forward
                                              ? Cufft<Real>::forward(plan.handle(), data, data)
                                              : Cufft<Real>::inverse(plan.handle(), data, data));
                     });
        };
        axis0(true);
        slab_kernels::scale<Real>(p.work.data(), L.n0, p.columns.count, L.t, p.columns.begin,
                                  p.k2_axis0.data(), p.k2_split.data(), p.k2_trailing.data(), inv_n,
                                  s);
        axis0(false);
      }
      for (const auto& part : parts_) {
        cuda::set_device(part->device);
        part->computed->record(part->stream->handle());
        part->transfer->wait(part->computed->handle());
      }
    });
    // Inverse: chunk k of every destination's planes sent, then unpacked and transformed back on
    // the part's stream while chunk k + 1 is in flight.
    for (std::int64_t k = 0; k < chunk_count_; ++k) {
      exchange(/*forward=*/false, k);
      distributed::agree(*this->comm, [&] {
        for (std::size_t i = 0; i < parts_.size(); ++i) {
          Part& p = *parts_[i];
          cuda::set_device(p.device);
          wait_for_transfers(p);
          const SlabRange planes = chunk_of(p.index, k);
          if (planes.count == 0) continue;
          const cudaStream_t s = p.stream->handle();
          for (int q = 0; q < this->parts; ++q) {
            const SlabLayout::Copy2D k2 = L.unpack(p.index, q);
            slab_kernels::copy_rows<Real>(
                chunk_a(p) + k2.destination_offset, k2.destination_pitch,
                p.send.data() + k2.source_offset + planes.begin * k2.source_pitch, k2.source_pitch,
                k2.width, planes.count, s);
          }
          GPUKIT_CUFFT_CHECK(Cufft<Real>::complex_to_real(
              plan_for(p, planes.count, p.inner_c2r, p.inner_c2r_rest).handle(), chunk_a(p),
              u[i] + planes.begin * L.row_real()));
        }
      });
    }
    synchronize_all();
  }

  // Where a chunk of A is transformed. In one chunk (NCCL's whole transposes, or a grid of few
  // planes) the work array holds it: A is packed whole before the forward transpose lands B
  // there, and B has left before the inverse's blocks are unpacked into it. In several, B
  // arrives while later chunks are transformed, so A has a chunk buffer of its own.
  C* chunk_a(Part& p) const { return chunk_count_ == 1 ? p.work.data() : p.chunk.data(); }
  std::int64_t chunk_elements(const Part& p) const {
    return chunk_count_ == 1 ? 0 : p.planes.chunk * layout_.row_complex();
  }
  std::int64_t work_elements(const Part& p) const {
    return chunk_count_ == 1 ? layout_.work_elements(p.index) : layout_.b_elements(p.index);
  }

  // The part's stream waits for what its transfer stream has queued so far.
  static void wait_for_transfers(Part& p) {
    cuda::set_device(p.device);
    p.transferred->record(p.transfer->handle());
    p.stream->wait(p.transferred->handle());
  }

  // The trailing-axes plan for a chunk of `planes` planes (a full chunk or the last one).
  static const BatchedFft& plan_for(const Part& p, std::int64_t planes, const BatchedFft& full,
                                    const BatchedFft& rest) {
    return planes == p.planes.chunk ? full : rest;
  }

  template <class Run>
  static void run_chunks(const Chunking& c, const BatchedFft& full, const BatchedFft& rest,
                         const Run& run) {
    for (std::int64_t k = 0; k < c.full(); ++k) run(full, k * c.chunk);
    if (c.rest() > 0) run(rest, c.full() * c.chunk);
  }

  // The transposes' blocks (slab_layout.hpp: SlabLayout::block).
  using Block = SlabLayout::Block;
  Block block(int from, int to, bool forward) const { return layout_.block(from, to, forward); }
  C* source_of(Part& p, bool forward) { return forward ? p.send.data() : p.work.data(); }
  C* destination_of(Part& p, bool forward) { return forward ? p.work.data() : p.send.data(); }

  // Chunk k of one transpose: every local part sends each part the chunk's rows of its block and
  // receives theirs (slab_layout.hpp; forward, the sender's chunk of planes, inverse, the
  // receiver's), on the transfer streams; agreed, so that a failure ends every rank.
  void exchange(bool forward, std::int64_t k) {
    std::vector<distributed::DeviceSend> sends;
    std::vector<distributed::DeviceReceive> receives;
    for (std::size_t i = 0; i < parts_.size(); ++i) {
      Part& p = *parts_[i];
      for (int q = 0; q < this->parts; ++q) {
        // The rows of a block are planes of the sender (forward) or of the receiver (inverse);
        // a row of the block from `from` to `to` holds the columns of the part that owns B.
        auto piece = [&](int from, int to) {
          const Block b = block(from, to, forward);
          const SlabRange planes = chunk_of(forward ? from : to, k);
          const std::int64_t row = layout_.columns(forward ? to : from).count * layout_.t;
          return Block{b.source_offset + planes.begin * row,
                       b.destination_offset + planes.begin * row, planes.count * row};
        };
        const Block out = piece(p.index, q), in = piece(q, p.index);
        if (out.count > 0)
          sends.push_back({static_cast<int>(i), q, source_of(p, forward) + out.source_offset,
                           static_cast<std::size_t>(out.count) * sizeof(C)});
        if (in.count > 0)
          receives.push_back({static_cast<int>(i), q,
                              destination_of(p, forward) + in.destination_offset,
                              static_cast<std::size_t>(in.count) * sizeof(C)});
      }
    }
    distributed::agree(*this->comm, [&] { exchange_->exchange(sends, receives); });
  }

  SlabLayout layout_;
  std::int64_t chunk_rows_ = 1, chunk_count_ = 1;  // the planes' pipeline chunks (chunk_of)
  std::vector<std::unique_ptr<Part>> parts_;
  // After the parts: destroyed first (NCCL's communicators go while the streams exist).
  std::unique_ptr<distributed::DeviceExchange> exchange_;
};

}  // namespace

template <class Real>
std::unique_ptr<typename DistributedPoissonPlan<Real>::Impl> make_cuda_slab_poisson(
    const Context& context, const pde::PoissonGrid& grid, const pde::PoissonOptions& options,
    distributed::Communicator& comm, const std::vector<int>& devices, int parts, int first_part,
    std::string_view engine) {
  return std::make_unique<CudaSlabPoisson<Real>>(context, grid, options, comm, devices, parts,
                                                 first_part, engine);
}
template std::unique_ptr<DistributedPoissonPlan<float>::Impl> make_cuda_slab_poisson<float>(
    const Context&, const pde::PoissonGrid&, const pde::PoissonOptions&, distributed::Communicator&,
    const std::vector<int>&, int, int, std::string_view);
template std::unique_ptr<DistributedPoissonPlan<double>::Impl> make_cuda_slab_poisson<double>(
    const Context&, const pde::PoissonGrid&, const pde::PoissonOptions&, distributed::Communicator&,
    const std::vector<int>&, int, int, std::string_view);

}  // namespace gpukit::scale_out
