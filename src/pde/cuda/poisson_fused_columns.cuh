#pragma once
// Internal: the column pass of the fused Poisson solver (poisson_fused.cu). For a tile of TC
// adjacent columns of the half spectrum (a column: the n0 entries along axis 0 with the other
// indices fixed), it does the forward DFT along axis 0, the Poisson scaling and the inverse DFT
// along axis 0, with one read and one write of the tile in global memory.
//
// The transform along axis 0 is an in-place radix-16 decimation-in-frequency FFT (the last stage
// of radix 2, 4, 8 or 16) whose output is left in digit-reversed order; the scaling knows each
// position's frequency, and the inverse runs the same stages backwards as decimation in time,
// which takes digit-reversed input to natural order. So no permutation pass is ever made, and the
// last forward stage, the scaling and the first inverse stage (the same butterflies) are one
// pass in registers ("pivot"). The first forward stage reads global memory and the last inverse
// stage writes it; the stages between go through shared memory.
//
// Everything here is __host__ __device__ so that the CPU test runs the very same stage code
// (one "thread" doing all butterflies, barriers empty) against a direct DFT.

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

// Loops of constant trip count over a butterfly's registers (the host compiler, which runs the
// same code in the CPU test, knows no such pragma).
#if defined(__CUDA_ARCH__)
#define GPUKIT_FUSED_UNROLL _Pragma("unroll")
#else
#define GPUKIT_FUSED_UNROLL
#endif

namespace gpukit::pde::cuda_detail::fused {

template <class Real>
struct ComplexOf;
template <>
struct ComplexOf<float> {
  using type = float2;
};
template <>
struct ComplexOf<double> {
  using type = double2;
};

template <class C>
__host__ __device__ __forceinline__ C add(C a, C b) {
  return {a.x + b.x, a.y + b.y};
}
template <class C>
__host__ __device__ __forceinline__ C sub(C a, C b) {
  return {a.x - b.x, a.y - b.y};
}
/// a * b, or a * conj(b) when `conjugate_b`.
template <bool conjugate_b, class C>
__host__ __device__ __forceinline__ C mul(C a, C b) {
  if constexpr (conjugate_b) return {a.x * b.x + a.y * b.y, a.y * b.x - a.x * b.y};
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}

/// cos(2 pi k / 32) for k in [0, 16], exact to the last digit of double.
template <class Real>
__host__ __device__ constexpr Real cos32(int k) {
  constexpr double c[9] = {1.0,
                           0.98078528040323044912618223613424610,
                           0.92387953251128675612818318939678829,
                           0.83146961230254523707878837761790576,
                           0.70710678118654752440084436210484904,
                           0.55557023301960222474283081394853287,
                           0.38268343236508977172845998403039887,
                           0.19509032201612826784828486847702224,
                           0.0};
  return k <= 8 ? Real(c[k]) : Real(-c[16 - k]);
}

/// f(integral_constant<int, 0>), ..., f(integral_constant<int, N - 1>): a loop unrolled by
/// construction (nvcc's #pragma unroll gave up on the nested radix-2 loops and left the
/// butterflies in local memory with their twiddles chosen at run time).
template <int N, class F>
__host__ __device__ __forceinline__ void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

/// z * exp(-+2 pi i K / 32) for K in [0, 16) (the sign: - forward, + inverse).
template <bool inverse, int K, class C>
__host__ __device__ __forceinline__ C mul_w32(C z) {
  using Real = decltype(z.x);
  if constexpr (K == 0) {
    return z;
  } else if constexpr (K == 8) {
    return inverse ? C{-z.y, z.x} : C{z.y, -z.x};
  } else {
    constexpr Real c = cos32<Real>(K);
    constexpr Real s = cos32<Real>(K < 8 ? 8 - K : K - 8);  // sin(2 pi K / 32)
    if constexpr (inverse) return {z.x * c - z.y * s, z.y * c + z.x * s};
    return {z.x * c + z.y * s, z.y * c - z.x * s};
  }
}

template <int R>
__host__ __device__ constexpr int bit_reverse(int q) {
  int r = 0;
  for (int bit = 1, mirror = R / 2; bit < R; bit <<= 1, mirror >>= 1)
    if (q & bit) r |= mirror;
  return r;
}

/// The radix-2 levels of an in-register DFT, butterfly span HALF down to 1.
template <int R, int HALF, bool inverse, class C>
__host__ __device__ __forceinline__ void dft_levels(C (&v)[R]) {
  static_for<R / (2 * HALF)>([&](auto block) {
    static_for<HALF>([&](auto i) {
      constexpr int top = decltype(block)::value * 2 * HALF + decltype(i)::value;
      const C a = v[top];
      const C b = v[top + HALF];
      v[top] = add(a, b);
      v[top + HALF] = mul_w32<inverse, decltype(i)::value*(16 / HALF)>(sub(a, b));
    });
  });
  if constexpr (HALF > 1) dft_levels<R, HALF / 2, inverse>(v);
}

/// In-register R-point DFT (R = 2, 4, 8, 16, 32), natural order in and out: radix-2 decimation in
/// frequency with exact constant twiddles, then a renaming of registers.
template <int R, bool inverse, class C>
__host__ __device__ __forceinline__ void dft(C (&v)[R]) {
  dft_levels<R, R / 2, inverse>(v);
  C natural[R];
  static_for<R>(
      [&](auto q) { natural[decltype(q)::value] = v[bit_reverse<R>(decltype(q)::value)]; });
  static_for<R>([&](auto q) { v[decltype(q)::value] = natural[decltype(q)::value]; });
}

/// exp(-2 pi i t / n) as coarse[t >> log2_fine] * fine[t % 2^log2_fine]: two small tables
/// (about 2 sqrt(n) entries, computed on the host in long double) instead of one of n entries,
/// at the price of one complex product (one more rounding).
/// (One table of n0 entries, one load per twiddle, measured slower on the H200 at every large
/// size: the larger shared memory footprint costs more than the product saves.)
template <class C>
struct Twiddles {
  const C* fine;
  const C* coarse;
  int log2_fine;
  __host__ __device__ __forceinline__ C operator()(int t) const {
    return mul<false>(coarse[t >> log2_fine], fine[t & ((1 << log2_fine) - 1)]);
  }
};

/// The column tile in global memory: `pitch` complex values between rows, of which the tile's
/// first `columns` (<= TC; fewer in the grid's last tile) exist.
template <class C, int TC>
struct GlobalTile {
  C* base;
  std::int64_t pitch;
  int columns;
  __host__ __device__ __forceinline__ C load(int row, int c) const {
    return c < columns ? base[row * pitch + c] : C{0, 0};
  }
  __host__ __device__ __forceinline__ void store(int row, int c, C value) const {
    if (c < columns) base[row * pitch + c] = value;
  }
};

/// The column tile in shared memory: rows of TC values with one padding row after every 16,
/// which keeps the butterflies of the late stages (rows 16 apart) off each other's banks and
/// keeps every row 8-byte aligned. Rows of the tile: n0 + n0 / 16.
template <class C, int TC>
struct SharedTile {
  C* base;
  __host__ __device__ __forceinline__ C load(int row, int c) const {
    return base[(row + (row >> 4)) * TC + c];
  }
  __host__ __device__ __forceinline__ void store(int row, int c, C value) const {
    base[(row + (row >> 4)) * TC + c] = value;
  }
  static constexpr std::int64_t elements(std::int64_t n0) { return (n0 + n0 / 16) * TC; }
};

/// What the scaling needs to know about a tile: the wave numbers and -1/N.
template <class Real>
struct ScalingParams {
  std::int64_t first_column;  // global index of the tile's column 0
  int pitch_last;             // columns per axis-1 index (3D: the padded half length of axis 2)
  int n_mid;                  // 3D: n1; 2D: 1
  Real k_unit[3];             // 2 pi / length[a]; k_unit[1] = 0 in 2D
  Real minus_inv_size;        // -1 / (n0 n1 [n2]): cuFFT's transforms are unnormalized
};

/// The stages: radix 16 but for the last (the pivot), of radix 2, 4, 8, 16 or 32. A radix-2
/// pivot after radix-16 stages becomes radix 32 instead: one stage (two passes through shared
/// memory) less for the price of 32 values in registers in the one stage without twiddles.
struct TransformShape {
  int log2_n;     // n0 = 2^log2_n
  int stages;     // radix-16 stages + the pivot
  int log2_last;  // radix of the pivot: 2^log2_last, 1..5
};

__host__ __device__ inline TransformShape transform_shape(int log2_n) {
  int stages = (log2_n + 3) / 4;
  int log2_last = log2_n - 4 * (stages - 1);
  if (log2_last == 1 && stages > 1) {
    --stages;
    log2_last = 5;
  }
  return {log2_n, stages, log2_last};
}

/// The frequency index of position p after the forward stages: the base-16 digits of p (the
/// last one of the pivot's radix) in reverse order.
__host__ __device__ __forceinline__ int frequency_of_position(int p, TransformShape shape) {
  int k = 0;
  for (int i = 0; i < shape.stages - 1; ++i)
    k |= ((p >> (shape.log2_n - 4 * (i + 1))) & 15) << (4 * i);
  return k | ((p & ((1 << shape.log2_last) - 1)) << (4 * (shape.stages - 1)));
}

enum class StageKind { forward, pivot, inverse };

/// One stage on all butterflies of the tile, butterfly b handled by thread b % threads. A stage
/// of radix R with sub-length L = R * 2^log2_s combines, for each block of L rows and each
/// offset j < 2^log2_s, the R rows j, j + S, ... (S = 2^log2_s) of one column.
///   forward (decimation in frequency): y_q = sum_m x_m w_R^{mq}, times w_L^{jq}
///   inverse (decimation in time): the adjoint, conjugate twiddles first
///   pivot (S = 1, no twiddles): forward, scaling by -1/(N |k|^2), inverse
/// Each butterfly reads and writes the same R places, so a stage is in place.
template <StageKind kind, int R, int TC, class Real, class Src, class Dst>
__host__ __device__ __forceinline__ void run_stage(
    const Src& src, const Dst& dst, int log2_s, TransformShape shape,
    const Twiddles<typename ComplexOf<Real>::type>& twiddles, const ScalingParams<Real>& scaling,
    int thread, int threads) {
  using C = typename ComplexOf<Real>::type;
  const int butterflies = (1 << shape.log2_n) / R * TC;
  const int log2_l = log2_s + (R == 32 ? 5 : R == 16 ? 4 : R == 8 ? 3 : R == 4 ? 2 : 1);
  const int twiddle_shift = shape.log2_n - log2_l;  // w_L^e = w_n^(e << twiddle_shift)
  for (int b = thread; b < butterflies; b += threads) {
    const int c = b % TC;
    const int bj = b / TC;
    const int j = bj & ((1 << log2_s) - 1);
    const int row0 = ((bj >> log2_s) << log2_l) + j;
    C v[R];
    GPUKIT_FUSED_UNROLL
    for (int m = 0; m < R; ++m) v[m] = src.load(row0 + (m << log2_s), c);
    if constexpr (kind == StageKind::forward) {
      dft<R, false>(v);
      GPUKIT_FUSED_UNROLL
      for (int q = 1; q < R; ++q) v[q] = mul<false>(v[q], twiddles((j * q) << twiddle_shift));
    } else if constexpr (kind == StageKind::inverse) {
      GPUKIT_FUSED_UNROLL
      for (int q = 1; q < R; ++q) v[q] = mul<true>(v[q], twiddles((j * q) << twiddle_shift));
      dft<R, true>(v);
    } else {
      dft<R, false>(v);
      // The other axes' wave numbers of this column (m = i for i <= n/2, i - n above).
      const std::int64_t column = scaling.first_column + c;
      const int i_mid = static_cast<int>(column / scaling.pitch_last);
      const int i_last = static_cast<int>(column - std::int64_t{i_mid} * scaling.pitch_last);
      const int m_mid = i_mid <= scaling.n_mid / 2 ? i_mid : i_mid - scaling.n_mid;
      const Real k_mid = scaling.k_unit[1] * Real(m_mid);
      const Real k_last = scaling.k_unit[2] * Real(i_last);
      const Real k_rest_squared = k_mid * k_mid + k_last * k_last;
      const bool rest_is_zero = m_mid == 0 && i_last == 0;
      const int n0 = 1 << shape.log2_n;
      // row0 + q differs from row0 in the last (the pivot's) digit only, which is q.
      const int k0_of_row0 = frequency_of_position(row0, shape);
      GPUKIT_FUSED_UNROLL
      for (int q = 0; q < R; ++q) {
        const int k0 = k0_of_row0 | (q << (4 * (shape.stages - 1)));
        const int m0 = k0 <= n0 / 2 ? k0 : k0 - n0;
        const Real k_first = scaling.k_unit[0] * Real(m0);
        const Real factor = (rest_is_zero && m0 == 0)
                                ? Real(0)
                                : scaling.minus_inv_size / (k_first * k_first + k_rest_squared);
        v[q] = {v[q].x * factor, v[q].y * factor};
      }
      dft<R, true>(v);
    }
    GPUKIT_FUSED_UNROLL
    for (int q = 0; q < R; ++q) dst.store(row0 + (q << log2_s), c, v[q]);
  }
}

template <StageKind kind, int TC, class Real, class Src, class Dst>
__host__ __device__ __forceinline__ void run_pivot_stage(
    const Src& src, const Dst& dst, TransformShape shape,
    const Twiddles<typename ComplexOf<Real>::type>& twiddles, const ScalingParams<Real>& scaling,
    int thread, int threads) {
  switch (shape.log2_last) {
    case 1:
      run_stage<kind, 2, TC, Real>(src, dst, 0, shape, twiddles, scaling, thread, threads);
      break;
    case 2:
      run_stage<kind, 4, TC, Real>(src, dst, 0, shape, twiddles, scaling, thread, threads);
      break;
    case 3:
      run_stage<kind, 8, TC, Real>(src, dst, 0, shape, twiddles, scaling, thread, threads);
      break;
    case 4:
      run_stage<kind, 16, TC, Real>(src, dst, 0, shape, twiddles, scaling, thread, threads);
      break;
    default:
      run_stage<kind, 32, TC, Real>(src, dst, 0, shape, twiddles, scaling, thread, threads);
  }
}

/// The barrier of the CPU run, where one "thread" does every butterfly of a stage.
struct NoBarrier {
  __host__ __device__ void operator()() const {}
};

/// The whole column pass for one tile: global -> (forward stages) -> pivot -> (inverse stages)
/// -> global, `barrier()` between stages (__syncthreads on the GPU, NoBarrier on the CPU).
#pragma nv_exec_check_disable
template <int TC, class Real, class Barrier>
__host__ __device__ __forceinline__ void solve_column_tile(
    const GlobalTile<typename ComplexOf<Real>::type, TC>& global,
    const SharedTile<typename ComplexOf<Real>::type, TC>& shared, TransformShape shape,
    const Twiddles<typename ComplexOf<Real>::type>& twiddles, const ScalingParams<Real>& scaling,
    int thread, int threads, Barrier barrier) {
  constexpr auto forward = StageKind::forward;
  constexpr auto inverse = StageKind::inverse;
  if (shape.stages == 1) {  // n0 <= 16: one pass from global to global
    run_pivot_stage<StageKind::pivot, TC, Real>(global, global, shape, twiddles, scaling, thread,
                                                threads);
    return;
  }
  run_stage<forward, 16, TC, Real>(global, shared, shape.log2_n - 4, shape, twiddles, scaling,
                                   thread, threads);
  barrier();
  for (int i = 1; i < shape.stages - 1; ++i) {
    run_stage<forward, 16, TC, Real>(shared, shared, shape.log2_n - 4 * (i + 1), shape, twiddles,
                                     scaling, thread, threads);
    barrier();
  }
  run_pivot_stage<StageKind::pivot, TC, Real>(shared, shared, shape, twiddles, scaling, thread,
                                              threads);
  barrier();
  for (int i = shape.stages - 2; i >= 1; --i) {
    run_stage<inverse, 16, TC, Real>(shared, shared, shape.log2_n - 4 * (i + 1), shape, twiddles,
                                     scaling, thread, threads);
    barrier();
  }
  run_stage<inverse, 16, TC, Real>(shared, global, shape.log2_n - 4, shape, twiddles, scaling,
                                   thread, threads);
}

}  // namespace gpukit::pde::cuda_detail::fused
