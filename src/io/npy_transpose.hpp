#pragma once
// Internal: Fortran order to C order, for .npy files written with fortran_order True.

#include <cstddef>
#include <cstdint>
#include <span>

namespace gpukit::io::npy_internal {

/// Copies the elements (4 or 8 bytes each) of a Fortran-order array of `shape` (first index
/// fastest) from `source` to `destination` in C order (last index fastest). The two must not
/// overlap.
void fortran_to_c_order(const std::byte* source, std::byte* destination,
                        std::span<const std::int64_t> shape, std::size_t element_bytes);

}  // namespace gpukit::io::npy_internal
