#pragma once
// Internal: an in-place radix-16 FFT along the columns of a tile (a column: the n0 entries along
// axis 0 with the other indices fixed, TC adjacent columns per tile), for CUDA blocks, and for
// the CPU test that runs the very same stage code (one "thread" doing all butterflies, barriers
// empty) against a direct DFT. Its one user is the fused Poisson column pass
// (poisson_fused_columns.cuh), which puts its scaling between the forward and inverse stages.
//
// The forward transform is decimation in frequency, radix 16 but for the last stage (the
// "pivot": radix 4, 8, 16 or 32; n0 <= 32: one stage of radix 2 to 32), and leaves its output in
// digit-reversed order (frequency_of_position); the inverse runs the same stages backwards as
// decimation in time, which takes digit-reversed input to natural order. So no permutation pass
// is ever made. A stage reads and writes its places through a view: the tile in global memory
// (GlobalTile), rows of it in a block's shared memory (SharedTile), or the tile spread over the
// shared memory of a cluster (SplitTile, fft_radix16_cluster.cuh).
//
// Where the time goes (H200, float, 4096^2 and 8192^2, one block of 512 threads per SM): the
// pass is latency-bound, not bandwidth-bound, so what pays is fewer instructions per butterfly
// and fewer sectors per global access: twiddles from four table lookups (apply_twiddles), two
// columns per thread in the shared-memory stages, one pointer and stride per butterfly (Line),
// tiles of 32-byte rows (over four blocks at n0 = 8192), twiddle tables and tile rows laid out
// against bank conflicts.

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

// Loops of constant trip count over a butterfly's registers (the host compiler, which runs the
// same code in the CPU test, knows no such pragma).
#if defined(__CUDA_ARCH__)
#define GPUKIT_FFT_UNROLL _Pragma("unroll")
#else
#define GPUKIT_FFT_UNROLL
#endif

namespace gpukit::pde::cuda_detail::fft_radix16 {

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
/// Each table is stored skewed, entry i at skewed(i) = i + i / 16: a stage's lanes look up
/// w^(2^p e) for consecutive j (e = j 2^shift), entries 2^(p + shift) apart, which unskewed would
/// fall on a few banks (up to 4-way conflicts, measured on the H200).
struct TwiddleLayout {
  int log2_fine;
  int fine_count;    // 2^log2_fine
  int coarse_count;  // n0 / 2^log2_fine
  __host__ __device__ static constexpr int skewed(int i) { return i + (i >> 4); }
  /// Slots (complex values) of the skewed fine table, then of both.
  __host__ __device__ int fine_slots() const { return skewed(fine_count - 1) + 1; }
  __host__ __device__ int slots() const { return fine_slots() + skewed(coarse_count - 1) + 1; }
  __host__ __device__ static TwiddleLayout of(int log2_n) {
    const int log2_fine = (log2_n + 1) / 2;
    return {log2_fine, 1 << log2_fine, 1 << (log2_n - log2_fine)};
  }
};

template <class C>
struct Twiddles {
  const C* fine;    // skewed
  const C* coarse;  // skewed
  int log2_fine;
  __host__ __device__ __forceinline__ C operator()(int t) const {
    return mul<false>(coarse[TwiddleLayout::skewed(t >> log2_fine)],
                      fine[TwiddleLayout::skewed(t & ((1 << log2_fine) - 1))]);
  }
};

/// Places the unskewed tables (fine then coarse, `layout`'s counts) into `slots` skewed:
/// entries thread, thread + threads, ...
template <class C>
__host__ __device__ __forceinline__ void place_twiddles(const C* tables, C* slots,
                                                        TwiddleLayout layout, int thread,
                                                        int threads) {
  for (int i = thread; i < layout.fine_count + layout.coarse_count; i += threads) {
    const bool fine = i < layout.fine_count;
    const int k = fine ? i : i - layout.fine_count;
    slots[(fine ? 0 : layout.fine_slots()) + TwiddleLayout::skewed(k)] = tables[i];
  }
}

/// A butterfly's places in a tile: rows row0 + m S (m = 0, 1, ...) of column c, as a pointer
/// and a stride computed once, so that each access is one address add.
template <class C>
struct Line {
  C* at;
  std::int64_t stride;
  bool exists;  // false: a column beyond the grid's last (reads zero, writes nothing)
  __host__ __device__ __forceinline__ C load(int m) const {
    return exists ? at[m * stride] : C{0, 0};
  }
  __host__ __device__ __forceinline__ void store(int m, C value) const {
    if (exists) at[m * stride] = value;
  }
  /// Columns c and c + 1 (c even, both exist): one 16-byte access for float, where the line's
  /// places are 16-byte aligned (shared memory; see SharedTile).
  __host__ __device__ __forceinline__ void load_pair(int m, C& a, C& b) const {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(C) == 8) {
      const float4 q = *reinterpret_cast<const float4*>(at + m * stride);
      a = {q.x, q.y};
      b = {q.z, q.w};
      return;
    }
#endif
    a = at[m * stride];
    b = at[m * stride + 1];
  }
  __host__ __device__ __forceinline__ void store_pair(int m, C a, C b) const {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(C) == 8) {
      *reinterpret_cast<float4*>(at + m * stride) = float4{a.x, a.y, b.x, b.y};
      return;
    }
#endif
    at[m * stride] = a;
    at[m * stride + 1] = b;
  }
};

/// The column tile in global memory: `pitch` complex values between rows, of which the tile's
/// first `columns` (<= TC; fewer in the grid's last tile) exist.
template <class C, int TC>
struct GlobalTile {
  C* base;
  std::int64_t pitch;
  int columns;
  __host__ __device__ __forceinline__ Line<C> line(int row0, int log2_s, int c) const {
    return {base + row0 * pitch + c, pitch << log2_s, c < columns};
  }
};

/// The tile's rows [first_row, first_row + rows) in shared memory: rows of TC values with one
/// padding row after every 2^log2_pad, the pivot's radix (4 to 32). The pivot's butterflies,
/// 2^log2_pad rows apart, one per lane, so stay off each other's banks; the radix-16 stages'
/// row distances S are multiples of the period, so a butterfly's places are equally spaced
/// (Line). At most `elements(rows, log2_pad)` values. The base is 16-byte aligned, so a pair
/// of float columns (c even, TC even) is one 16-byte access. first_row is a multiple of the
/// period.
template <class C, int TC>
struct SharedTile {
  C* base;
  int first_row;
  int log2_pad;
  /// Rows row0 + m 2^log2_s: for log2_s >= log2_pad, or m < 2^log2_pad with row0 a multiple of
  /// it (the pivot: log2_s = 0).
  __host__ __device__ __forceinline__ Line<C> line(int row0, int log2_s, int c) const {
    const int r = row0 - first_row;
    const int s = 1 << log2_s;
    return {base + (r + (r >> log2_pad)) * TC + c, (s + (s >> log2_pad)) * TC, true};
  }
  static constexpr std::int64_t elements(std::int64_t rows, int log2_pad) {
    return (rows + (rows >> log2_pad)) * TC;
  }
};

/// The stages: radix 16 but for the last (the pivot), of radix 2, 4, 8, 16 or 32. A radix-2
/// pivot after radix-16 stages becomes radix 32 instead: one stage (two passes through shared
/// memory) less for the price of 32 values in registers in the one stage without twiddles.
struct TransformShape {
  int log2_n;     // n0 = 2^log2_n
  int stages;     // radix-16 stages + the pivot
  int log2_last;  // radix of the pivot: 2^log2_last, 1..5
  /// The shared tile's padding period (SharedTile): the pivot's radix.
  __host__ __device__ int log2_pad() const { return log2_last; }
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

/// Columns per thread in the radix-16 stages within shared memory: a thread does the
/// butterflies of the same rows in two adjacent columns (TC >= 2), which share their 15
/// twiddles and are one 16-byte access per row for float. The stages that read or write global
/// memory do one column per thread, so that a warp's lanes span the tile's row (TC adjacent
/// values) and each access instruction touches as few rows (sectors) as the tile allows.
template <int TC>
inline constexpr int columns_per_thread_in_shared = TC >= 2 ? 2 : 1;

/// The range [begin, end) of a stage's butterfly groups that one block does, the groups
/// `thread`, `thread + threads`, ... of it.
struct Work {
  int begin;
  int end;
  int thread;
  int threads;
};

template <int Q>
__host__ __device__ constexpr int highest_bit() {
  int b = 1;
  while (2 * b <= Q) b *= 2;
  return b;
}

/// v[k][q] times w^(e q) (conjugated when `conjugate`) for q = 1..15, w = exp(-2 pi i / n0).
/// Four looked-up twiddles w^e, w^2e, w^4e, w^8e; the others are products of those by the bits
/// of q (w^(e q) = w^(e (q - h)) w^(e h), h the highest bit of q): at most three products after
/// the lookups instead of 11 more lookups of two shared-memory loads each.
template <bool conjugate, int K, class C>
__host__ __device__ __forceinline__ void apply_twiddles(C (&v)[K][16], const Twiddles<C>& twiddles,
                                                        int e) {
  C w[16];
  w[1] = twiddles(e);
  w[2] = twiddles(2 * e);
  w[4] = twiddles(4 * e);
  w[8] = twiddles(8 * e);
  static_for<16>([&](auto q_constant) {
    constexpr int q = decltype(q_constant)::value;
    if constexpr (q > 0) {
      constexpr int h = highest_bit<q>();
      if constexpr (h != q) w[q] = mul<false>(w[q - h], w[h]);
      GPUKIT_FFT_UNROLL
      for (int k = 0; k < K; ++k) v[k][q] = mul<conjugate>(v[k][q], w[q]);
    }
  });
}

/// The barrier of the CPU run, where one "thread" does every butterfly of a stage.
struct NoBarrier {
  __host__ __device__ void operator()() const {}
};

/// One radix-16 stage on all butterflies of the tile. A stage with sub-length L = 16 * 2^log2_s
/// combines, for each block of L rows and each offset j < 2^log2_s, the 16 rows j, j + S, ...
/// (S = 2^log2_s) of a column:
///   forward (decimation in frequency): y_q = sum_m x_m w_16^{mq}, times w_L^{jq}
///   inverse (decimation in time): the adjoint, conjugate twiddles first
/// A group: the butterflies of K adjacent columns at the same rows (K = 1 or 2), in the order
/// of their rows' blocks of L, then of j, then of the columns: so the groups of a block's
/// rows (a multiple of L) are a contiguous range. Each butterfly reads and writes the same 16
/// places: the stage is in place.
template <int K, int TC>
__host__ __device__ constexpr int radix16_groups(int log2_n) {
  return (1 << log2_n) / 16 * (TC / K);
}

template <bool inverse, int K, int TC, class Real, class Src, class Dst>
__host__ __device__ __forceinline__ void run_radix16_stage(
    const Src& src, const Dst& dst, int log2_s, TransformShape shape,
    const Twiddles<typename ComplexOf<Real>::type>& twiddles, Work work) {
  using C = typename ComplexOf<Real>::type;
  constexpr int R = 16;
  constexpr int column_groups = TC / K;
  const int log2_l = log2_s + 4;
  const int twiddle_shift = shape.log2_n - log2_l;  // w_L^e = w_n^(e << twiddle_shift)
  for (int g = work.begin + work.thread; g < work.end; g += work.threads) {
    const int c = (g % column_groups) * K;
    const int bj = g / column_groups;
    const int j = bj & ((1 << log2_s) - 1);
    const int row0 = ((bj >> log2_s) << log2_l) + j;
    const auto in = src.line(row0, log2_s, c);
    C v[K][R];
    GPUKIT_FFT_UNROLL
    for (int m = 0; m < R; ++m) {
      if constexpr (K == 2) {
        in.load_pair(m, v[0][m], v[1][m]);
      } else {
        v[0][m] = in.load(m);
      }
    }
    if constexpr (!inverse) {
      GPUKIT_FFT_UNROLL
      for (int k = 0; k < K; ++k) dft<R, false>(v[k]);
    }
    apply_twiddles<inverse>(v, twiddles, j << twiddle_shift);
    if constexpr (inverse) {
      GPUKIT_FFT_UNROLL
      for (int k = 0; k < K; ++k) dft<R, true>(v[k]);
    }
    const auto out = dst.line(row0, log2_s, c);
    GPUKIT_FFT_UNROLL
    for (int q = 0; q < R; ++q) {
      if constexpr (K == 2) {
        out.store_pair(q, v[0][q], v[1][q]);
      } else {
        out.store(q, v[0][q]);
      }
    }
  }
}

}  // namespace gpukit::pde::cuda_detail::fft_radix16
