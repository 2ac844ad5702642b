#include "gpukit/distributed/partition.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::distributed {

std::vector<BlockRange> split_evenly(std::int64_t blocks, int parts) {
  if (parts < 1) throw InvalidInput(fmt::format("split: {} parts; at least one needed", parts));
  if (blocks < 0) throw InvalidInput(fmt::format("split: {} blocks", blocks));
  std::vector<BlockRange> ranges(static_cast<std::size_t>(parts));
  const std::int64_t base = blocks / parts, larger = blocks % parts;
  std::int64_t first = 0;
  for (int k = 0; k < parts; ++k) {
    const std::int64_t count = base + (k < larger ? 1 : 0);
    ranges[static_cast<std::size_t>(k)] = {first, count};
    first += count;
  }
  return ranges;
}

std::vector<BlockRange> split_by_weight(std::span<const double> weights, int parts) {
  if (parts < 1) throw InvalidInput(fmt::format("split: {} parts; at least one needed", parts));
  const auto n = static_cast<std::int64_t>(weights.size());
  // Running totals in long double: a million blocks of similar weight lose no boundary to
  // rounding. before[i] is the weight of blocks 0 .. i - 1.
  std::vector<long double> before(weights.size() + 1, 0.0L);
  for (std::size_t i = 0; i < weights.size(); ++i) {
    if (!(weights[i] >= 0) || !std::isfinite(weights[i])) {
      throw InvalidInput(fmt::format("split: block {} has weight {}", i, weights[i]));
    }
    before[i + 1] = before[i] + weights[i];
  }
  const long double total = before.back();
  if (total == 0) return split_evenly(n, parts);
  std::vector<BlockRange> ranges(static_cast<std::size_t>(parts));
  std::int64_t first = 0;
  for (int k = 0; k < parts; ++k) {
    std::int64_t end = n;
    if (k + 1 < parts) {
      const long double target = total * (k + 1) / parts;
      // The first boundary at or past the target, or the one before it if that is nearer.
      end = std::lower_bound(before.begin() + first, before.end(), target) - before.begin();
      if (end > first && target - before[static_cast<std::size_t>(end - 1)] <
                             before[static_cast<std::size_t>(std::min(end, n))] - target) {
        --end;
      }
      end = std::clamp(end, first, n);
    }
    ranges[static_cast<std::size_t>(k)] = {first, end - first};
    first = end;
  }
  return ranges;
}

}  // namespace gpukit::distributed
