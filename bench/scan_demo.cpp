#include "bench/scan_demo.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "gpukit/core/verify.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_canonical.hpp"

namespace gpukit::bench {

double canonical_scan_depth(std::int64_t index) {
  // The fixed bracketing (scan_canonical.hpp), per term of output `index`: 18 additions up to a
  // tile aggregate (slot fold 3, lane Kogge-Stone 5, row fold 3, warp fold 7), 5 in the group's
  // Kogge-Stone, one per earlier group on the carry chain, then E and the three prefixes and the
  // element's own fold: 28 + groups. The GPU host path's chunk carries (every 2^24 elements)
  // add a few more per chunk; doubling the per-group count covers them.
  const std::int64_t group = index / (std::int64_t{primitives::canonical_scan::kTile} *
                                      primitives::canonical_scan::kGroupTiles);
  return 32.0 + 2.0 * static_cast<double>(group);
}

FloatScanCheck check_float_scan(std::span<const float> x, std::span<const float> inclusive) {
  FloatScanCheck c;
  if (x.size() != inclusive.size()) return c;  // not passed
  // The reference: a sequential running sum in long double (another order and precision).
  long double sum = 0, abs_sum = 0;
  c.passed = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sum += x[i];
    abs_sum += std::fabs(x[i]);
    const double difference =
        std::fabs(static_cast<double>(inclusive[i]) - static_cast<double>(sum));
    const double bound =
        summation_error_bound<float>(canonical_scan_depth(static_cast<std::int64_t>(i)),
                                     static_cast<double>(abs_sum)) +
        summation_error_bound<long double>(static_cast<double>(i + 1),
                                           static_cast<double>(abs_sum));
    const double ratio = difference == 0 ? 0.0 : difference / bound;
    if (!(ratio <= c.worst_ratio) && !std::isnan(c.worst_ratio)) {
      c.worst_ratio = ratio;
      c.worst_index = static_cast<std::int64_t>(i);
    }
    if (!(difference <= c.max_abs)) c.max_abs = difference;
    if (!(difference <= bound)) c.passed = false;
  }
  return c;
}

bool ScanDemo::passed() const {
  return example_scan == std::vector<std::int32_t>{0, 3, 4, 11, 11, 15, 16, 22} &&
         float_check.passed && (!on_gpu || float_bits_equal_cpu) && kept_equal &&
         kept == kept_reference;
}

ScanDemo run_scan_demo(const Context& context, std::int64_t count, std::uint64_t seed) {
  using primitives::ScanKind;
  using primitives::ScanOp;
  ScanDemo demo;
  demo.on_gpu = context.backend != Backend::cpu;
  demo.example = {3, 1, 7, 0, 4, 1, 6, 3};
  demo.example_scan.resize(demo.example.size());
  primitives::scan<std::int32_t>(context, demo.example, demo.example_scan, ScanOp::sum,
                                 ScanKind::exclusive);

  std::mt19937_64 rng(seed);
  std::vector<float> x(static_cast<std::size_t>(count));
  for (float& v : x) v = static_cast<float>(static_cast<double>(rng() >> 11) * 0x1p-53 * 2 - 1);
  demo.count = count;
  std::vector<float> on_device(x.size(), std::numeric_limits<float>::quiet_NaN());  // poisoned
  const auto t0 = std::chrono::steady_clock::now();
  primitives::scan<float>(context, x, on_device, ScanOp::sum, ScanKind::inclusive);
  demo.device_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  demo.float_check = check_float_scan(x, on_device);
  if (demo.on_gpu) {
    // The GPU must also give the CPU backend's bits (the same bracketing), on top of the check.
    std::vector<float> on_cpu(x.size());
    primitives::scan<float>(Context::cpu(context.cpu_threads), x, on_cpu, ScanOp::sum,
                            ScanKind::inclusive);
    demo.float_bits_equal_cpu =
        std::memcmp(on_device.data(), on_cpu.data(), x.size() * sizeof(float)) == 0;
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
