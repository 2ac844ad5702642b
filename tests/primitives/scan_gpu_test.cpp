// Every registered CUDA scan variant x type x operation x kind against the sequential reference
// at awkward sizes (up to 2^24), aligned and misaligned, with poisoned outputs; the default
// variant bitwise against the CPU backend (20 repeats, misaligned, in place, data where the order
// of additions matters); the overflow report of scan_on_device. The public API on every backend
// (the CUDA host path included): scan_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/primitives/scan_variants.hpp"
#include "scan_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

using gpukit::testing::TestSeed;
using testing::all_scan_ops;
using testing::make_scan_data;
using testing::poisoned;
using testing::same_elements;
using testing::scan_sizes;

// Device input and output, each starting `misalign` elements past an allocation's start;
// `in_place` makes them one array.
template <class T>
struct DeviceScanArrays {
  cuda::DeviceBuffer<T> in_buffer, out_buffer;
  T* in = nullptr;
  T* out = nullptr;
  DeviceScanArrays(const std::vector<T>& data, std::size_t misalign, bool in_place) {
    in_buffer = cuda::DeviceBuffer<T>(data.size() + misalign + 1);
    in = in_buffer.data() + misalign;
    if (!data.empty()) cuda::copy_to_device(in, data.data(), data.size() * sizeof(T));
    if (in_place) {
      out = in;
    } else {
      out_buffer = cuda::DeviceBuffer<T>(data.size() + misalign + 1);
      out = out_buffer.data() + misalign;
      cuda::fill_bytes_async(out_buffer.data(), 0xA5, out_buffer.size() * sizeof(T), nullptr);
    }
    cuda::synchronize_device();
  }
  std::vector<T> result(std::size_t n) const {
    std::vector<T> y(n);
    if (n > 0) cuda::copy_to_host(y.data(), out, n * sizeof(T));
    return y;
  }
};

template <class T>
std::vector<T> run_variant(const ScanVariant& v, const std::vector<T>& x, ScanOp op, ScanKind kind,
                           ScanWorkspace& workspace, cuda::Stream& stream, std::size_t misalign = 0,
                           bool in_place = false) {
  DeviceScanArrays<T> arrays(x, misalign, in_place);
  v.launch(arrays.in, arrays.out, static_cast<std::int64_t>(x.size()), op, kind, workspace,
           stream.handle());
  stream.synchronize();
  return arrays.result(x.size());
}

template <class T>
std::vector<T> reference(const std::vector<T>& x, ScanOp op, ScanKind kind) {
  std::vector<T> y(x.size());
  scan_sequential<T>(x, y, op, kind);
  return y;
}

Context cpu_context() {
  Context context;
  context.backend = Backend::cpu;
  return context;
}

template <class T>
class ScanGpuTest : public ::testing::Test {};
using ElementTypes = ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, float, double>;
TYPED_TEST_SUITE(ScanGpuTest, ElementTypes);

TYPED_TEST(ScanGpuTest, EveryVariantMatchesTheSequentialReference) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const TestSeed seed;
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : scan_sizes(/*large=*/!gpukit::testing::quick_tests(), seed.value())) {
    for (const ScanOp op : all_scan_ops()) {
      for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
        const auto x = make_scan_data<T>(n, op, seed.value() + static_cast<std::uint64_t>(n));
        const auto expected = reference(x, op, kind);
        for (const ScanVariant& v : scan_variants()) {
          if (n > v.max_count) continue;
          // Misaligned by one element on odd sizes: the vector paths must fall back.
          const std::size_t misalign = n % 2;
          EXPECT_TRUE(
              same_elements(expected, run_variant(v, x, op, kind, workspace, stream, misalign)))
              << v.info.name << " n=" << n << " op=" << scan_op_name(op) << " "
              << scan_kind_name(kind) << " misalign=" << misalign;
        }
      }
    }
  }
}

TYPED_TEST(ScanGpuTest, InPlaceVariantsScanInPlace) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const TestSeed seed;
  ScanWorkspace workspace;
  cuda::Stream stream;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{4097}, std::int64_t{1} << 20}) {
    const auto x = make_scan_data<T>(n, ScanOp::sum, seed.value());
    for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
      for (const ScanVariant& v : scan_variants()) {
        if (!v.info.in_place || n > v.max_count) continue;
        EXPECT_TRUE(same_elements(reference(x, ScanOp::sum, kind),
                                  run_variant(v, x, ScanOp::sum, kind, workspace, stream, 0,
                                              /*in_place=*/true)))
            << v.info.name << " n=" << n;
      }
    }
  }
}

TYPED_TEST(ScanGpuTest, DefaultVariantIsBitwiseTheCpuBackendAndRepeatable) {
  GPUKIT_REQUIRE_GPU();
  using T = TypeParam;
  const TestSeed seed;
  // For floats, min/max-style data of mixed magnitudes: sums whose rounding depends on order.
  const std::int64_t n = (std::int64_t{1} << (gpukit::testing::quick_tests() ? 16 : 22)) + 12345;
  const auto x =
      make_scan_data<T>(n, std::is_floating_point_v<T> ? ScanOp::max : ScanOp::sum, seed.value());
  ScanWorkspace workspace;
  cuda::Stream stream;
  const ScanVariant& engine = default_scan_variant();
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    std::vector<T> on_cpu = poisoned<T>(x.size());
    scan<T>(cpu_context(), x, on_cpu, ScanOp::sum, kind);
    const auto first = run_variant(engine, x, ScanOp::sum, kind, workspace, stream);
    ASSERT_TRUE(same_elements(on_cpu, first)) << scan_kind_name(kind);
    for (int repeat = 0; repeat < 20; ++repeat) {
      ASSERT_TRUE(same_elements(first, run_variant(engine, x, ScanOp::sum, kind, workspace, stream,
                                                   repeat % 3, repeat % 2 == 1)))
          << "repeat " << repeat;
    }
  }
}

TEST(ScanGpu, OverflowOnTheDeviceIsReportedWithTheFirstElementAndCleared) {
  GPUKIT_REQUIRE_GPU();
  const std::int64_t n = 3 * 4096 + 17;
  std::vector<std::int32_t> x(static_cast<std::size_t>(n), 1);
  x[9000] = std::numeric_limits<std::int32_t>::max() - 8999;  // prefix 9000 + that = max + 1
  x[9500] = -5;  // later outputs come back in range: only the first index matters
  ScanWorkspace workspace;
  cuda::Stream stream;
  DeviceScanArrays<std::int32_t> arrays(x, 0, false);
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    const std::string index = kind == ScanKind::inclusive ? "9000" : "9001";
    try {
      scan_on_device(arrays.in, arrays.out, n, ScanOp::sum, kind, workspace, stream.handle());
      ADD_FAILURE() << "no overflow reported, " << scan_kind_name(kind);
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("element " + index), std::string::npos) << e.what();
    }
  }
  // A clean scan right after clears the report.
  std::vector<std::int32_t> ones(static_cast<std::size_t>(n), 1);
  DeviceScanArrays<std::int32_t> clean(ones, 0, false);
  EXPECT_NO_THROW(scan_on_device(clean.in, clean.out, n, ScanOp::sum, ScanKind::inclusive,
                                 workspace, stream.handle()));
}

}  // namespace
}  // namespace gpukit::primitives
