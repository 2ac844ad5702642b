// The CUDA implied volatility kernel: one thread a row, the arithmetic of
// implied_volatility_math.hpp (the CPU backend's, with CUDA's erfc, erfcx and normcdfinv). Rows
// are independent and the method has a fixed number of steps (a guess, at most two Householder
// steps), so a warp diverges only where its rows take different branches.

#include <cuda_runtime.h>

#include <cstdint>

#include "core/cuda/check.hpp"
#include "finance/cuda/implied_volatility_launchers.hpp"
#include "finance/implied_volatility_math.hpp"

namespace gpukit::finance::cuda_detail {

namespace {

// 128 threads a block: the double kernel holds many registers, and small blocks let the
// scheduler fill an SM's register file with whole blocks.
struct ImpliedVolatilityPolicy {
  static constexpr int threads = 128;
};

template <class Real, VolatilityModel kModel>
__global__ void __launch_bounds__(ImpliedVolatilityPolicy::threads)
    implied_volatility_kernel(ImpliedVolatilityInputs<Real> in,
                              ImpliedVolatilityOutputs<Real> out) {
  const std::int64_t i =
      static_cast<std::int64_t>(blockIdx.x) * blockDim.x + static_cast<std::int64_t>(threadIdx.x);
  if (i < in.count) detail::implied_volatility_and_store<Real, kModel>(in, out, i);
}

template <class Real, VolatilityModel kModel>
void launch_model(const ImpliedVolatilityInputs<Real>& in,
                  const ImpliedVolatilityOutputs<Real>& out, StreamHandle stream) {
  constexpr int threads = ImpliedVolatilityPolicy::threads;
  // One thread a row: 2^31 - 1 blocks of 128 reach 2^38 rows, beyond any device memory.
  const std::int64_t blocks = (in.count + threads - 1) / threads;
  implied_volatility_kernel<Real, kModel>
      <<<static_cast<unsigned>(blocks), threads, 0, stream>>>(in, out);
  GPUKIT_CUDA_CHECK_LAUNCH("implied_volatility kernel");
}

}  // namespace

template <class Real>
void launch_implied_volatility(const ImpliedVolatilityInputs<Real>& in,
                               const ImpliedVolatilityOutputs<Real>& out, VolatilityModel model,
                               StreamHandle stream) {
  switch (model) {
    case VolatilityModel::black_scholes:
      return launch_model<Real, VolatilityModel::black_scholes>(in, out, stream);
    case VolatilityModel::black76:
      return launch_model<Real, VolatilityModel::black76>(in, out, stream);
    case VolatilityModel::bachelier:
      return launch_model<Real, VolatilityModel::bachelier>(in, out, stream);
  }
}

template void launch_implied_volatility<float>(const ImpliedVolatilityInputs<float>&,
                                               const ImpliedVolatilityOutputs<float>&,
                                               VolatilityModel, StreamHandle);
template void launch_implied_volatility<double>(const ImpliedVolatilityInputs<double>&,
                                                const ImpliedVolatilityOutputs<double>&,
                                                VolatilityModel, StreamHandle);

}  // namespace gpukit::finance::cuda_detail
