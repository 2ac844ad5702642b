#include "core/parallel_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::detail {

namespace {

constexpr std::size_t kBlock = std::size_t{1} << 20;
// A byte on one thread: 0.13 ns (gpukit_tune_cpu_threads costs at idle, 32 MiB: 0.126, 0.125).
// The thread rule's figure: a copy of two blocks or more is worth a second thread.
constexpr double kNsPerByte = 0.13;

}  // namespace

void parallel_copy(void* destination, const void* source, std::size_t bytes, int threads) {
  const CopyRange range{destination, source, bytes};
  parallel_copy_ranges(std::span<const CopyRange>(&range, 1), threads);
}

void parallel_copy_ranges(std::span<const CopyRange> ranges, int threads) {
  // Block b of the call is block b - first[r] of range r, first[r] <= b < first[r + 1].
  std::vector<std::int64_t> first(ranges.size() + 1, 0);
  std::size_t bytes = 0;
  for (std::size_t r = 0; r < ranges.size(); ++r) {
    first[r + 1] = first[r] + static_cast<std::int64_t>((ranges[r].bytes + kBlock - 1) / kBlock);
    bytes += ranges[r].bytes;
  }
  const std::int64_t blocks = first.back();
  const int team = cpu_threads_for({static_cast<std::int64_t>(bytes), kNsPerByte, blocks}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const auto r = static_cast<std::size_t>(std::upper_bound(first.begin(), first.end(), b) -
                                            first.begin() - 1);
    const std::size_t offset = static_cast<std::size_t>(b - first[r]) * kBlock;
    std::memcpy(static_cast<char*>(ranges[r].destination) + offset,
                static_cast<const char*>(ranges[r].source) + offset,
                std::min(kBlock, ranges[r].bytes - offset));
  }
}

}  // namespace gpukit::detail
