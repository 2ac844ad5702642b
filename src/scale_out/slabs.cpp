// The slab partition of a grid's axis 0 (slabs.hpp).

#include "gpukit/scale_out/slabs.hpp"

#include <algorithm>

namespace gpukit::scale_out {

std::int64_t slab_block(std::int64_t rows, int parts) {
  return parts <= 0 ? rows : (rows + parts - 1) / parts;
}

SlabRange slab_range(std::int64_t rows, int parts, int part) {
  const std::int64_t block = slab_block(rows, parts);
  const std::int64_t begin = std::min(rows, block * part);
  return {begin, std::min(block, rows - begin)};
}

}  // namespace gpukit::scale_out
