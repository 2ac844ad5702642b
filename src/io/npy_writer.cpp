// .npy writing: numpy.save's header, byte for byte, then the data, through AtomicFile (or to
// stdout).

#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/io/standard_output.hpp"
#include "npy_format.hpp"

namespace gpukit::io {

using npy_internal::checked_shape_size;
using npy_internal::info_of;
using npy_internal::kAlignment;
using npy_internal::kGrowthAxisMaxDigits;
using npy_internal::kMagic;
using npy_internal::kMagicAndVersionBytes;
using npy_internal::shape_text;
using npy_internal::ShapeSize;

namespace detail {

std::string npy_header_bytes(NpyDtype dtype, std::span<const std::int64_t> shape) {
  for (std::int64_t dim : shape) {
    if (dim < 0) {
      throw InvalidInput(
          fmt::format("npy header: negative dimension {} in shape {}", dim, shape_text(shape)));
    }
  }
  // numpy.save: keys sorted, "'key': repr(value), " each, then the growth padding.
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 info_of(dtype).descr, shape_text(shape));
  if (!shape.empty()) {
    dict.append(kGrowthAxisMaxDigits - fmt::formatted_size("{}", shape[0]), ' ');
  }
  const std::size_t dict_and_newline = dict.size() + 1;
  // Version 1.0 unless the padded header overflows its uint16 length field.
  for (std::size_t length_field_bytes : {std::size_t{2}, std::size_t{4}}) {
    const std::size_t prefix_bytes = kMagicAndVersionBytes + length_field_bytes;
    const std::size_t padding = kAlignment - (prefix_bytes + dict_and_newline) % kAlignment;
    const std::size_t header_bytes = dict_and_newline + padding;
    if (length_field_bytes == 2 && header_bytes > 0xffff) continue;
    std::string out(kMagic);
    out.push_back(static_cast<char>(length_field_bytes == 2 ? 1 : 2));
    out.push_back('\0');
    for (std::size_t k = 0; k < length_field_bytes; ++k) {
      out.push_back(static_cast<char>((header_bytes >> (8 * k)) & 0xff));
    }
    out += dict;
    out.append(padding, ' ');
    out.push_back('\n');
    return out;
  }
  throw InvalidInput(fmt::format("npy header: shape {} makes a header over 4 GiB", shape.size()));
}

}  // namespace detail

void write_npy(const std::filesystem::path& path, NpyDtype dtype,
               std::span<const std::int64_t> shape, std::span<const std::byte> data) {
  const bool to_stdout = path == "-";
  const std::string name = to_stdout ? std::string("<stdout>") : path.string();
  const ShapeSize size = checked_shape_size(shape, dtype_size(dtype), name);
  if (data.size() != size.bytes) {
    throw InvalidInput(
        fmt::format("{}: write_npy: shape {} of {} holds {} bytes, but {} bytes of data were given",
                    name, shape_text(shape), dtype_name(dtype), size.bytes, data.size()));
  }
  const std::string header = detail::npy_header_bytes(dtype, shape);
  if (to_stdout) {
    write_stdout(header);
    write_stdout(data);
    return;
  }
  AtomicFile file(path);
  file.write(header);
  file.write(data);
  file.commit();
}

void begin_npy_rows(AtomicFile& file, NpyDtype dtype, std::span<const std::int64_t> shape) {
  checked_shape_size(shape, dtype_size(dtype), file.target().string());
  file.write(detail::npy_header_bytes(dtype, shape));
}

void write_npy_rows(const std::filesystem::path& path, NpyDtype dtype,
                    std::span<const std::int64_t> shape, std::int64_t row_begin,
                    std::span<const std::byte> bytes) {
  const std::string name = path.string();
  if (shape.empty()) throw InvalidInput(fmt::format("{}: a 0-d array has no rows to write", name));
  const ShapeSize size = checked_shape_size(shape, dtype_size(dtype), name);
  const std::int64_t rows = shape[0];
  // The byte count of one row fits: the whole array's did.
  const std::uint64_t row_bytes = rows == 0 ? 0 : size.bytes / static_cast<std::uint64_t>(rows);
  const std::uint64_t count = row_bytes == 0 ? 0 : bytes.size() / row_bytes;
  if ((row_bytes == 0 && !bytes.empty()) || (row_bytes > 0 && bytes.size() % row_bytes != 0)) {
    throw InvalidInput(fmt::format("{}: {} bytes are not whole rows of {} bytes (shape {} of {})",
                                   name, bytes.size(), row_bytes, shape_text(shape),
                                   dtype_name(dtype)));
  }
  if (row_begin < 0 || row_begin > rows || count > static_cast<std::uint64_t>(rows - row_begin)) {
    throw InvalidInput(fmt::format("{}: rows {} to {} are outside axis 0 of shape {}", name,
                                   row_begin, row_begin + static_cast<std::int64_t>(count),
                                   shape_text(shape)));
  }
  if (bytes.empty()) return;
  const std::uint64_t header = detail::npy_header_bytes(dtype, shape).size();
  write_file_region(path, header + static_cast<std::uint64_t>(row_begin) * row_bytes, bytes);
}

void write_npy(const std::filesystem::path& path, const NpyArray& array) {
  write_npy(path, array.dtype, array.shape, std::span(array.bytes(), array.byte_size()));
}

}  // namespace gpukit::io
