#pragma once
// Internal: the column pass of the fused Poisson solver (poisson_fused.cu). For a tile of TC
// adjacent columns of the half spectrum (a column: the n0 entries along axis 0 with the other
// indices fixed), it does the forward DFT along axis 0, the Poisson scaling and the inverse DFT
// along axis 0, with one read and one write of the tile in global memory.
//
// The DFTs are the radix-16 FFT of fft_radix16_block.cuh, whose forward output is left in
// digit-reversed order: the scaling knows each position's frequency, and the last forward stage,
// the scaling and the first inverse stage (the same butterflies) are one pass in registers
// ("pivot"). The first forward stage reads global memory and the last inverse stage writes it;
// the stages between go through shared memory. The tile may be spread over the shared memory of
// a cluster of 2, 4 or 8 blocks (ColumnTileSolver, fft_radix16_cluster.cuh): only the first and
// last stages then reach into the other blocks.
//
// Everything here is __host__ __device__ so that the CPU test runs the very same code (one
// "thread" doing all butterflies, barriers empty) against a direct DFT.

#include "pde/cuda/fft_radix16_block.cuh"
#include "pde/cuda/fft_radix16_cluster.cuh"

namespace gpukit::pde::cuda_detail::fused {

using fft_radix16::columns_per_thread_in_shared;
using fft_radix16::ComplexOf;
using fft_radix16::dft;
using fft_radix16::frequency_of_position;
using fft_radix16::GlobalTile;
using fft_radix16::radix16_groups;
using fft_radix16::run_radix16_stage;
using fft_radix16::SharedTile;
using fft_radix16::SplitTile;
using fft_radix16::TransformShape;
using fft_radix16::Twiddles;
using fft_radix16::Work;

/// What the scaling needs to know about a tile: the wave numbers and -1/N.
template <class Real>
struct ScalingParams {
  std::int64_t first_column;  // global index of the tile's column 0
  int pitch_last;             // columns per axis-1 index (3D: the padded half length of axis 2)
  int n_mid;                  // 3D: n1; 2D: 1
  Real k_unit[3];             // 2 pi / length[a]; k_unit[1] = 0 in 2D
  Real minus_size;            // -n0 n1 [n2]: cuFFT's transforms are unnormalized
};

/// 1 / x for the scaling. Float on the GPU: the hardware reciprocal (max. 2 ulp; a factor
/// below float's normal range, |x| > 2^126, becomes 0), one or two instructions instead of the
/// IEEE division's eight and a branch, once per value in the pivot; the FFTs around it round
/// far more (tolerance: ~eps log2 n).
template <class Real>
__host__ __device__ __forceinline__ Real reciprocal(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<Real, float>) return __fdividef(1.0f, x);
#endif
  return Real(1) / x;
}

/// The pivot: the last forward stage (S = 1, no twiddles), the scaling by -1/(N |k|^2) and the
/// first inverse stage, in registers, one column's butterfly of radix R per thread at a time.
/// The butterflies are in the order of their rows, then of the columns, so those of a block's
/// rows are a contiguous range: `part` of `parts` of them.
template <int R, int TC, class Real, class Src, class Dst>
__host__ __device__ __forceinline__ void run_pivot(const Src& src, const Dst& dst,
                                                   TransformShape shape,
                                                   const ScalingParams<Real>& scaling, int part,
                                                   int parts, int thread, int threads) {
  using C = typename ComplexOf<Real>::type;
  const int butterflies = (1 << shape.log2_n) / R * TC / parts;
  const int log2_r = R == 32 ? 5 : R == 16 ? 4 : R == 8 ? 3 : R == 4 ? 2 : 1;
  const int begin = part * butterflies;
  for (int b = begin + thread; b < begin + butterflies; b += threads) {
    const int c = b % TC;
    const int row0 = (b / TC) << log2_r;
    const auto in = src.line(row0, 0, c);
    C v[R];
    GPUKIT_FFT_UNROLL
    for (int m = 0; m < R; ++m) v[m] = in.load(m);
    dft<R, false>(v);
    // The other axes' wave numbers of this column (m = i for i <= n/2, i - n above). Column
    // indices are below 2^31 (fused_supports): a 32-bit division, not a 64-bit one.
    const int column = static_cast<int>(scaling.first_column) + c;
    const int i_mid = column / scaling.pitch_last;
    const int i_last = column - i_mid * scaling.pitch_last;
    const int m_mid = i_mid <= scaling.n_mid / 2 ? i_mid : i_mid - scaling.n_mid;
    const Real k_mid = scaling.k_unit[1] * Real(m_mid);
    const Real k_last = scaling.k_unit[2] * Real(i_last);
    const Real k_rest_squared = k_mid * k_mid + k_last * k_last;
    // factor = -1 / (N (k_unit0^2 m0^2 + k_rest^2)) = 1 / (a m0^2 + b): per value an exact
    // integer square, a conversion, one FFMA and one reciprocal.
    const Real a_first = scaling.k_unit[0] * scaling.k_unit[0] * scaling.minus_size;
    const Real b_rest = k_rest_squared * scaling.minus_size;
    const int n0 = 1 << shape.log2_n;
    // row0 + q differs from row0 in the last (the pivot's) digit only, which is q.
    const int k0_of_row0 = frequency_of_position(row0, shape);
    const int pivot_shift = 4 * (shape.stages - 1);
    GPUKIT_FFT_UNROLL
    for (int q = 0; q < R; ++q) {
      const int k0 = k0_of_row0 | (q << pivot_shift);
      const int m0 = k0 <= n0 / 2 ? k0 : k0 - n0;  // |m0| <= 2^12: m0^2 exact in float
      const Real factor = reciprocal(a_first * Real(m0 * m0) + b_rest);
      v[q] = {v[q].x * factor, v[q].y * factor};
    }
    // The mean (k = 0, only at q = 0 of row 0 of column 0): zero, whatever 1/0 made of it.
    if (m_mid == 0 && i_last == 0 && k0_of_row0 == 0) v[0] = {Real(0), Real(0)};
    dft<R, true>(v);
    const auto out = dst.line(row0, 0, c);
    GPUKIT_FFT_UNROLL
    for (int q = 0; q < R; ++q) out.store(q, v[q]);
  }
}

template <int TC, class Real, class Src, class Dst>
__host__ __device__ __forceinline__ void run_pivot_stage(const Src& src, const Dst& dst,
                                                         TransformShape shape,
                                                         const ScalingParams<Real>& scaling,
                                                         int part, int parts, int thread,
                                                         int threads) {
  switch (shape.log2_last) {
    case 1:
      run_pivot<2, TC, Real>(src, dst, shape, scaling, part, parts, thread, threads);
      break;
    case 2:
      run_pivot<4, TC, Real>(src, dst, shape, scaling, part, parts, thread, threads);
      break;
    case 3:
      run_pivot<8, TC, Real>(src, dst, shape, scaling, part, parts, thread, threads);
      break;
    case 4:
      run_pivot<16, TC, Real>(src, dst, shape, scaling, part, parts, thread, threads);
      break;
    default:
      run_pivot<32, TC, Real>(src, dst, shape, scaling, part, parts, thread, threads);
  }
}

/// The column pass for one tile of TC columns, whose n0 rows are spread over the shared memory
/// of P blocks (block `part` holds rows [part n0/P, (part + 1) n0/P)), in three phases with a
/// barrier across the P blocks between them:
///   first_stage: global -> the first forward radix-16 stage -> the split tile (its 16 outputs
///     are rows 16 blocks of n0/16 apart: on P blocks, (P - 1)/P of them in the others);
///   local_stages: the other forward stages, the pivot, the inverse stages but the last, each
///     on n0/16 contiguous rows or less, so within the block's own rows, `barrier()` (a barrier
///     of the block) between them;
///   last_stage: the split tile -> the last inverse stage -> global.
/// Each block does 1/P of each stage's butterflies. For n0 <= 32 (one stage) use pivot_only.
/// (On the GPU the first barrier is no cluster barrier: the first stage's stores count their
/// bytes on the receiving block's mbarrier, and each block waits for its own part's.)
template <int TC, int P, class Real>
struct ColumnTileSolver {
  using C = typename ComplexOf<Real>::type;
  GlobalTile<C, TC> global;
  SplitTile<C, TC, P> tile;
  C* own_part;  // tile.part[part], as the block's shared memory (not a cluster address)
  TransformShape shape;
  Twiddles<C> twiddles;
  ScalingParams<Real> scaling;
  int part;
  int thread;
  int threads;

  static constexpr int K = columns_per_thread_in_shared<TC>;

  __host__ __device__ __forceinline__ Work share(int groups) const {
    const int per_part = groups / P;
    return {part * per_part, (part + 1) * per_part, thread, threads};
  }
  __host__ __device__ __forceinline__ void pivot_only() const {
    run_pivot_stage<TC, Real>(global, global, shape, scaling, 0, 1, thread, threads);
  }
  /// `dst`: the tile, or on the GPU the same places written another way (AsyncSplitTile in
  /// poisson_fused.cu).
  template <class Dst>
  __host__ __device__ __forceinline__ void first_stage_into(const Dst& dst) const {
    run_radix16_stage<false, 1, TC, Real>(global, dst, shape.log2_n - 4, shape, twiddles,
                                          share(radix16_groups<1, TC>(shape.log2_n)));
  }
  __host__ __device__ __forceinline__ void first_stage() const { first_stage_into(tile); }
  template <class Barrier>
  __host__ __device__ __forceinline__ void local_stages(Barrier barrier) const {
    const SharedTile<C, TC> own{own_part, part << tile.log2_rows_per_part, tile.log2_pad};
    const Work work = share(radix16_groups<K, TC>(shape.log2_n));
    for (int i = 1; i < shape.stages - 1; ++i) {
      run_radix16_stage<false, K, TC, Real>(own, own, shape.log2_n - 4 * (i + 1), shape, twiddles,
                                            work);
      barrier();
    }
    run_pivot_stage<TC, Real>(own, own, shape, scaling, part, P, thread, threads);
    for (int i = shape.stages - 2; i >= 1; --i) {
      barrier();
      run_radix16_stage<true, K, TC, Real>(own, own, shape.log2_n - 4 * (i + 1), shape, twiddles,
                                           work);
    }
  }
  __host__ __device__ __forceinline__ void last_stage() const {
    run_radix16_stage<true, 1, TC, Real>(tile, global, shape.log2_n - 4, shape, twiddles,
                                         share(radix16_groups<1, TC>(shape.log2_n)));
  }
};

}  // namespace gpukit::pde::cuda_detail::fused
