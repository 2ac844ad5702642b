// core/parallel_copy.hpp: several ranges of any size and alignment copied in one parallel pass,
// every byte, on one thread and on several, and nothing outside the ranges touched.

#include "core/parallel_copy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpukit::detail {
namespace {

TEST(ParallelCopyRanges, EveryRangeIsCopiedWholeAndNothingElse) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  // Empty, short, a block exactly, across block boundaries, several blocks; odd offsets.
  const std::vector<std::size_t> sizes = {0, 1, 4097, kMiB, kMiB + 3, 3 * kMiB - 1, 0, 17};
  std::size_t total = 0;
  for (const std::size_t n : sizes) total += n + 5;
  std::vector<unsigned char> source(total), destination(total);
  for (std::size_t i = 0; i < total; ++i) source[i] = static_cast<unsigned char>(i * 131 + 7);
  for (const int threads : {1, 2, 3}) {
    std::fill(destination.begin(), destination.end(), 0xEE);
    std::vector<CopyRange> ranges;
    std::size_t at = 0;
    for (const std::size_t n : sizes) {
      // Each range starts one byte past an untouched gap of 5.
      ranges.push_back({destination.data() + at + 1, source.data() + at + 1, n});
      at += n + 5;
    }
    parallel_copy_ranges(ranges, threads);
    at = 0;
    std::size_t wrong = 0;
    for (const std::size_t n : sizes) {
      for (std::size_t i = 0; i < n + 5; ++i) {
        const bool inside = i >= 1 && i < n + 1;
        if (destination[at + i] != (inside ? source[at + i] : 0xEE)) ++wrong;
      }
      at += n + 5;
    }
    EXPECT_EQ(wrong, 0u) << threads << " threads";
  }
  parallel_copy_ranges({}, 2);  // nothing to copy
}

}  // namespace
}  // namespace gpukit::detail
