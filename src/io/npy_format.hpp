#pragma once
// Internal: what the .npy reader, the writer and NpyArray share: the format's constants, the
// dtypes gpukit reads and writes, and the checked arithmetic of a shape (it may come from an
// untrusted file).

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpukit/io/npy.hpp"

namespace gpukit::io::npy_internal {

// numpy aligns the data to 64 bytes (ARRAY_ALIGN in numpy/lib/format.py); the storage uses the
// same alignment, enough for any vector load and for a cache line.
inline constexpr std::size_t kAlignment = 64;

inline constexpr std::string_view kMagic =
    "\x93NUMPY";  // followed by major and minor version bytes
inline constexpr std::size_t kMagicAndVersionBytes = 8;

// numpy.save pads the header so that the first axis can grow to this many digits in place
// (GROWTH_AXIS_MAX_DIGITS in numpy/lib/format.py, numpy >= 1.23); written the same way so that our
// files are byte-identical to numpy's.
inline constexpr std::size_t kGrowthAxisMaxDigits = 21;

struct DtypeInfo {
  NpyDtype dtype;
  std::string_view descr;  // as numpy writes it in the header
  std::string_view name;
  std::size_t size;
};

inline constexpr std::array<DtypeInfo, 6> kDtypes = {{
    {NpyDtype::int32, "<i4", "int32", 4},
    {NpyDtype::int64, "<i8", "int64", 8},
    {NpyDtype::uint32, "<u4", "uint32", 4},
    {NpyDtype::uint64, "<u8", "uint64", 8},
    {NpyDtype::float32, "<f4", "float32", 4},
    {NpyDtype::float64, "<f8", "float64", 8},
}};

inline constexpr std::string_view kSupportedDescrs = "'<i4', '<i8', '<u4', '<u8', '<f4', '<f8'";

/// The table entry of `dtype` (InvalidInput for a value outside the enum).
const DtypeInfo& info_of(NpyDtype dtype);

/// Text from a file as shown in a message: non-printable bytes escaped and long text cut, so that
/// the message stays one readable line whatever the file holds.
std::string printable(std::string_view text, std::size_t max_shown_bytes = 80);

/// Python's tuple repr of a shape, as in the header: (), (5,), (2, 3).
std::string shape_text(std::span<const std::int64_t> shape);

struct ShapeSize {
  std::int64_t elements = 1;
  std::size_t bytes = 0;
};

// Element count and byte count of a shape. Every multiplication is checked: the shape comes from
// an untrusted file. Zero dimensions are skipped in the check (the array is empty), as numpy does,
// so a shape numpy refuses to create, like (2**62, 2**62, 0), is refused here too.
ShapeSize checked_shape_size(std::span<const std::int64_t> shape, std::size_t element_bytes,
                             std::string_view where);

}  // namespace gpukit::io::npy_internal
