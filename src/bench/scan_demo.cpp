#include "gpukit/bench/scan_demo.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/scan.hpp"

namespace gpukit::bench {

bool ScanDemo::passed() const {
  return example_scan == std::vector<std::int32_t>{0, 3, 4, 11, 11, 15, 16, 22} &&
         float_bits_equal && kept_equal && kept == kept_reference;
}

ScanDemo run_scan_demo(const Context& context, std::int64_t count, std::uint64_t seed) {
  using primitives::ScanKind;
  using primitives::ScanOp;
  ScanDemo demo;
  demo.example = {3, 1, 7, 0, 4, 1, 6, 3};
  demo.example_scan.resize(demo.example.size());
  primitives::scan<std::int32_t>(context, demo.example, demo.example_scan, ScanOp::sum,
                                 ScanKind::exclusive);

  std::mt19937_64 rng(seed);
  std::vector<float> x(static_cast<std::size_t>(count));
  for (float& v : x) v = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1);
  demo.count = count;
  std::vector<float> on_device(x.size()), on_cpu(x.size()), sequential(x.size());
  const auto t0 = std::chrono::steady_clock::now();
  primitives::scan<float>(context, x, on_device, ScanOp::sum, ScanKind::inclusive);
  demo.device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  primitives::scan<float>(Context::cpu(context.cpu_threads), x, on_cpu, ScanOp::sum,
                          ScanKind::inclusive);
  primitives::scan_sequential<float>(x, sequential, ScanOp::sum, ScanKind::inclusive);
  demo.float_bits_equal = std::memcmp(on_device.data(), on_cpu.data(), x.size() * 4) == 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    demo.max_abs_vs_sequential =
        std::max(demo.max_abs_vs_sequential, std::fabs(double(on_device[i]) - sequential[i]));
  }

  std::vector<float> kept(x.size()), kept_reference(x.size());
  demo.kept = primitives::compact<float>(context, x, kept, primitives::KeepPredicate::positive);
  demo.kept_reference =
      primitives::compact_sequential<float>(x, kept_reference, primitives::KeepPredicate::positive);
  demo.kept_equal = std::memcmp(kept.data(), kept_reference.data(),
                                static_cast<std::size_t>(demo.kept_reference) * 4) == 0;
  return demo;
}

}  // namespace gpukit::bench
