// Fortran order -> C order (npy_transpose.hpp).

#include "npy_transpose.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpukit::io::npy_internal {

namespace {

// Copies the elements of a Fortran-order array of `shape` (first index fastest) from `source` to
// `destination` in C order (last index fastest). Element copies go through fixed-size memcpy, which
// compiles to one load and one store.
template <std::size_t kElementBytes>
void fortran_to_c_order(const std::byte* source, std::byte* destination,
                        std::span<const std::int64_t> full_shape) {
  // Axes of extent 1 do not move anything: drop them.
  std::vector<std::int64_t> shape;
  for (std::int64_t dim : full_shape) {
    if (dim != 1) shape.push_back(dim);
  }
  const std::size_t rank = shape.size();
  std::int64_t elements = 1;
  for (std::int64_t dim : shape) elements *= dim;
  if (rank <= 1) {
    std::memcpy(destination, source, static_cast<std::size_t>(elements) * kElementBytes);
    return;
  }
  std::vector<std::int64_t> c_stride(rank), fortran_stride(rank);  // in elements
  c_stride[rank - 1] = 1;
  for (std::size_t axis = rank - 1; axis-- > 0;)
    c_stride[axis] = c_stride[axis + 1] * shape[axis + 1];
  fortran_stride[0] = 1;
  for (std::size_t axis = 1; axis < rank; ++axis) {
    fortran_stride[axis] = fortran_stride[axis - 1] * shape[axis - 1];
  }
  // For every index of the middle axes, the (first axis, last axis) plane is a 2-D transpose:
  // contiguous along the first axis in the source, along the last axis in the destination. It is
  // done in square tiles so that both sides stay in cache.
  constexpr std::int64_t kTile = 32;
  const std::int64_t first_extent = shape[0], last_extent = shape[rank - 1];
  const std::int64_t first_c_stride = c_stride[0], last_fortran_stride = fortran_stride[rank - 1];
  const std::int64_t middle_count = elements / (first_extent * last_extent);
  for (std::int64_t middle = 0; middle < middle_count; ++middle) {
    std::int64_t middle_c_offset = 0, middle_fortran_offset = 0;
    std::int64_t rest = middle;
    for (std::size_t axis = rank - 1; axis-- > 1;) {
      const std::int64_t index = rest % shape[axis];
      rest /= shape[axis];
      middle_c_offset += index * c_stride[axis];
      middle_fortran_offset += index * fortran_stride[axis];
    }
    for (std::int64_t first_begin = 0; first_begin < first_extent; first_begin += kTile) {
      const std::int64_t first_end = std::min(first_begin + kTile, first_extent);
      for (std::int64_t last_begin = 0; last_begin < last_extent; last_begin += kTile) {
        const std::int64_t last_end = std::min(last_begin + kTile, last_extent);
        for (std::int64_t first = first_begin; first < first_end; ++first) {
          for (std::int64_t last = last_begin; last < last_end; ++last) {
            const std::int64_t from = first + middle_fortran_offset + last * last_fortran_stride;
            const std::int64_t to = first * first_c_stride + middle_c_offset + last;
            std::memcpy(destination + to * static_cast<std::int64_t>(kElementBytes),
                        source + from * static_cast<std::int64_t>(kElementBytes), kElementBytes);
          }
        }
      }
    }
  }
}

}  // namespace

void fortran_to_c_order(const std::byte* source, std::byte* destination,
                        std::span<const std::int64_t> shape, std::size_t element_bytes) {
  if (element_bytes == 4) {
    fortran_to_c_order<4>(source, destination, shape);
  } else {
    fortran_to_c_order<8>(source, destination, shape);
  }
}

}  // namespace gpukit::io::npy_internal
