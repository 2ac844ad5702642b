#pragma once
// Internal: memcpy split over OpenMP threads. One thread cannot fill pinned staging memory as
// fast as PCIe drains it, so the chunked host paths copy with all threads.

#include <cstddef>

namespace gpukit::detail {

void parallel_copy(void* destination, const void* source, std::size_t bytes, int threads);

}  // namespace gpukit::detail
