// The .npy format's dtype table and shape arithmetic (npy_format.hpp).

#include "npy_format.hpp"

#include <limits>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::io::npy_internal {

const DtypeInfo& info_of(NpyDtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  throw InvalidInput(fmt::format("npy: invalid NpyDtype value {}", static_cast<int>(dtype)));
}

std::string printable(std::string_view text, std::size_t max_shown_bytes) {
  std::string shown;
  for (std::size_t i = 0; i < text.size() && i < max_shown_bytes; ++i) {
    auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20 || byte >= 0x7f) {
      shown += fmt::format("\\x{:02x}", byte);
    } else if (text[i] == '\\') {
      shown += "\\\\";
    } else {
      shown.push_back(text[i]);
    }
  }
  if (text.size() > max_shown_bytes) shown += "...";
  return shown;
}

std::string shape_text(std::span<const std::int64_t> shape) {
  // Python's tuple repr, as in the header: (), (5,), (2, 3).
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  return fmt::format("({})", fmt::join(shape, ", "));
}

ShapeSize checked_shape_size(std::span<const std::int64_t> shape, std::size_t element_bytes,
                             std::string_view where) {
  // Bounding the byte count by int64 also bounds it by size_t (64-bit targets only).
  static_assert(sizeof(std::size_t) >= sizeof(std::int64_t));
  constexpr std::int64_t kMaxBytes = std::numeric_limits<std::int64_t>::max();
  auto element_bytes_signed = static_cast<std::int64_t>(element_bytes);
  std::int64_t nonzero_bytes = element_bytes_signed;  // product of the non-zero dims * element size
  bool empty = false;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    const std::int64_t dim = shape[axis];
    if (dim < 0) {
      throw InvalidInput(fmt::format("{}: negative dimension {} (axis {}) in shape {}", where, dim,
                                     axis, shape_text(shape)));
    }
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (nonzero_bytes > kMaxBytes / dim) {
      throw InvalidInput(fmt::format(
          "{}: shape {} of {}-byte elements is too large: its byte count overflows 64 bits", where,
          shape_text(shape), element_bytes));
    }
    nonzero_bytes *= dim;
  }
  if (empty) return {0, 0};
  return {nonzero_bytes / element_bytes_signed, static_cast<std::size_t>(nonzero_bytes)};
}

}  // namespace gpukit::io::npy_internal
