// The public engines' two-phase calls (CUB's temporary-storage contract, gpukit/primitives/cuda/):
// the size query with a null buffer, then the call with a caller's buffer of that many bytes.
// One buffer serves every launch of a test (grown when a query asks for more), poisoned with
// garbage before every other launch, so that no call relies on memory an earlier one left clean;
// outputs are poisoned before each launch and every element is checked against a sequential
// loop written here. Sizes: zero, one, around the engines' tile sizes, and a few odd large ones.
// Operations of the test's own: wrapping sums, whose result does not depend on the bracketing,
// with a 4-byte accumulator (packed status words) and an 8-byte one (flag words and value
// arrays).

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/primitives/cuda/compact.cuh"
#include "gpukit/primitives/cuda/reduce.cuh"
#include "gpukit/primitives/cuda/scan.cuh"
#include "gpukit/primitives/operation.hpp"
#include "test_seed.hpp"

namespace gpukit::primitives {
namespace {

/// Wrapping 32-bit sums: a 4-byte accumulator, so the look-backs pack flag and value in a word.
struct WrappingSum32 {
  using Input = std::uint32_t;
  using Acc = std::uint32_t;
  __host__ __device__ static Acc identity() { return 0; }
  __host__ __device__ static Acc load(Input x) { return x; }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

/// Wrapping 64-bit sums: an 8-byte accumulator that no operation clamps, so the look-backs keep
/// flags and values apart.
struct WrappingSum64 {
  using Input = std::uint64_t;
  using Acc = unsigned long long;
  __host__ __device__ static Acc identity() { return 0; }
  __host__ __device__ static Acc load(Input x) { return x; }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

/// 32-bit inputs summed into 64 bits (the reduction's 8-byte flagged slots).
struct WideSum {
  using Input = std::uint32_t;
  using Acc = unsigned long long;
  __host__ __device__ static Acc identity() { return 0; }
  __host__ __device__ static Acc load(Input x) { return x; }
  __host__ __device__ Acc operator()(Acc a, Acc b) const { return a + b; }
};

static_assert(Operation<WrappingSum32> && Operation<WrappingSum64>);
static_assert(StatelessOperation<WideSum>);

struct KeepOdd {
  template <class T>
  __host__ __device__ bool operator()(T x) const {
    return (x & 1u) != 0;
  }
};

/// Zero, one, both sides of the tile sizes (4096 elements for the deterministic scan, 4096 x up
/// to four sub-tiles for the exact engines, 16384 for the reduction, and 1024 reduction tiles,
/// the last launch with flagged tile sums) and odd large counts.
std::vector<std::int64_t> sizes() {
  std::vector<std::int64_t> s = {0,     1,     2,     31,    4095,          4096,    4097,
                                 16383, 16384, 16385, 65537, (1 << 20) + 7, 1 << 24, (1 << 24) + 1};
  if (!testing::quick_tests()) s.push_back((1 << 26) + 4093);
  return s;
}

template <class T>
std::vector<T> random_values(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<T> values(static_cast<std::size_t>(n));
  for (auto& v : values) v = static_cast<T>(generator());
  return values;
}

/// One caller's buffer, grown to what each query asks for. Every other call poisons it first.
class TempStorage {
 public:
  void* prepare(std::size_t needed, cudaStream_t stream) {
    if (needed > buffer_.size() || buffer_.data() == nullptr) {
      buffer_ = cuda::DeviceBuffer<unsigned char>(needed > 0 ? needed : 1);
    }
    if (poison_next_) cuda::fill_bytes_async(buffer_.data(), 0x5A, buffer_.size(), stream);
    poison_next_ = !poison_next_;
    return buffer_.data();
  }
  std::size_t bytes() const { return buffer_.size(); }

 private:
  cuda::DeviceBuffer<unsigned char> buffer_;
  bool poison_next_ = true;
};

template <class T>
cuda::DeviceBuffer<T> device_copy(const std::vector<T>& host) {
  cuda::DeviceBuffer<T> buffer(host.empty() ? 1 : host.size());
  if (!host.empty()) buffer.copy_from_host(host);
  return buffer;
}

template <class T>
std::vector<T> host_copy(const cuda::DeviceBuffer<T>& buffer, std::int64_t n) {
  std::vector<T> host(static_cast<std::size_t>(n));
  if (n > 0) cuda::copy_to_host(host.data(), buffer.data(), host.size() * sizeof(T));
  return host;
}

enum class ScanEngine { deterministic, exact, exact_sm90 };
const char* engine_name(ScanEngine e) {
  return e == ScanEngine::deterministic ? "deterministic_scan"
         : e == ScanEngine::exact       ? "exact_scan"
                                        : "exact_scan_sm90";
}

bool sm90_or_later() {
  int device = 0, major = 0;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
         major >= 9;
}

/// The two-phase call of `engine`: the query when `storage` is null. False when exact_scan_sm90
/// declines the call.
template <class Op>
bool scan_two_phase(ScanEngine engine, void* storage, std::size_t& bytes,
                    const typename Op::Input* input, typename Op::Input* output, std::int64_t n,
                    ScanKind kind, cudaStream_t stream) {
  const Op op{};
  switch (engine) {
    case ScanEngine::deterministic:
      if (storage != nullptr) device::clear_scan_overflow_report(storage, stream);
      device::deterministic_scan(storage, bytes, op, input, output, n, kind, stream);
      return true;
    case ScanEngine::exact:
      device::exact_scan(storage, bytes, op, input, output, n, kind, stream);
      return true;
    case ScanEngine::exact_sm90:
      return device::exact_scan_sm90(storage, bytes, op, input, output, n, kind, stream);
  }
  return false;
}

template <class Op>
void check_scans(ScanEngine engine) {
  using T = typename Op::Input;
  const testing::TestSeed seed;
  cuda::Stream stream;
  TempStorage storage;
  for (const ScanKind kind : {ScanKind::inclusive, ScanKind::exclusive}) {
    for (const std::int64_t n : sizes()) {
      SCOPED_TRACE(std::string(engine_name(engine)) + " " +
                   (kind == ScanKind::inclusive ? "inclusive" : "exclusive") +
                   " n=" + std::to_string(n) + " sizeof(T)=" + std::to_string(sizeof(T)));
      const auto x = random_values<T>(n, seed.value() + static_cast<std::uint64_t>(n));
      const auto input = device_copy(x);
      cuda::DeviceBuffer<T> output(n > 0 ? static_cast<std::size_t>(n) : 1);
      cuda::fill_bytes_async(output.data(), 0xA5, output.size_bytes(), stream.handle());

      std::size_t needed = 0;
      ASSERT_TRUE(scan_two_phase<Op>(engine, nullptr, needed, input.data(), output.data(), n, kind,
                                     stream.handle()));
      ASSERT_GT(needed, 0u) << "a query must ask for the report's bytes at least";
      void* buffer = storage.prepare(needed, stream.handle());
      std::size_t bytes = storage.bytes();
      const bool took = scan_two_phase<Op>(engine, buffer, bytes, input.data(), output.data(), n,
                                           kind, stream.handle());
      if (!took) {
        ASSERT_EQ(engine, ScanEngine::exact_sm90);
        ASSERT_FALSE(sm90_or_later()) << "exact_scan_sm90 declined aligned data on sm_90";
        GPUKIT_GPU_SKIP("exact_scan_sm90 needs sm_90");
      }
      stream.synchronize();
      EXPECT_EQ(device::scan_overflow_index(buffer), -1) << "no operation here reports overflow";

      const auto y = host_copy(output, n);
      typename Op::Acc running = Op::identity();
      for (std::int64_t i = 0; i < n; ++i) {
        const auto before = running;
        running = static_cast<typename Op::Acc>(running + x[static_cast<std::size_t>(i)]);
        const T expected = static_cast<T>(kind == ScanKind::inclusive ? running : before);
        if (y[static_cast<std::size_t>(i)] != expected) {
          ADD_FAILURE() << "element " << i << ": " << y[static_cast<std::size_t>(i)]
                        << ", expected " << expected;
          break;
        }
      }
    }
  }
}

TEST(TempStorageGpu, DeterministicScanQueryThenRunMatchesASequentialLoop) {
  GPUKIT_REQUIRE_GPU();
  check_scans<WrappingSum32>(ScanEngine::deterministic);
  check_scans<WrappingSum64>(ScanEngine::deterministic);
}

TEST(TempStorageGpu, ExactScanQueryThenRunMatchesASequentialLoop) {
  GPUKIT_REQUIRE_GPU();
  check_scans<WrappingSum32>(ScanEngine::exact);
  check_scans<WrappingSum64>(ScanEngine::exact);
}

TEST(TempStorageGpu, ExactScanSm90QueryThenRunMatchesASequentialLoop) {
  GPUKIT_REQUIRE_GPU();
  if (!sm90_or_later()) GPUKIT_GPU_SKIP("exact_scan_sm90 needs sm_90");
  check_scans<WrappingSum32>(ScanEngine::exact_sm90);
  check_scans<WrappingSum64>(ScanEngine::exact_sm90);
}

template <class T>
void check_compactions() {
  const testing::TestSeed seed;
  cuda::Stream stream;
  TempStorage storage;
  cuda::DeviceBuffer<long long> kept_total(1);
  for (const std::int64_t n : sizes()) {
    SCOPED_TRACE("compact n=" + std::to_string(n) + " sizeof(T)=" + std::to_string(sizeof(T)));
    const auto x = random_values<T>(n, seed.value() ^ static_cast<std::uint64_t>(n));
    const auto input = device_copy(x);
    cuda::DeviceBuffer<T> output(n > 0 ? static_cast<std::size_t>(n) : 1);
    cuda::fill_bytes_async(output.data(), 0xA5, output.size_bytes(), stream.handle());
    cuda::fill_bytes_async(kept_total.data(), 0xA5, sizeof(long long), stream.handle());

    std::size_t needed = 0;
    device::compact(nullptr, needed, KeepOdd{}, input.data(), output.data(), n, kept_total.data(),
                    stream.handle());
    ASSERT_GT(needed, 0u);
    void* buffer = storage.prepare(needed, stream.handle());
    std::size_t bytes = storage.bytes();
    device::compact(buffer, bytes, KeepOdd{}, input.data(), output.data(), n, kept_total.data(),
                    stream.handle());
    stream.synchronize();

    std::vector<T> expected;
    for (const T v : x) {
      if (KeepOdd{}(v)) expected.push_back(v);
    }
    long long kept = -1;
    cuda::copy_to_host(&kept, kept_total.data(), sizeof kept);
    ASSERT_EQ(kept, static_cast<long long>(expected.size()));
    const auto y = host_copy(output, kept);
    for (std::size_t i = 0; i < expected.size(); ++i) {
      if (y[i] != expected[i]) {
        ADD_FAILURE() << "element " << i << ": " << y[i] << ", expected " << expected[i];
        break;
      }
    }
  }
}

TEST(TempStorageGpu, CompactQueryThenRunMatchesASequentialFilter) {
  GPUKIT_REQUIRE_GPU();
  check_compactions<std::uint32_t>();
  check_compactions<std::uint64_t>();
}

TEST(TempStorageGpu, DeterministicReduceQueryThenRunMatchesASequentialSum) {
  GPUKIT_REQUIRE_GPU();
  const testing::TestSeed seed;
  cuda::Stream stream;
  TempStorage storage;
  cuda::DeviceBuffer<unsigned long long> result(1);
  for (const std::int64_t n : sizes()) {
    SCOPED_TRACE("deterministic_reduce n=" + std::to_string(n));
    const auto x =
        random_values<std::uint32_t>(n, seed.value() + 7 * static_cast<std::uint64_t>(n));
    const auto input = device_copy(x);
    cuda::fill_bytes_async(result.data(), 0xA5, sizeof(unsigned long long), stream.handle());

    std::size_t needed = 0;
    device::deterministic_reduce<WideSum>(nullptr, needed, input.data(), n, result.data(),
                                          stream.handle());
    ASSERT_GT(needed, 0u);
    void* buffer = storage.prepare(needed, stream.handle());
    std::size_t bytes = storage.bytes();
    device::deterministic_reduce<WideSum>(buffer, bytes, input.data(), n, result.data(),
                                          stream.handle());
    stream.synchronize();

    unsigned long long expected = 0;
    for (const std::uint32_t v : x) expected += v;
    unsigned long long got = 0;
    cuda::copy_to_host(&got, result.data(), sizeof got);
    EXPECT_EQ(got, expected);
  }
}

TEST(TempStorageGpu, ABufferTooSmallOrMisalignedIsRefused) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  const std::int64_t n = 100000;
  cuda::DeviceBuffer<std::uint32_t> data(static_cast<std::size_t>(n));
  cuda::DeviceBuffer<unsigned long long> result(1);
  cuda::DeviceBuffer<long long> kept_total(1);
  const WrappingSum32 op;

  std::size_t needed = 0;
  device::exact_scan(nullptr, needed, op, data.data(), data.data(), n, ScanKind::inclusive,
                     stream.handle());
  cuda::DeviceBuffer<unsigned char> buffer(needed + 16);
  std::size_t short_bytes = needed - 1;
  EXPECT_THROW(device::exact_scan(buffer.data(), short_bytes, op, data.data(), data.data(), n,
                                  ScanKind::inclusive, stream.handle()),
               InvalidInput);
  std::size_t bytes = needed;
  EXPECT_THROW(device::exact_scan(buffer.data() + 8, bytes, op, data.data(), data.data(), n,
                                  ScanKind::inclusive, stream.handle()),
               InvalidInput);

  device::deterministic_scan(nullptr, needed, op, data.data(), data.data(), n, ScanKind::inclusive,
                             stream.handle());
  short_bytes = needed - 1;
  EXPECT_THROW(device::deterministic_scan(buffer.data(), short_bytes, op, data.data(), data.data(),
                                          n, ScanKind::inclusive, stream.handle()),
               InvalidInput);

  device::compact(nullptr, needed, KeepOdd{}, data.data(), data.data(), n, kept_total.data(),
                  stream.handle());
  short_bytes = needed - 1;
  EXPECT_THROW(device::compact(buffer.data(), short_bytes, KeepOdd{}, data.data(), data.data(), n,
                               kept_total.data(), stream.handle()),
               InvalidInput);

  device::deterministic_reduce<WideSum>(nullptr, needed, data.data(), n, result.data(),
                                        stream.handle());
  cuda::DeviceBuffer<unsigned char> reduce_buffer(needed);
  short_bytes = needed - 1;
  EXPECT_THROW(device::deterministic_reduce<WideSum>(reduce_buffer.data(), short_bytes, data.data(),
                                                     n, result.data(), stream.handle()),
               InvalidInput);
  stream.synchronize();
}

}  // namespace
}  // namespace gpukit::primitives
