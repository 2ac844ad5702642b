// The CUDA Black-Scholes ladder: the seed's kernel (slide 11) and the steps that take it to the
// HBM limit on an H200. Every kernel prices each option on its own side (BlackScholesInputs::
// is_put) with detail::price_option, the CPU's arithmetic, except the lean-math variants' prices
// (black_scholes_lean_math.hpp: the same formula with fewer transcendental functions and no
// divisions, tested against the CPU's).
//
// Napkin math (float, a side per option, rate/volatility given once): 13 bytes read + 4 written
// per option; at the H200's ~4.3 TB/s copy bandwidth that is ~250 G options/s, i.e. ~130 issue
// slots per option across 132 SMs at 1.98 GHz, so the kernel must keep transcendental work lean
// and many loads in flight.

#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/check.hpp"
#include "core/cuda/launch_shape.hpp"
#include "finance/black_scholes_lean_math.hpp"
#include "finance/black_scholes_math.hpp"
#include "finance/cuda/black_scholes_launchers.hpp"

namespace gpukit::finance::cuda_detail {

using detail::OptionResult;
using detail::price_and_store;
using detail::price_option;

namespace {

constexpr int kThreadsPerBlock = 256;

// The arithmetic of one option on its side: price_option (the CPU's) or, for the lean-math
// variants' prices, price_lean; the Greeks always take price_option.
template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean>
__device__ __forceinline__ OptionResult<Real> price_one(Real spot, Real strike, Real maturity,
                                                        Real rate, Real volatility, Real dividend,
                                                        bool is_put) {
  if constexpr (kLean && !kGreeks) {
    OptionResult<Real> r{};
    r.price =
        detail::price_lean<Real, Cdf>(spot, strike, maturity, rate, volatility, dividend, is_put);
    return r;
  } else {
    return price_option<Real, Cdf, kGreeks>(spot, strike, maturity, rate, volatility, dividend,
                                            is_put);
  }
}

// The lean double exp reads its table from shared memory: every lean kernel fills it first, with
// all threads of the block.
template <class Real, bool kLean>
__device__ __forceinline__ void load_lean_tables() {
  if constexpr (kLean && sizeof(Real) == sizeof(double)) detail::lean_load_tables_to_shared();
}

template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean>
__device__ __forceinline__ void price_and_store_one(const BlackScholesInputs<Real>& in,
                                                    const BlackScholesOutputs<Real>& out,
                                                    std::int64_t i) {
  if constexpr (kLean && !kGreeks && sizeof(Real) == sizeof(double) && Cdf != NormalCdf::erfc) {
    // An option outside the vectors (the array's last count % W, or a misaligned view) takes the
    // vectors' arithmetic, price_lean_hull_double, with their 1/sigma, so that its bits do not
    // depend on where the array or a chunk of it ends.
    constexpr bool kFastRcp = Cdf == NormalCdf::hull_polynomial_fast_math;
    const double one_spot[1] = {in.spot[i]}, one_strike[1] = {in.strike[i]},
                 one_maturity[1] = {in.maturity[i]},
                 one_rate[1] = {detail::parameter_at(in.rate, i)},
                 one_volatility[1] = {detail::parameter_at(in.volatility, i)},
                 one_dividend[1] = {detail::parameter_at(in.dividend, i)};
    const double one_inv_volatility[1] = {in.volatility.values == nullptr
                                              ? detail::lean_rcp<kFastRcp>(in.volatility.scalar)
                                              : detail::lean_rcp_moderate(one_volatility[0])};
    const bool one_is_put[1] = {detail::is_put_at(in.is_put, i)};
    double price[1];
    if (in.dividend.values != nullptr || in.dividend.scalar != 0.0) {
      detail::price_lean_hull_double<1, true>(one_spot, one_strike, one_maturity, one_rate,
                                              one_volatility, one_inv_volatility, one_dividend,
                                              one_is_put, price);
    } else {
      detail::price_lean_hull_double<1, false>(one_spot, one_strike, one_maturity, one_rate,
                                               one_volatility, one_inv_volatility, one_dividend,
                                               one_is_put, price);
    }
    OptionResult<Real> r{};
    r.price = price[0];
    detail::store_result<Real, kGreeks>(out, i, r);
  } else if constexpr (kLean && !kGreeks) {
    const OptionResult<Real> r = price_one<Real, Cdf, kGreeks, kLean>(
        in.spot[i], in.strike[i], in.maturity[i], detail::parameter_at(in.rate, i),
        detail::parameter_at(in.volatility, i), detail::parameter_at(in.dividend, i),
        detail::is_put_at(in.is_put, i));
    detail::store_result<Real, kGreeks>(out, i, r);
  } else {
    price_and_store<Real, Cdf, kGreeks>(in, out, i);
  }
}

// ---------------------------------------------------------------------------------------------
// Scalar grid-stride kernel: the seed's shape (slide 11), one option per thread per iteration.
template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean>
__global__ void __launch_bounds__(kThreadsPerBlock)
    black_scholes_grid_stride_kernel(BlackScholesInputs<Real> in, BlackScholesOutputs<Real> out) {
  load_lean_tables<Real, kLean>();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < in.count; i += stride) {
    price_and_store_one<Real, Cdf, kGreeks, kLean>(in, out, i);
  }
}

// ---------------------------------------------------------------------------------------------
// 16-byte vector kernel: each thread loads kVectorsPerThread 16-byte vectors of every input
// array (and the options' sides, a byte each) before computing, so up to 7 x kVectorsPerThread
// loads are in flight per thread.
template <class Real>
struct Vector16;
template <>
struct Vector16<float> {
  using type = float4;
  using sides = uchar4;  // the sides of a vector's options
  static constexpr int kWidth = 4;
};
template <>
struct Vector16<double> {
  using type = double2;
  using sides = uchar2;
  static constexpr int kWidth = 2;
};

template <class Real, bool kStreaming>
__device__ __forceinline__ typename Vector16<Real>::type load_vector(const Real* base,
                                                                     std::int64_t index) {
  const auto* p = reinterpret_cast<const typename Vector16<Real>::type*>(base) + index;
  // Streaming loads (evict-first) keep read-once data from displacing anything useful in L2.
  if constexpr (kStreaming) {
    return __ldcs(p);
  } else {
    return *p;
  }
}

template <class Real, bool kStreaming>
__device__ __forceinline__ void store_vector(Real* base, std::int64_t index,
                                             const Real (&values)[Vector16<Real>::kWidth]) {
  using V = typename Vector16<Real>::type;
  V v;
  if constexpr (Vector16<Real>::kWidth == 4) {
    v = V{values[0], values[1], values[2], values[3]};
  } else {
    v = V{values[0], values[1]};
  }
  auto* p = reinterpret_cast<V*>(base) + index;
  if constexpr (kStreaming) {
    __stcs(p, v);
  } else {
    *p = v;
  }
}

template <class Real>
__device__ __forceinline__ void unpack(const typename Vector16<Real>::type& v,
                                       Real (&out)[Vector16<Real>::kWidth]) {
  if constexpr (Vector16<Real>::kWidth == 4) {
    out[0] = v.x, out[1] = v.y, out[2] = v.z, out[3] = v.w;
  } else {
    out[0] = v.x, out[1] = v.y;
  }
}

template <class Real, bool kStreaming>
__device__ __forceinline__ void load_parameter(const PerOption<Real>& p, std::int64_t index,
                                               Real (&out)[Vector16<Real>::kWidth]) {
  if (p.values != nullptr) {
    unpack<Real>(load_vector<Real, kStreaming>(p.values, index), out);
  } else {
#pragma unroll
    for (int k = 0; k < Vector16<Real>::kWidth; ++k) out[k] = p.scalar;
  }
}

// The sides of vector `index`'s options: their bytes in one load, or the book's one side.
template <class Real, bool kStreaming>
__device__ __forceinline__ void load_sides(const PerOption<std::uint8_t>& is_put,
                                           std::int64_t index,
                                           bool (&out)[Vector16<Real>::kWidth]) {
  if (is_put.values != nullptr) {
    using Sides = typename Vector16<Real>::sides;
    const Sides* p = reinterpret_cast<const Sides*>(is_put.values) + index;
    Sides v;
    if constexpr (kStreaming) {
      v = __ldcs(p);
    } else {
      v = *p;
    }
    if constexpr (Vector16<Real>::kWidth == 4) {
      out[0] = v.x != 0, out[1] = v.y != 0, out[2] = v.z != 0, out[3] = v.w != 0;
    } else {
      out[0] = v.x != 0, out[1] = v.y != 0;
    }
  } else {
#pragma unroll
    for (int k = 0; k < Vector16<Real>::kWidth; ++k) out[k] = is_put.scalar != 0;
  }
}

__device__ __forceinline__ void prefetch_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}

template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean, int kVectorsPerThread,
          bool kStreaming>
__device__ __forceinline__ void black_scholes_vector_body(const BlackScholesInputs<Real>& in,
                                                          const BlackScholesOutputs<Real>& out) {
  constexpr int W = Vector16<Real>::kWidth;
  constexpr bool kLeanPrice = kLean && !kGreeks;
  load_lean_tables<Real, kLean>();
  // The lean arithmetic takes 1/sigma from its caller: in double (a reciprocal is ~10
  // instructions) a book-wide volatility's once per thread; in float it stays per option.
  constexpr bool kFastRcp = Cdf == NormalCdf::hull_polynomial_fast_math;
  constexpr bool kHoistInvVolatility = kLeanPrice && sizeof(Real) == sizeof(double);
  Real scalar_inv_volatility = Real(0);
  if (kHoistInvVolatility && in.volatility.values == nullptr) {
    scalar_inv_volatility = detail::lean_rcp<kFastRcp>(in.volatility.scalar);
  }
  // Double Hull takes both options of a vector at once, without a branch before the end
  // (price_lean_hull_double); a book without dividends skips their exponential.
  constexpr bool kLeanHullPair =
      kLeanPrice && sizeof(Real) == sizeof(double) && Cdf != NormalCdf::erfc;
  const bool has_dividend = in.dividend.values != nullptr || in.dividend.scalar != Real(0);
  // On a grid that strides (sm_filling), ask L2 for the next tile's inputs while this one is
  // priced, so that the next iteration's loads wait for L2, not for HBM: the pair path needs its
  // registers for the arithmetic, so it cannot hold the next tile's inputs itself. (Measured:
  // 0.735 -> 0.694 ms at 2 blocks per SM, double Hull, 2^26 options; see the case study.)
  constexpr bool kPrefetchNextTile = kLeanHullPair;
  const std::int64_t vector_count = in.count / W;
  const std::int64_t tile = static_cast<std::int64_t>(blockDim.x) * kVectorsPerThread;
  for (std::int64_t base = blockIdx.x * tile; base < vector_count;
       base += static_cast<std::int64_t>(gridDim.x) * tile) {
    Real spot[kVectorsPerThread][W], strike[kVectorsPerThread][W], maturity[kVectorsPerThread][W];
    Real rate[kVectorsPerThread][W], volatility[kVectorsPerThread][W];
    Real dividend[kVectorsPerThread][W];
    bool is_put[kVectorsPerThread][W];
    // All loads first: the memory system sees every request before the first dependent use.
#pragma unroll
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const std::int64_t v = base + u * blockDim.x + threadIdx.x;
      if (v < vector_count) {
        unpack<Real>(load_vector<Real, kStreaming>(in.spot, v), spot[u]);
        unpack<Real>(load_vector<Real, kStreaming>(in.strike, v), strike[u]);
        unpack<Real>(load_vector<Real, kStreaming>(in.maturity, v), maturity[u]);
        load_parameter<Real, kStreaming>(in.rate, v, rate[u]);
        load_parameter<Real, kStreaming>(in.volatility, v, volatility[u]);
        load_parameter<Real, kStreaming>(in.dividend, v, dividend[u]);
        load_sides<Real, kStreaming>(in.is_put, v, is_put[u]);
      }
    }
    if constexpr (kPrefetchNextTile) {
#pragma unroll
      for (int u = 0; u < kVectorsPerThread; ++u) {
        const std::int64_t next =
            base + static_cast<std::int64_t>(gridDim.x) * tile + u * blockDim.x + threadIdx.x;
        if (next < vector_count) {
          prefetch_l2(in.spot + W * next);
          prefetch_l2(in.strike + W * next);
          prefetch_l2(in.maturity + W * next);
          if (in.is_put.values != nullptr) prefetch_l2(in.is_put.values + W * next);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < kVectorsPerThread; ++u) {
      const std::int64_t v = base + u * blockDim.x + threadIdx.x;
      if (v >= vector_count) continue;
      Real price[W];
      Real delta[W], gamma[W], vega[W], theta[W], rho[W];
      if constexpr (kLeanHullPair) {
        double inv_volatility[W];
#pragma unroll
        for (int k = 0; k < W; ++k) {
          inv_volatility[k] = in.volatility.values == nullptr
                                  ? scalar_inv_volatility
                                  : detail::lean_rcp_moderate(volatility[u][k]);
        }
        if (has_dividend) {
          detail::price_lean_hull_double<W, true>(spot[u], strike[u], maturity[u], rate[u],
                                                  volatility[u], inv_volatility, dividend[u],
                                                  is_put[u], price);
        } else {
          detail::price_lean_hull_double<W, false>(spot[u], strike[u], maturity[u], rate[u],
                                                   volatility[u], inv_volatility, dividend[u],
                                                   is_put[u], price);
        }
      } else {
#pragma unroll
        for (int k = 0; k < W; ++k) {
          if constexpr (kLeanPrice) {
            const Real inv_volatility = kHoistInvVolatility && in.volatility.values == nullptr
                                            ? scalar_inv_volatility
                                            : detail::lean_rcp<kFastRcp>(volatility[u][k]);
            price[k] = detail::price_lean<Real, Cdf>(spot[u][k], strike[u][k], maturity[u][k],
                                                     rate[u][k], volatility[u][k], inv_volatility,
                                                     dividend[u][k], is_put[u][k]);
            continue;
          }
          const OptionResult<Real> r = price_one<Real, Cdf, kGreeks, kLean>(
              spot[u][k], strike[u][k], maturity[u][k], rate[u][k], volatility[u][k],
              dividend[u][k], is_put[u][k]);
          price[k] = r.price;
          if constexpr (kGreeks) {
            delta[k] = r.delta, gamma[k] = r.gamma, vega[k] = r.vega;
            theta[k] = r.theta, rho[k] = r.rho;
          }
        }
      }
      if (out.price) store_vector<Real, kStreaming>(out.price, v, price);
      if constexpr (kGreeks) {
        if (out.delta) store_vector<Real, kStreaming>(out.delta, v, delta);
        if (out.gamma) store_vector<Real, kStreaming>(out.gamma, v, gamma);
        if (out.vega) store_vector<Real, kStreaming>(out.vega, v, vega);
        if (out.theta) store_vector<Real, kStreaming>(out.theta, v, theta);
        if (out.rho) store_vector<Real, kStreaming>(out.rho, v, rho);
      }
    }
  }
  // The last count % W options, one per thread of the first block(s).
  const std::int64_t tail_begin = vector_count * W;
  for (std::int64_t i =
           tail_begin + static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < in.count; i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    price_and_store_one<Real, Cdf, kGreeks, kLean>(in, out, i);
  }
}

// kMinBlocksPerSm = 0: no register cap. (An explicit minimum of 1 is not the same to ptxas: it
// gives the exact-grid float erfc kernel 84 registers instead of 78, and 2 resident blocks
// instead of 3.)
template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean, int kVectorsPerThread,
          bool kStreaming>
__global__ void __launch_bounds__(kThreadsPerBlock)
    black_scholes_vector_kernel(BlackScholesInputs<Real> in, BlackScholesOutputs<Real> out) {
  black_scholes_vector_body<Real, Cdf, kGreeks, kLean, kVectorsPerThread, kStreaming>(in, out);
}

template <class Real, NormalCdf Cdf, bool kGreeks, bool kLean, int kVectorsPerThread,
          bool kStreaming, int kMinBlocksPerSm>
__global__ void __launch_bounds__(kThreadsPerBlock, kMinBlocksPerSm)
    black_scholes_vector_kernel_capped(BlackScholesInputs<Real> in, BlackScholesOutputs<Real> out) {
  black_scholes_vector_body<Real, Cdf, kGreeks, kLean, kVectorsPerThread, kStreaming>(in, out);
}

// ---------------------------------------------------------------------------------------------
// Launch plumbing: one dispatcher over (cdf, greeks) instead of a switch ladder per variant.

bool aligned(const void* p, std::uintptr_t bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0;  // nullptr is aligned
}

// Whether the vector kernels can load and store every array: 16 bytes of each array of Real, and
// the sides of a vector's options (one byte each) in one load.
template <class Real>
bool vectors_aligned(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out) {
  const void* pointers[] = {in.spot,
                            in.strike,
                            in.maturity,
                            in.rate.values,
                            in.volatility.values,
                            in.dividend.values,
                            out.price,
                            out.delta,
                            out.gamma,
                            out.vega,
                            out.theta,
                            out.rho};
  for (const void* p : pointers) {
    if (!aligned(p, 16)) return false;
  }
  return aligned(in.is_put.values, Vector16<Real>::kWidth);
}

// Enough resident blocks to fill every SM once (the "launch sized from the SM count" step).
template <class Kernel>
int sm_filling_grid(Kernel kernel) {
  return gpukit::cuda::detail::current_sm_count() *
         gpukit::cuda::detail::resident_blocks_per_sm(reinterpret_cast<const void*>(kernel),
                                                      kThreadsPerBlock);
}

enum class GridPolicy { seed_fixed, sm_filling, exact };

template <class Kernel, class Real>
void launch_kernel(Kernel kernel, GridPolicy policy, std::int64_t work_items,
                   const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                   StreamHandle stream) {
  std::int64_t blocks = 0;
  switch (policy) {
    case GridPolicy::seed_fixed:
      blocks = 128;
      break;  // the seed's <<<128, 256>>>
    case GridPolicy::sm_filling:
      blocks = sm_filling_grid(kernel);
      break;
    case GridPolicy::exact:
      blocks = (work_items + kThreadsPerBlock - 1) / kThreadsPerBlock;
      if (blocks < 1) blocks = 1;
      if (blocks > 0x7fffffff) blocks = 0x7fffffff;  // the kernels stride past the grid
      break;
  }
  kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(in, out);
  GPUKIT_CUDA_CHECK_LAUNCH("black_scholes kernel");
}

// Calls `launch(std::integral_constant<NormalCdf>, std::bool_constant<greeks>)`.
template <class F>
void dispatch(NormalCdf cdf, bool greeks, F&& launch) {
  auto with_cdf = [&](auto cdf_constant) {
    if (greeks) {
      launch(cdf_constant, std::true_type{});
    } else {
      launch(cdf_constant, std::false_type{});
    }
  };
  switch (cdf) {
    case NormalCdf::erfc:
      with_cdf(std::integral_constant<NormalCdf, NormalCdf::erfc>{});
      break;
    case NormalCdf::hull_polynomial:
      with_cdf(std::integral_constant<NormalCdf, NormalCdf::hull_polynomial>{});
      break;
    case NormalCdf::hull_polynomial_fast_math:
      with_cdf(std::integral_constant<NormalCdf, NormalCdf::hull_polynomial_fast_math>{});
      break;
  }
}

template <class Real, bool kLean = false>
void launch_grid_stride(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                        NormalCdf cdf, StreamHandle stream, GridPolicy policy) {
  if (in.count <= 0) return;
  dispatch(cdf, out.has_greeks(), [&](auto cdf_c, auto greeks_c) {
    launch_kernel(black_scholes_grid_stride_kernel<Real, decltype(cdf_c)::value,
                                                   decltype(greeks_c)::value, kLean>,
                  policy, in.count, in, out, stream);
  });
}

template <class Real, int kVectorsPerThread, bool kStreaming, bool kLean = false,
          int kMinBlocksPerSm = 0>
void launch_vectorized(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                       NormalCdf cdf, StreamHandle stream, GridPolicy policy) {
  if (in.count <= 0) return;
  if (!vectors_aligned(in, out)) {
    // 16-byte vectors need 16-byte aligned arrays; a misaligned view takes the scalar path.
    launch_grid_stride<Real, kLean>(in, out, cdf, stream, GridPolicy::sm_filling);
    return;
  }
  const std::int64_t vectors = in.count / Vector16<Real>::kWidth;
  const std::int64_t threads_needed =
      (vectors + kVectorsPerThread - 1) / kVectorsPerThread + in.count % Vector16<Real>::kWidth;
  dispatch(cdf, out.has_greeks(), [&](auto cdf_c, auto greeks_c) {
    constexpr NormalCdf kCdf = decltype(cdf_c)::value;
    constexpr bool kGreeks = decltype(greeks_c)::value;
    if constexpr (kMinBlocksPerSm == 0) {
      launch_kernel(
          black_scholes_vector_kernel<Real, kCdf, kGreeks, kLean, kVectorsPerThread, kStreaming>,
          policy, threads_needed, in, out, stream);
    } else {
      launch_kernel(
          black_scholes_vector_kernel_capped<Real, kCdf, kGreeks, kLean, kVectorsPerThread,
                                             kStreaming, kMinBlocksPerSm>,
          policy, threads_needed, in, out, stream);
    }
  });
}

}  // namespace

template <class Real>
void launch_seed(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                 NormalCdf cdf, StreamHandle stream) {
  launch_grid_stride(in, out, cdf, stream, GridPolicy::seed_fixed);
}

template <class Real>
void launch_sm_count_grid(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                          NormalCdf cdf, StreamHandle stream) {
  launch_grid_stride(in, out, cdf, stream, GridPolicy::sm_filling);
}

template <class Real>
void launch_vector_io(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                      NormalCdf cdf, StreamHandle stream) {
  launch_vectorized<Real, 1, false>(in, out, cdf, stream, GridPolicy::sm_filling);
}

template <class Real>
void launch_vector_io_ilp(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                          NormalCdf cdf, StreamHandle stream) {
  launch_vectorized<Real, 2, false>(in, out, cdf, stream, GridPolicy::sm_filling);
}

template <class Real>
void launch_streaming(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                      NormalCdf cdf, StreamHandle stream) {
  launch_vectorized<Real, 2, true>(in, out, cdf, stream, GridPolicy::sm_filling);
}

template <class Real>
void launch_exact_grid(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                       NormalCdf cdf, StreamHandle stream) {
  launch_vectorized<Real, 2, true>(in, out, cdf, stream, GridPolicy::exact);
}

template <class Real>
void launch_lean_math(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                      NormalCdf cdf, StreamHandle stream) {
  launch_vectorized<Real, 1, false, true, 1>(in, out, cdf, stream, GridPolicy::sm_filling);
}

template <class Real>
void launch_lean_exact_grid(const BlackScholesInputs<Real>& in,
                            const BlackScholesOutputs<Real>& out, NormalCdf cdf,
                            StreamHandle stream) {
  launch_vectorized<Real, 1, true, true, 1>(in, out, cdf, stream, GridPolicy::exact);
}

// The lean kernels are latency-bound at 2-3 resident blocks (the FP64 chains of exp and log
// most). Float and double erfc: capping registers at 48 for 5 blocks per SM on the exact grid.
// Double Hull, which prices both options of a vector at once and prefetches its next tile into
// L2: lean-math's kernel (SM-filling grid, no cap, 2 blocks per SM). Without the prefetch a cap
// of 64 registers (4 blocks) was best; with it, 2 blocks beat 4, and 48 registers spill. (The
// case study's "Lean arithmetic" section has the figures.)
template <class Real>
void launch_lean_occupancy(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                           NormalCdf cdf, StreamHandle stream) {
  // Greeks keep lean-exact-grid's kernel: under the cap their six outputs would spill.
  if (out.has_greeks()) {
    launch_lean_exact_grid(in, out, cdf, stream);
  } else if (sizeof(Real) == sizeof(double) && cdf != NormalCdf::erfc) {
    launch_lean_math(in, out, cdf, stream);
  } else {
    launch_vectorized<Real, 1, true, true, 5>(in, out, cdf, stream, GridPolicy::exact);
  }
}

GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_seed)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_sm_count_grid)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_vector_io)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_vector_io_ilp)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_streaming)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_exact_grid)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_lean_math)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_lean_exact_grid)
GPUKIT_INSTANTIATE_PER_TYPE(RealTypes, BlackScholesLaunch, launch_lean_occupancy)

}  // namespace gpukit::finance::cuda_detail
