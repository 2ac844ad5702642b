#pragma once
// Internal: memcpy split over OpenMP threads. One thread cannot fill pinned staging memory as
// fast as PCIe drains it, so the chunked host paths copy with all threads.

#include <cstddef>
#include <span>

namespace gpukit::detail {

void parallel_copy(void* destination, const void* source, std::size_t bytes, int threads);

/// One copy of a parallel_copy_ranges() call. Ranges must not overlap each other's destinations.
struct CopyRange {
  void* destination = nullptr;
  const void* source = nullptr;
  std::size_t bytes = 0;
};

/// Every range copied, in one parallel region: the ranges' 1 MiB blocks shared out over the
/// team (the thread rule of core/cpu_threads.hpp on their total), so that a chunk's several
/// arrays (Black-Scholes' inputs going in and results coming out) cost one region, not one each,
/// and a short array does not leave threads idle.
void parallel_copy_ranges(std::span<const CopyRange> ranges, int threads);

}  // namespace gpukit::detail
