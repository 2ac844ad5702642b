#include "bench/saxpy_demo.hpp"

#include <chrono>
#include <random>
#include <vector>

#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::bench {

SaxpyDemo run_saxpy_demo(const Context& context, std::int64_t count, std::uint64_t seed) {
  SaxpyDemo demo;
  demo.count = count;
  demo.alpha = 2.0f;  // the seed's program: y = 2 x + y
  demo.on_gpu = context.backend == Backend::cuda;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const auto n = static_cast<std::size_t>(count);
  std::vector<float> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) x[i] = uniform(rng), y[i] = uniform(rng);
  std::vector<float> result = y;
  blas::AxpyRounding rounding = blas::AxpyRounding::fused_or_separate;
  if (demo.on_gpu) {
    // The seed's program, step by step: device arrays, copies in (from pageable memory, as the
    // program's malloc'd arrays are), the kernel on y in place, the copy back; each phase between
    // events on the legacy default stream, on which all of them run in order.
    cuda::set_device(context.cuda_device);
    const blas::SaxpyVariant& seed_kernel = blas::find_saxpy_variant("seed");
    rounding = seed_kernel.rounding;
    cuda::DeviceBuffer<float> d_x(n), d_y(n);
    const cuda::Event start, copied_in, computed, copied_out;
    start.record(nullptr);
    d_x.copy_from_host(x);
    d_y.copy_from_host(y);
    copied_in.record(nullptr);
    seed_kernel.launch<float>(demo.alpha, d_x.data(), d_y.data(), d_y.data(), count, nullptr);
    computed.record(nullptr);
    d_y.copy_to_host(result);
    copied_out.record(nullptr);
    copied_out.synchronize();
    demo.to_device_ms = cuda::Event::elapsed_ms(start, copied_in);
    demo.kernel_ms = cuda::Event::elapsed_ms(copied_in, computed);
    demo.from_device_ms = cuda::Event::elapsed_ms(computed, copied_out);
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    blas::axpy<float>(context, demo.alpha, x, result, result);
    demo.kernel_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  demo.check = blas::check_axpy_result<float>(demo.alpha, x, y, result, rounding);
  return demo;
}

}  // namespace gpukit::bench
