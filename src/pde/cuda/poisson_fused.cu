// The fused spectral Poisson solver: cuFFT R2C along the contiguous axes (2D: a batch of rows;
// 3D: a batch of axis-1/axis-2 planes) into the solver's half spectrum, one kernel for axis 0
// (forward DFT, scaling by -1/(N |k|^2), inverse DFT; poisson_fused_columns.cuh), then cuFFT
// C2R back into u.
//
// Bytes per solve (N grid points, Real of b bytes; the half spectrum holds about N/2 complex
// values = N b bytes): R2C reads N b and writes N b, the column pass reads and writes N b, C2R
// reads N b and writes N b: 6 N b for a 2D grid when cuFFT does each 1D batch in one pass (3D:
// cuFFT's 2D transforms of the planes take two passes each, 10 N b). The vendor pipeline
// (cuFFT 2D/3D R2C, a scaling pass, C2R) makes the column passes of the transforms and the
// scaling as separate passes over the half spectrum.
//
// The half spectrum is not padded: cuFFT's batched R2C/C2R with rows padded to a multiple of
// the tile (4 complex floats) measured 1.5x (4096^2) to 2.2x (8192^2) slower on the H200 than
// with the natural layout. So tiles of TC columns (TC complex values = 32 bytes for float TC=4
// / double TC=2) straddle two 32-byte sectors in most rows (neighbouring tiles, read at about
// the same time by other SMs, share them in L2), and the grid's last tile is partial.

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <cufft.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/cuda/launch_shape.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "pde/cuda/fft_radix16_block.cuh"
#include "pde/cuda/fft_radix16_cluster.cuh"
#include "pde/cuda/poisson_cuda_common.cuh"
#include "pde/cuda/poisson_device_solver.hpp"
#include "pde/cuda/poisson_fused_columns.cuh"

namespace gpukit::pde::cuda_detail {

namespace {

using fft_radix16::ComplexOf;

/// Tuning of the column pass, per precision. A column tile (TC columns x n0 rows) sits in
/// shared memory whole, in one block up to 128 KiB (+ padding), which leaves room for one block
/// per SM at n0 = 4096; smaller n0 get several blocks per SM. TC complex values per row make
/// one 32-byte sector; where one block cannot hold them (n0 = 8192), the tile is spread over
/// the blocks of a cluster (rows [h n0/P, (h + 1) n0/P) in block h) rather than narrowed: the
/// global accesses of a 16-byte tile move whole sectors for half a sector of data. Measured on
/// the H200 at 8192^2 float, column pass: TC = 2 in one block 0.554 ms against 0.510 with TC =
/// 4 over two blocks (an earlier revision); now TC = 4 over two blocks of 512 threads (one per
/// SM) 0.478, over four of 256 threads (two per SM: one works while the other waits at a
/// barrier) 0.441; float over eight of 128 threads (four per SM) 0.433 against 0.436 over four
/// (the same kernel otherwise).
template <class Real>
struct FusedPolicy {
  using Complex = typename ComplexOf<Real>::type;
  static constexpr int tile_columns = 32 / static_cast<int>(sizeof(Complex));  // 4 / 2
  static constexpr std::int64_t max_tile_bytes = 128 * 1024;
  // A tile beyond one block's max_tile_bytes goes over this many blocks (n0 = 8192, float: 32
  // KiB each, blocks of 128 threads, several per SM; double: 64 KiB each; see FusedLayout's
  // constructor).
  static constexpr int split_cluster = sizeof(Real) == 4 ? 8 : 4;
  // 2^13: a double tile over four blocks of 64 KiB (float could go further, but
  // fused_supports answers for both precisions at once).
  static constexpr int max_log2_n0 = 13;
  static constexpr int min_log2_n0 = 1;
  // A 16-point butterfly in registers: float 128 registers at 512 threads (the whole register
  // file), double about 230, so half the threads.
  static constexpr int max_threads = sizeof(Real) == 4 ? 512 : 256;
  // Over a cluster of 8 (float, n0 = 8192): two butterflies per thread in the global stages.
  static constexpr int cluster8_threads = 128;
};

/// The column kernel's launch bounds for tiles over P blocks: over a cluster of 8 (float), at
/// most 128 threads and registers for four blocks per SM (128 each, no spills). Measured at
/// 8192^2, column pass: five blocks per SM (96 registers, 68 bytes of spills) 0.453 ms, six (80
/// registers, 352 bytes) 0.633, against 0.433 with four.
template <class Real, int P>
struct ColumnLaunchBounds {
  static constexpr bool small_blocks = P == 8;
  static constexpr int max_threads =
      small_blocks ? FusedPolicy<Real>::cluster8_threads : FusedPolicy<Real>::max_threads;
  static constexpr int min_blocks = small_blocks ? 4 : 1;
};

int log2_exact(std::int64_t n) {  // -1 unless n is a power of two
  if (n <= 0 || (n & (n - 1)) != 0) return -1;
  int l = 0;
  while ((std::int64_t{1} << l) < n) ++l;
  return l;
}

/// Where the tile starts in shared memory, after the twiddle tables: rounded up to an even
/// element so that the tile is 16-byte aligned (a pair of float columns: one 16-byte access).
__host__ __device__ inline int tile_offset(int twiddle_count) { return (twiddle_count + 1) & ~1; }

/// Everything about the solver's memory and launch that follows from the shape.
template <class Real>
struct FusedLayout {
  using Complex = typename ComplexOf<Real>::type;
  int rank = 2;
  int log2_n0 = 0;
  int tile_columns = 1;
  int cluster = 1;  // blocks per tile
  std::int64_t n0 = 0, n_mid = 1, n_last = 0;
  std::int64_t pitch_last = 0;  // complex values per axis-(rank-1) line: n_last / 2 + 1
  std::int64_t columns = 0;     // complex values per axis-0 index (row pitch of the columns)
  int log2_fine = 0;
  int twiddle_count = 0;  // fine then coarse table
  int twiddle_slots = 0;  // the same, skewed in shared memory

  explicit FusedLayout(const GridShape& shape) {
    using Policy = FusedPolicy<Real>;
    rank = shape.rank;
    n0 = shape.n[0];
    log2_n0 = log2_exact(n0);
    n_mid = rank == 3 ? shape.n[1] : 1;
    n_last = shape.n[rank - 1];
    tile_columns = Policy::tile_columns;
    // n0 <= max_log2_n0 fits in split_cluster blocks; n0 >= 64 (two stages or more) can be split
    // (one stage, the pivot alone, works on whole columns).
    cluster = 1;
    if (log2_n0 >= 6 && n0 * tile_columns * std::int64_t{sizeof(Complex)} > Policy::max_tile_bytes)
      cluster = Policy::split_cluster;
    pitch_last = n_last / 2 + 1;
    columns = n_mid * pitch_last;
    const fft_radix16::TwiddleLayout twiddles = fft_radix16::TwiddleLayout::of(log2_n0);
    log2_fine = twiddles.log2_fine;
    twiddle_count = twiddles.fine_count + twiddles.coarse_count;
    twiddle_slots = twiddles.slots();
  }

  /// Threads per block: two radix-16 butterflies per thread (fewer threads, more blocks per SM:
  /// measured best from 2048^2 to 8192^2 and on 512^3), one where the grid has fewer blocks
  /// than the GPU has SMs (1024^2 floats: 129 tiles); at least a warp.
  int threads_per_block(int sm_count) const {
    const std::int64_t butterflies = n0 / cluster * tile_columns / 16;
    const std::int64_t per_thread = blocks() < sm_count ? 1 : 2;
    const int max_threads =
        cluster == 8 ? FusedPolicy<Real>::cluster8_threads : FusedPolicy<Real>::max_threads;
    return static_cast<int>(std::clamp<std::int64_t>(butterflies / per_thread, 32, max_threads));
  }
  std::int64_t spectrum_elements() const { return n0 * columns; }
  std::size_t spectrum_bytes() const { return spectrum_elements() * sizeof(Complex); }
  std::size_t twiddle_bytes() const { return twiddle_count * sizeof(Complex); }
  std::size_t shared_bytes() const {
    const std::int64_t rows = n0 / cluster;
    const int log2_pad = fft_radix16::transform_shape(log2_n0).log2_pad();
    const std::int64_t tile = (rows + (rows >> log2_pad)) * tile_columns;
    return (tile_offset(twiddle_slots) + tile) * sizeof(Complex);
  }
  std::int64_t tiles() const { return (columns + tile_columns - 1) / tile_columns; }
  std::int64_t blocks() const { return tiles() * cluster; }
};

/// The cuFFT layouts of the row transforms: 2D a batch of n0 1D transforms of n_last, 3D a
/// batch of n0 2D transforms of n_mid x n_last; the complex side has rows of pitch_last.
struct RowTransformLayout {
  int rank = 1;
  long long n[2] = {0, 0};
  long long real_embed[2] = {0, 0};
  long long complex_embed[2] = {0, 0};
  long long real_distance = 0, complex_distance = 0, batch = 0;
};

template <class Real>
RowTransformLayout row_transform_layout(const FusedLayout<Real>& layout) {
  RowTransformLayout r;
  r.batch = layout.n0;
  if (layout.rank == 2) {
    r.rank = 1;
    r.n[0] = layout.n_last;
    r.real_embed[0] = layout.n_last;
    r.complex_embed[0] = layout.pitch_last;
  } else {
    r.rank = 2;
    r.n[0] = layout.n_mid;
    r.n[1] = layout.n_last;
    r.real_embed[0] = layout.n_mid;
    r.real_embed[1] = layout.n_last;
    r.complex_embed[0] = layout.n_mid;
    r.complex_embed[1] = layout.pitch_last;
  }
  r.real_distance = layout.n_mid * layout.n_last;
  r.complex_distance = layout.columns;
  return r;
}

template <class Real>
constexpr cufftType r2c_type = sizeof(Real) == 4 ? CUFFT_R2C : CUFFT_D2Z;
template <class Real>
constexpr cufftType c2r_type = sizeof(Real) == 4 ? CUFFT_C2R : CUFFT_Z2D;

/// The work area cuFFT would want for both row transforms, asked without making plans.
template <class Real>
std::size_t row_transform_work_estimate(const FusedLayout<Real>& layout) {
  const RowTransformLayout r = row_transform_layout(layout);
  int n[2], real_embed[2], complex_embed[2];
  for (int i = 0; i < 2; ++i) {
    n[i] = static_cast<int>(r.n[i]);
    real_embed[i] = static_cast<int>(r.real_embed[i]);
    complex_embed[i] = static_cast<int>(r.complex_embed[i]);
  }
  std::size_t forward = 0, inverse = 0;
  GPUKIT_CUFFT_CHECK(cufftEstimateMany(r.rank, n, real_embed, 1, static_cast<int>(r.real_distance),
                                       complex_embed, 1, static_cast<int>(r.complex_distance),
                                       r2c_type<Real>, static_cast<int>(r.batch), &forward));
  GPUKIT_CUFFT_CHECK(cufftEstimateMany(
      r.rank, n, complex_embed, 1, static_cast<int>(r.complex_distance), real_embed, 1,
      static_cast<int>(r.real_distance), c2r_type<Real>, static_cast<int>(r.batch), &inverse));
  return std::max(forward, inverse);
}

template <class Real>
struct ColumnPassParams {
  using Complex = typename ComplexOf<Real>::type;
  Complex* spectrum;
  std::int64_t pitch;       // columns of the half spectrum
  const Complex* twiddles;  // fine table then coarse table (fft_radix16::TwiddleLayout)
  fft_radix16::TransformShape shape;
  fused::ScalingParams<Real> scaling;
};

/// The two halves of a cluster barrier (cooperative_groups' cluster.sync() is both, with
/// release semantics).
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
}

/// Waits for phase 0 of the block's mbarrier at `bar` (a shared::cta address).
__device__ __forceinline__ void mbarrier_wait_first_phase(std::uint32_t bar) {
  std::uint32_t done = 0;
  do {
    asm volatile(
        "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
        "selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar)
        : "memory");
  } while (done == 0);
}

/// The address of the same shared memory location in block `rank` of the cluster.
__device__ __forceinline__ std::uint32_t cluster_address(std::uint32_t shared, int rank) {
  std::uint32_t mapped;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(mapped) : "r"(shared), "r"(rank));
  return mapped;
}

/// The tile over a cluster as the first stage's destination (the places of fft_radix16::SplitTile):
/// each store is an st.async into the owning block's shared memory that counts its bytes on
/// that block's mbarrier. A block then waits only until its own part has all its bytes, where
/// a cluster barrier's release would first wait for all of its own remote stores to complete.
template <class C, int TC, int P>
struct AsyncSplitTile {
  static_assert(P == 2 || P == 4 || P == 8);
  static constexpr int places_per_part = 16 / P;
  std::uint32_t part[P];     // shared::cluster addresses of the parts
  std::uint32_t arrival[P];  // and of their mbarriers
  int log2_pad;

  struct AsyncLine {
    std::uint32_t at[P];  // place 0's byte address in each part
    std::uint32_t arrival[P];
    std::uint32_t stride;  // bytes between places
    __device__ __forceinline__ void store(int m, C value) const {
      const int h = m / places_per_part;
      const std::uint32_t address = at[h] + (m % places_per_part) * stride;
      if constexpr (sizeof(C) == 8) {
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];"
            :
            : "r"(address), "f"(value.x), "f"(value.y), "r"(arrival[h])
            : "memory");
      } else {
        asm volatile(
            "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f64 [%0], {%1, %2}, [%3];"
            :
            : "r"(address), "d"(value.x), "d"(value.y), "r"(arrival[h])
            : "memory");
      }
    }
  };
  /// The first stage's butterfly: rows row0 + m n0/16 (row0 < n0/16), as SplitTile::line.
  __device__ __forceinline__ AsyncLine line(int row0, int log2_s, int c) const {
    const int s = 1 << log2_s;
    const std::uint32_t offset = ((row0 + (row0 >> log2_pad)) * TC + c) * sizeof(C);
    AsyncLine line;
    line.stride = (s + (s >> log2_pad)) * TC * sizeof(C);
    GPUKIT_FFT_UNROLL
    for (int h = 0; h < P; ++h) {
      line.at[h] = part[h] + offset;
      line.arrival[h] = arrival[h];
    }
    return line;
  }
};

/// One tile per cluster of P blocks (P = 1: a plain launch).
template <class Real, int TC, int P>
__global__ void __launch_bounds__(ColumnLaunchBounds<Real, P>::max_threads,
                                  ColumnLaunchBounds<Real, P>::min_blocks)
    fused_columns_kernel(ColumnPassParams<Real> params) {
  using Complex = typename ComplexOf<Real>::type;
  extern __shared__ __align__(16) unsigned char shared_bytes[];
  const fft_radix16::TwiddleLayout twiddle_layout =
      fft_radix16::TwiddleLayout::of(params.shape.log2_n);
  Complex* twiddle_slots = reinterpret_cast<Complex*>(shared_bytes);
  // Over a cluster, the first stage writes into the other blocks' shared memory, so they must
  // have started: arrive now, wait before the first stage (the twiddle tables' loads overlap
  // the other blocks' start). The mbarrier counts the bytes that the first stage writes into
  // this block's part, initialized before this block's arrive.
  __shared__ alignas(8) std::uint64_t part_arrival;
  const auto part_arrival_address =
      static_cast<std::uint32_t>(__cvta_generic_to_shared(&part_arrival));
  if constexpr (P > 1) {
    if (threadIdx.x == 0) {
      const std::uint32_t part_bytes =
          (std::uint32_t{1} << (params.shape.log2_n - std::countr_zero(unsigned{P}))) * TC *
          sizeof(Complex);
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(part_arrival_address) : "memory");
      asm volatile(
          "{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}" ::
              "r"(part_arrival_address),
          "r"(part_bytes)
          : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_arrive_relaxed();
  }
  fft_radix16::place_twiddles(params.twiddles, twiddle_slots, twiddle_layout,
                              static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x));
  Complex* own_part = twiddle_slots + tile_offset(twiddle_layout.slots());

  const std::int64_t first_column = std::int64_t{blockIdx.x / P} * TC;
  fused::ScalingParams<Real> scaling = params.scaling;
  scaling.first_column = first_column;
  fft_radix16::SplitTile<Complex, TC, P> tile{};
  tile.log2_rows_per_part = params.shape.log2_n - std::countr_zero(unsigned{P});
  tile.log2_pad = params.shape.log2_pad();
  int part = 0;
  if constexpr (P == 1) {
    tile.part[0] = own_part;
  } else {
    const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    part = static_cast<int>(cluster.block_rank());
    for (int h = 0; h < P; ++h)
      tile.part[h] = h == part ? own_part : cluster.map_shared_rank(own_part, h);
  }
  const fused::ColumnTileSolver<TC, P, Real> solver{
      fft_radix16::GlobalTile<Complex, TC>{
          params.spectrum + first_column, params.pitch,
          params.pitch - first_column < TC ? static_cast<int>(params.pitch - first_column) : TC},
      tile,
      own_part,
      params.shape,
      fft_radix16::Twiddles<Complex>{twiddle_slots, twiddle_slots + twiddle_layout.fine_slots(),
                                     twiddle_layout.log2_fine},
      scaling,
      part,
      static_cast<int>(threadIdx.x),
      static_cast<int>(blockDim.x)};
  // Before the last stage, which reads the other blocks' parts: every block's local-stage
  // stores to its own part must be visible across the cluster. Only those stores need a release
  // (no block has read another's part since the first stage), so a fence restricted to
  // shared::cta replaces cluster.sync()'s release, which compiles to a GPU-wide MEMBAR that
  // also waits for nothing this barrier protects.
  const auto tile_barrier = [] {
    if constexpr (P == 1) {
      __syncthreads();
    } else {
      asm volatile("fence.release.sync_restrict::shared::cta.cluster;" ::: "memory");
      cluster_arrive_relaxed();
      cluster_wait();
    }
  };
  if (params.shape.stages == 1) {  // (P = 1) no twiddles
    solver.pivot_only();
    return;
  }
  if constexpr (P == 1) {
    __syncthreads();  // the twiddles placed
    solver.first_stage();
  } else {
    // The twiddles placed and the other blocks started (their shared memory exists) before
    // the first stage. (Waiting only after the first butterfly's loads, so that they overlap
    // the other blocks' start, measured no faster: column pass 0.3771-0.3797 ms against
    // 0.3780-0.3783 at 8192^2, solve 0.6623-0.6631 against 0.6602-0.6614.)
    AsyncSplitTile<Complex, TC, P> async_tile{};
    async_tile.log2_pad = tile.log2_pad;
    const auto own_address = static_cast<std::uint32_t>(__cvta_generic_to_shared(own_part));
    for (int h = 0; h < P; ++h) {
      async_tile.part[h] = cluster_address(own_address, h);
      async_tile.arrival[h] = cluster_address(part_arrival_address, h);
    }
    __syncthreads();
    cluster_wait();
    solver.first_stage_into(async_tile);
    // This block's part complete (every byte of it has landed): no cluster barrier.
    mbarrier_wait_first_phase(part_arrival_address);
  }
  if constexpr (P == 1) __syncthreads();
  solver.local_stages([] { __syncthreads(); });
  tile_barrier();
  solver.last_stage();
  // No block leaves while another still reads its part. Those reads are complete once their
  // values were used, all before the arrive in program order, so the arrive needs no release
  // (which would also wait for this block's global stores).
  if constexpr (P > 1) {
    cluster_arrive_relaxed();
    cluster_wait();
    if (threadIdx.x == 0)  // (its memory is the next block's)
      asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(part_arrival_address) : "memory");
  }
}

template <class Real>
using ColumnKernel = void (*)(ColumnPassParams<Real>);

template <class Real>
ColumnKernel<Real> column_kernel(int cluster) {
  constexpr int tile_columns = FusedPolicy<Real>::tile_columns;
  switch (cluster) {
    case 8:
      if constexpr (FusedPolicy<Real>::split_cluster == 8)
        return fused_columns_kernel<Real, tile_columns, 8>;
      else
        throw InvalidInput("fused Poisson solver: no cluster of 8 blocks in this precision");
    case 4:
      return fused_columns_kernel<Real, tile_columns, 4>;
    case 2:
      return fused_columns_kernel<Real, tile_columns, 2>;
    default:
      return fused_columns_kernel<Real, tile_columns, 1>;
  }
}

/// exp(-2 pi i t / n0) for the fine (t < 2^log2_fine) and coarse (t = s 2^log2_fine) tables.
template <class Real>
std::vector<typename ComplexOf<Real>::type> twiddle_tables(const FusedLayout<Real>& layout) {
  std::vector<typename ComplexOf<Real>::type> table;
  table.reserve(layout.twiddle_count);
  std::vector<std::int64_t> exponents;  // t of each entry: exp(-2 pi i t / n0)
  for (std::int64_t t = 0; t < (std::int64_t{1} << layout.log2_fine); ++t) exponents.push_back(t);
  for (std::int64_t s = 0; s < (layout.n0 >> layout.log2_fine); ++s)
    exponents.push_back(s << layout.log2_fine);
  for (const std::int64_t t : exponents) {
    const long double angle = -2.0L * std::numbers::pi_v<long double> *
                              static_cast<long double>(t) / static_cast<long double>(layout.n0);
    table.push_back({static_cast<Real>(std::cos(angle)), static_cast<Real>(std::sin(angle))});
  }
  return table;
}

/// A cuFFT plan made with the solver's work area (no allocation of its own).
class RowPlan {
 public:
  RowPlan(const RowTransformLayout& r, cufftType type, bool real_to_complex) {
    GPUKIT_CUFFT_CHECK(cufftCreate(&handle_));
    try {
      GPUKIT_CUFFT_CHECK(cufftSetAutoAllocation(handle_, 0));
      long long n[2] = {r.n[0], r.n[1]};
      long long in_embed[2], out_embed[2];
      for (int i = 0; i < 2; ++i) {
        in_embed[i] = real_to_complex ? r.real_embed[i] : r.complex_embed[i];
        out_embed[i] = real_to_complex ? r.complex_embed[i] : r.real_embed[i];
      }
      const long long in_distance = real_to_complex ? r.real_distance : r.complex_distance;
      const long long out_distance = real_to_complex ? r.complex_distance : r.real_distance;
      GPUKIT_CUFFT_CHECK(cufftMakePlanMany64(handle_, r.rank, n, in_embed, 1, in_distance,
                                             out_embed, 1, out_distance, type, r.batch,
                                             &work_bytes_));
    } catch (...) {
      cufftDestroy(handle_);
      throw;
    }
  }
  RowPlan(const RowPlan&) = delete;
  RowPlan& operator=(const RowPlan&) = delete;
  ~RowPlan() { cufftDestroy(handle_); }
  cufftHandle handle() const { return handle_; }
  std::size_t work_bytes() const { return work_bytes_; }

 private:
  cufftHandle handle_ = 0;
  std::size_t work_bytes_ = 0;
};

template <class Real>
class FusedSolver final : public DeviceSolver<Real> {
 public:
  using Complex = typename ComplexOf<Real>::type;

  explicit FusedSolver(const GridShape& shape)
      : layout_(shape),
        threads_(layout_.threads_per_block(cuda::detail::current_sm_count())),
        forward_(row_transform_layout(layout_), r2c_type<Real>, true),
        inverse_(row_transform_layout(layout_), c2r_type<Real>, false),
        spectrum_(layout_.spectrum_elements()),
        twiddles_(layout_.twiddle_count),
        work_area_(std::max(forward_.work_bytes(), inverse_.work_bytes())) {
    GPUKIT_CUFFT_CHECK(cufftSetWorkArea(forward_.handle(), work_area_.data()));
    GPUKIT_CUFFT_CHECK(cufftSetWorkArea(inverse_.handle(), work_area_.data()));
    const auto table = twiddle_tables(layout_);
    twiddles_.copy_from_host(table);
    kernel_ = column_kernel<Real>(layout_.cluster);
    GPUKIT_CUDA_CHECK(cudaFuncSetAttribute(kernel_, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                           static_cast<int>(layout_.shared_bytes())));

    params_.spectrum = spectrum_.data();
    params_.pitch = layout_.columns;
    params_.twiddles = twiddles_.data();
    params_.shape = fft_radix16::transform_shape(layout_.log2_n0);
    auto& s = params_.scaling;
    s.first_column = 0;
    s.pitch_last = static_cast<int>(layout_.pitch_last);
    s.n_mid = static_cast<int>(layout_.n_mid);
    const double two_pi = 2 * std::numbers::pi;
    s.k_unit[0] = static_cast<Real>(two_pi / shape.length[0]);
    s.k_unit[1] = shape.rank == 3 ? static_cast<Real>(two_pi / shape.length[1]) : Real(0);
    s.k_unit[2] = static_cast<Real>(two_pi / shape.length[shape.rank - 1]);
    s.minus_size = static_cast<Real>(-static_cast<double>(shape.size()));
  }

  void solve(const Real* f, Real* u, StreamHandle stream) override {
    forward_rows(f, stream);
    columns(stream);
    inverse_rows(u, stream);
  }

  // The three passes, public for the benchmark that times them one by one.
  void forward_rows(const Real* f, cudaStream_t stream) {
    GPUKIT_CUFFT_CHECK(cufftSetStream(forward_.handle(), stream));
    // cuFFT's out-of-place R2C leaves its input untouched, so f may be const (and may be u).
    auto* in = const_cast<Real*>(f);
    if constexpr (sizeof(Real) == 4) {
      GPUKIT_CUFFT_CHECK(cufftExecR2C(forward_.handle(), in, spectrum_.data()));
    } else {
      GPUKIT_CUFFT_CHECK(cufftExecD2Z(forward_.handle(), in, spectrum_.data()));
    }
  }
  void columns(cudaStream_t stream) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(static_cast<unsigned>(layout_.blocks()));
    config.blockDim = dim3(static_cast<unsigned>(threads_));
    config.dynamicSmemBytes = layout_.shared_bytes();
    config.stream = stream;
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(layout_.cluster);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    GPUKIT_CUDA_CHECK(cudaLaunchKernelEx(&config, kernel_, params_));
  }
  void inverse_rows(Real* u, cudaStream_t stream) {
    GPUKIT_CUFFT_CHECK(cufftSetStream(inverse_.handle(), stream));
    if constexpr (sizeof(Real) == 4) {
      GPUKIT_CUFFT_CHECK(cufftExecC2R(inverse_.handle(), spectrum_.data(), u));
    } else {
      GPUKIT_CUFFT_CHECK(cufftExecZ2D(inverse_.handle(), spectrum_.data(), u));
    }
  }

 private:
  FusedLayout<Real> layout_;
  int threads_;
  RowPlan forward_;
  RowPlan inverse_;
  cuda::DeviceBuffer<Complex> spectrum_;
  cuda::DeviceBuffer<Complex> twiddles_;
  cuda::DeviceBuffer<unsigned char> work_area_;
  ColumnKernel<Real> kernel_ = nullptr;
  ColumnPassParams<Real> params_{};
};

template <class Real>
bool fused_supports_as(const GridShape& shape) {
  using Policy = FusedPolicy<Real>;
  constexpr std::int64_t limit = std::numeric_limits<int>::max();
  if (shape.rank != 2 && shape.rank != 3) return false;
  std::int64_t size = 1;
  for (int a = 0; a < shape.rank; ++a) {
    if (shape.n[a] < 2) return false;  // a flat axis: the other variants drop it
    if (!(shape.length[a] > 0) || !std::isfinite(shape.length[a])) return false;
    if (shape.n[a] >= limit / size) return false;  // (no overflow on the way)
    size *= shape.n[a];
  }
  const int log2_n0 = log2_exact(shape.n[0]);
  if (log2_n0 < Policy::min_log2_n0 || log2_n0 > Policy::max_log2_n0) return false;
  // cuFFT's transforms (made through the 64-bit API, but estimated through the 32-bit one) and
  // the kernel's row indices in 32 bits: the real grid and the half spectrum below 2^31 elements.
  const FusedLayout<Real> layout(shape);
  return layout.spectrum_elements() < limit;
}

}  // namespace

bool fused_supports(const GridShape& shape) {
  // The same shapes in both precisions (every limit is a count of elements).
  return fused_supports_as<double>(shape);
}

template <class Real>
std::size_t fused_device_bytes(const GridShape& shape) {
  if (!fused_supports_as<Real>(shape))
    throw InvalidInput("fused Poisson solver: unsupported grid shape");
  const FusedLayout<Real> layout(shape);
  return layout.spectrum_bytes() + layout.twiddle_bytes() + row_transform_work_estimate(layout);
}

template <class Real>
std::unique_ptr<DeviceSolver<Real>> make_fused_solver(const GridShape& shape) {
  if (!fused_supports_as<Real>(shape))
    throw InvalidInput("fused Poisson solver: unsupported grid shape");
  return std::make_unique<FusedSolver<Real>>(shape);
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, PoissonDeviceBytes, fused_device_bytes)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, MakePoissonSolver, make_fused_solver)

}  // namespace gpukit::pde::cuda_detail
