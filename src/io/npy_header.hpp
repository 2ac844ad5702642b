#pragma once
// Internal: the .npy header's dict literal, parsed (npy_header.cpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "gpukit/io/npy.hpp"

namespace gpukit::io::npy_internal {

struct NpyHeader {
  NpyDtype dtype = NpyDtype::float64;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

/// Parses exactly the Python literal numpy writes: '{' (string ':' value) separated by ',' with
/// an optional trailing ',' '}', surrounded by any whitespace; values are a string (descr), True
/// or False (fortran_order) and a tuple of non-negative integers (shape). Anything else is
/// refused (InvalidInput naming `name`) with the byte offset in the header where parsing stopped.
/// `accept_long_suffix`: a dimension may end in Python 2's long suffix 'L' (numpy accepts it in
/// version 1.0 and 2.0 headers). `supported` ends the message for a dtype that is not taken: what
/// the caller reads.
NpyHeader parse_npy_header(std::string_view header, std::string_view name, bool accept_long_suffix,
                           std::string_view supported);

/// Offset of the first byte that breaks UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
/// above U+10FFFF), or nullopt when `text` is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

}  // namespace gpukit::io::npy_internal
