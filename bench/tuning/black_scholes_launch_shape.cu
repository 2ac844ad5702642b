// Black-Scholes launch shape: the lean kernel (prices only, 16-byte vectors, one vector a
// thread) under each launch shape, timed alternately in one process: the SM-filling grid or one
// tile a block (the exact grid), with the `__launch_bounds__` minimum of N resident blocks an SM
// that caps its registers (capN; cap1 is what the library's lean-math and lean-exact-grid use).
// Every shape's prices (calls and puts alternating, each option its own side) are checked against
// the library's CPU backend, each within twice black_scholes_price_bound (both within one bound of
// the exact price), before it is timed. The A/B figures of docs/journal/black_scholes-notebook.md
// ("A/B figures") were taken with a development driver of this kind (which, like this one, compiled
// black_scholes_kernels.cu into itself so that every launch shape is reachable).
//
//   gpukit_tune_black_scholes --options=2^26 --precision=double --cdf=hull

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "tuning_common.hpp"

// The kernels' source, compiled into this driver so that the launch plumbing (launch_kernel,
// GridPolicy) and both kernel templates are reachable. Its explicitly instantiated launchers then
// come from this translation unit instead of the library's copy, which is the same source.
#include "finance/cuda/black_scholes_kernels.cu"

namespace {

namespace fin = gpukit::finance;
namespace bs = gpukit::finance::cuda_detail;
using gpukit::tuning::Timing;

struct Shape {
  const char* name;
  const char* what;
};
constexpr Shape kShapes[] = {
    {"sm-cap1", "SM-filling grid, cap1 (lean-math)"},
    {"sm-cap3", "SM-filling grid, 3 blocks an SM"},
    {"sm-cap4", "SM-filling grid, 4 blocks an SM"},
    {"exact-cap1", "one tile a block, cap1 (lean-exact-grid)"},
    {"exact-cap4", "one tile a block, 4 blocks an SM"},
    {"exact-cap5", "one tile a block, 5 blocks an SM (lean-occupancy, float and erfc)"},
};

// One launch of the lean vector kernel, prices only, with the shape's grid and register cap.
// As the library's lean-math does, the SM-filling grid loads plainly (it prefetches its next tile
// into L2) and the exact grid with streaming hints.
template <class Real, fin::NormalCdf kCdf, bool kSmFilling, int kMinBlocks>
void launch_shape(const fin::BlackScholesInputs<Real>& in,
                  const fin::BlackScholesOutputs<Real>& out, cudaStream_t stream) {
  constexpr bool kStreaming = !kSmFilling;
  const std::int64_t vectors = in.count / bs::Vector16<Real>::kWidth;
  const std::int64_t threads_needed = vectors + in.count % bs::Vector16<Real>::kWidth;
  bs::launch_kernel(
      bs::black_scholes_vector_kernel_capped<Real, kCdf, false, true, 1, kStreaming, kMinBlocks>,
      kSmFilling ? bs::GridPolicy::sm_filling : bs::GridPolicy::exact, threads_needed, in, out,
      stream);
}

template <class Real, fin::NormalCdf kCdf>
void launch_named(const std::string& shape, const fin::BlackScholesInputs<Real>& in,
                  const fin::BlackScholesOutputs<Real>& out, cudaStream_t stream) {
  if (shape == "sm-cap1") return launch_shape<Real, kCdf, true, 1>(in, out, stream);
  if (shape == "sm-cap3") return launch_shape<Real, kCdf, true, 3>(in, out, stream);
  if (shape == "sm-cap4") return launch_shape<Real, kCdf, true, 4>(in, out, stream);
  if (shape == "exact-cap1") return launch_shape<Real, kCdf, false, 1>(in, out, stream);
  if (shape == "exact-cap4") return launch_shape<Real, kCdf, false, 4>(in, out, stream);
  if (shape == "exact-cap5") return launch_shape<Real, kCdf, false, 5>(in, out, stream);
  throw std::invalid_argument("unknown shape " + shape + " (see --help)");
}

template <class Real>
void launch(const std::string& shape, fin::NormalCdf cdf, const fin::BlackScholesInputs<Real>& in,
            const fin::BlackScholesOutputs<Real>& out, cudaStream_t stream) {
  if (cdf == fin::NormalCdf::erfc) {
    launch_named<Real, fin::NormalCdf::erfc>(shape, in, out, stream);
  } else {
    launch_named<Real, fin::NormalCdf::hull_polynomial>(shape, in, out, stream);
  }
}

template <class Real>
void run(const gpukit::tuning::Knobs& knobs) {
  const std::int64_t n = knobs.integer("options");
  if (n <= 0) throw std::invalid_argument("--options must be positive");
  const std::string cdf_name = knobs.text("cdf");
  if (cdf_name != "erfc" && cdf_name != "hull")
    throw std::invalid_argument("--cdf is erfc or hull");
  const fin::NormalCdf cdf =
      cdf_name == "erfc" ? fin::NormalCdf::erfc : fin::NormalCdf::hull_polynomial;
  const int warmup = int(knobs.integer("warmup"));
  const int repeat = int(knobs.integer("repeat"));
  const int rounds = int(knobs.integer("rounds"));
  const std::vector<std::string> shapes = knobs.words("shapes");

  // The seed's book: spot in [5, 30], strike in [1, 100], maturity in [0.25, 10] years; one rate
  // and volatility for the book (0.02, 0.30), no dividend; calls and puts alternating.
  const auto count = static_cast<std::size_t>(n);
  std::vector<Real> spot(count), strike(count), maturity(count);
  std::vector<std::uint8_t> is_put(count);
  const auto seed = static_cast<std::uint64_t>(knobs.integer("seed"));
  for (std::size_t i = 0; i < count; ++i) {
    spot[i] = static_cast<Real>(5 + 25 * gpukit::tuning::uniform01(seed, 3 * i));
    strike[i] = static_cast<Real>(1 + 99 * gpukit::tuning::uniform01(seed, 3 * i + 1));
    maturity[i] = static_cast<Real>(0.25 + 9.75 * gpukit::tuning::uniform01(seed, 3 * i + 2));
    is_put[i] = static_cast<std::uint8_t>(i % 2);
  }
  fin::BlackScholesInputs<Real> host_in;
  host_in.count = n;
  host_in.spot = spot.data();
  host_in.strike = strike.data();
  host_in.maturity = maturity.data();
  host_in.rate.scalar = Real(0.02);
  host_in.volatility.scalar = Real(0.30);
  host_in.dividend.scalar = Real(0);
  host_in.is_put.values = is_put.data();
  std::vector<Real> cpu_price(count);
  fin::BlackScholesOptions options;
  options.cdf = cdf;
  fin::price_black_scholes<Real>(gpukit::Context::cpu(), host_in, {cpu_price.data()}, options);

  const std::size_t bytes = count * sizeof(Real);
  Real* d[4] = {};
  for (Real*& p : d) GPUKIT_TUNING_CHECK(cudaMalloc(&p, bytes));
  std::uint8_t* d_is_put = nullptr;
  GPUKIT_TUNING_CHECK(cudaMalloc(&d_is_put, count));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d[0], spot.data(), bytes, cudaMemcpyHostToDevice));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d[1], strike.data(), bytes, cudaMemcpyHostToDevice));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d[2], maturity.data(), bytes, cudaMemcpyHostToDevice));
  GPUKIT_TUNING_CHECK(cudaMemcpy(d_is_put, is_put.data(), count, cudaMemcpyHostToDevice));
  fin::BlackScholesInputs<Real> in = host_in;
  in.spot = d[0];
  in.strike = d[1];
  in.maturity = d[2];
  in.is_put.values = d_is_put;
  fin::BlackScholesOutputs<Real> out;
  out.price = d[3];
  cudaStream_t stream;
  GPUKIT_TUNING_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // Checked first, into poisoned outputs: every price against the CPU's.
  for (const std::string& shape : shapes) {
    GPUKIT_TUNING_CHECK(cudaMemsetAsync(out.price, 0xFF, bytes, stream));
    launch<Real>(shape, cdf, in, out, stream);
    GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
    std::vector<Real> price(count);
    GPUKIT_TUNING_CHECK(cudaMemcpy(price.data(), out.price, bytes, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double bound =
          2 * fin::black_scholes_price_bound<Real>(spot[i], strike[i], maturity[i], 0.02, 0, cdf);
      const double e = std::abs(double(price[i]) - double(cpu_price[i]));
      if (!(e <= bound)) {  // NaN fails
        throw std::runtime_error(shape + ": option " + std::to_string(i) +
                                 " differs from the CPU by " + std::to_string(e) +
                                 ", above the bound " + std::to_string(bound));
      }
      worst = std::max(worst, e);
    }
    std::printf("# %s: every price within its bound of the CPU's (max |GPU - CPU| %.3g)\n",
                shape.c_str(), worst);
  }

  // Every shape in turn, `rounds` times, so that drift of the clocks touches them alike.
  // Spot, strike, maturity and the side (a byte) in; the price out.
  const double moved = double(n) * (4 * sizeof(Real) + 1);
  const Timing copy = gpukit::tuning::time_copy(stream, std::size_t(moved / 2), warmup, repeat);
  std::printf("%-11s %6s %24s %12s %9s %8s  %s\n", "shape", "round", "median ms (min-max)",
              "G options/s", "GB/s", "% copy", "what");
  for (int round = 1; round <= rounds; ++round) {
    for (const std::string& shape : shapes) {
      const Timing t = gpukit::tuning::time_calls(
          stream, warmup, repeat, [&] { launch<Real>(shape, cdf, in, out, stream); });
      const char* what = "";
      for (const Shape& s : kShapes) {
        if (shape == s.name) what = s.what;
      }
      char range[64];
      std::snprintf(range, sizeof range, "%.4f (%.4f-%.4f)", t.median_ms, t.min_ms, t.max_ms);
      std::printf("%-11s %6d %24s %12.2f %9.0f %7.1f%%  %s\n", shape.c_str(), round, range,
                  double(n) / (t.median_ms * 1e6), moved / (t.median_ms * 1e6),
                  100.0 * copy.median_ms / t.median_ms, what);
    }
  }
  for (Real* p : d) GPUKIT_TUNING_CHECK(cudaFree(p));
  GPUKIT_TUNING_CHECK(cudaFree(d_is_put));
  GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_black_scholes",
        {{"options", "2^26|options in the book"},
         {"precision", "double|float or double"},
         {"cdf", "hull|hull (the seed's polynomial) or erfc"},
         {"shapes", "sm-cap1,sm-cap3,sm-cap4,exact-cap1,exact-cap4,exact-cap5|launch shapes"},
         {"rounds", "2|times every shape is timed, in turn"},
         {"warmup", "3|untimed calls before the samples"},
         {"repeat", "21|samples (the median is reported)"},
         {"seed", "1|seed of the book"}});
    gpukit::tuning::print_device(knobs.summary());
    gpukit::tuning::for_precision(knobs.text("precision"),
                                  [&](auto zero) { run<decltype(zero)>(knobs); });
  });
}
