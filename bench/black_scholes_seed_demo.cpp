#include "bench/black_scholes_seed_demo.hpp"

#include <chrono>
#include <limits>

#include "bench/harness.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"

namespace gpukit::bench {

namespace {

// splitmix64: a fixed, documented generator so a (count, seed) book is the same everywhere.
std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double uniform(std::uint64_t& state, double low, double high) {
  const double u = static_cast<double>(splitmix64(state) >> 11) * 0x1.0p-53;
  return low + (high - low) * u;
}

template <class Real>
std::vector<Real> converted(const std::vector<double>& v) {
  return std::vector<Real>(v.begin(), v.end());
}

double host_ms(const std::function<void()>& work) {
  const auto t0 = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

GeneratedBook generate_seed_book(std::int64_t count, std::uint64_t seed) {
  GeneratedBook book;
  const auto n = static_cast<std::size_t>(count);
  book.spot.resize(n), book.strike.resize(n), book.maturity.resize(n), book.is_put.resize(n);
  std::uint64_t state = seed;
  for (std::size_t i = 0; i < n; ++i) {
    book.spot[i] = uniform(state, 5.0, 30.0);
    book.strike[i] = uniform(state, 1.0, 100.0);
    book.maturity[i] = uniform(state, 0.25, 10.0);
    book.is_put[i] = static_cast<std::uint8_t>(i % 2);
  }
  return book;
}

BlackScholesSeedDemo run_black_scholes_seed_demo(const Context& context, std::int64_t options,
                                                 std::uint64_t seed) {
  using finance::BlackScholesInputs;
  using finance::BlackScholesOutputs;
  BlackScholesSeedDemo demo;
  demo.options = options;
  demo.device = context.describe();
  demo.cpu_threads = context.effective_cpu_threads();
  const GeneratedBook book = generate_seed_book(options, seed);

  const auto n = static_cast<std::size_t>(options);

  std::vector<float> spot = converted<float>(book.spot), strike = converted<float>(book.strike),
                     maturity = converted<float>(book.maturity);
  // Poisoned: a price the kernel never writes fails the check.
  std::vector<float> price(n, std::numeric_limits<float>::quiet_NaN());
  BlackScholesInputs<float> host_in{options,
                                    spot.data(),
                                    strike.data(),
                                    maturity.data(),
                                    {nullptr, static_cast<float>(book.rate)},
                                    {nullptr, static_cast<float>(book.volatility)},
                                    {},
                                    {book.is_put.data(), 0}};

  if (context.backend == Backend::cpu) {
    demo.kernel_default_ms = host_ms([&] {
      finance::price_black_scholes(context, host_in, BlackScholesOutputs<float>{price.data()});
    });
  } else {
    demo.on_gpu = true;
    cuda::set_device(context.cuda_device);
    const std::size_t bytes = n * sizeof(float);
    cuda::DeviceBuffer<float> d_spot(n), d_strike(n), d_maturity(n), d_price(n);
    cuda::DeviceBuffer<std::uint8_t> d_is_put(n);
    // Slide 12: blocking copies from pageable (malloc'ed) memory.
    demo.h2d_pageable_ms = host_ms([&] {
      cuda::copy_to_device(d_spot.data(), spot.data(), bytes);
      cuda::copy_to_device(d_strike.data(), strike.data(), bytes);
      cuda::copy_to_device(d_maturity.data(), maturity.data(), bytes);
      cuda::copy_to_device(d_is_put.data(), book.is_put.data(), n);
    });
    BlackScholesInputs<float> d_in = host_in;
    d_in.spot = d_spot.data(), d_in.strike = d_strike.data(), d_in.maturity = d_maturity.data();
    d_in.is_put.values = d_is_put.data();
    BlackScholesOutputs<float> d_out{d_price.data()};
    cuda::Stream stream;
    const auto& seed_variant = finance::find_black_scholes_variant("seed");
    const auto& best = finance::default_black_scholes_variant();
    demo.kernel_seed_ms = median(time_on_stream(stream.handle(), 2, 10, [&] {
      seed_variant.launch(d_in, d_out, finance::NormalCdf::hull_polynomial, stream.handle());
    }));
    demo.kernel_default_ms = median(time_on_stream(stream.handle(), 2, 10, [&] {
      best.launch(d_in, d_out, finance::NormalCdf::erfc, stream.handle());
    }));
    demo.d2h_pageable_ms =
        host_ms([&] { cuda::copy_to_host(price.data(), d_price.data(), bytes); });
    // Slide 15: the same copies from page-locked memory.
    cuda::PinnedBuffer<float> pinned(4 * n);
    demo.h2d_pinned_ms = host_ms([&] {
      cuda::copy_to_device(d_spot.data(), pinned.data(), bytes);
      cuda::copy_to_device(d_strike.data(), pinned.data() + n, bytes);
      cuda::copy_to_device(d_maturity.data(), pinned.data() + 2 * n, bytes);
      cuda::copy_to_device(d_is_put.data(), pinned.data() + 3 * n, n);
    });
    demo.d2h_pinned_ms = host_ms([&] { cuda::copy_to_host(pinned.data(), d_price.data(), bytes); });
  }

  // The check: every float price against the long double reference on the same (float)
  // inputs, within its own bound (never the CPU's own float or double path).
  demo.cpu_reference_ms = host_ms([&] {
    demo.check = finance::check_black_scholes_prices<float>(
        host_in, price, finance::NormalCdf::erfc, demo.cpu_threads);
  });
  demo.error = demo.check.metrics;
  return demo;
}

}  // namespace gpukit::bench
