#include "core/parallel_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace gpukit::detail {

void parallel_copy(void* destination, const void* source, std::size_t bytes, int threads) {
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  const auto blocks = static_cast<std::int64_t>((bytes + kBlock - 1) / kBlock);
#pragma omp parallel for schedule(static) num_threads(threads) if (blocks > 1)
  for (std::int64_t b = 0; b < blocks; ++b) {
    const std::size_t offset = static_cast<std::size_t>(b) * kBlock;
    std::memcpy(static_cast<char*>(destination) + offset, static_cast<const char*>(source) + offset,
                std::min(kBlock, bytes - offset));
  }
}

}  // namespace gpukit::detail
