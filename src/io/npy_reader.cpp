// .npy reading: the magic, version and length field, the header (npy_header.cpp), the shape's
// checked size, the data read straight into aligned storage (NpyArray), and the Fortran-order
// transpose (npy_transpose.cpp). The same reader runs over a file, stdin or bytes in memory.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "byte_source.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "npy_format.hpp"
#include "npy_header.hpp"
#include "npy_transpose.hpp"

namespace gpukit::io {

namespace {

using npy_internal::checked_shape_size;
using npy_internal::FileDescriptor;
using npy_internal::FileSource;
using npy_internal::find_invalid_utf8;
using npy_internal::info_of;
using npy_internal::kMagic;
using npy_internal::kMagicAndVersionBytes;
using npy_internal::kSupportedDescrs;
using npy_internal::MemorySource;
using npy_internal::NpyHeader;
using npy_internal::printable;
using npy_internal::shape_text;
using npy_internal::ShapeSize;

std::string read_header_text(auto& source, std::uint32_t header_bytes, std::size_t file_offset,
                             std::string_view name) {
  // Read in pieces, so that a lying length field on a pipe costs only what the pipe delivers.
  constexpr std::size_t kPieceBytes = std::size_t{1} << 20;
  std::string header;
  while (header.size() < header_bytes) {
    const std::size_t piece = std::min<std::size_t>(kPieceBytes, header_bytes - header.size());
    const std::size_t old_size = header.size();
    header.resize(old_size + piece);
    const std::size_t got =
        source.read(reinterpret_cast<std::byte*>(header.data() + old_size), piece);
    if (got < piece) {
      throw InvalidInput(fmt::format(
          "{}: header length {} bytes runs past the end of the file (only {} bytes follow the "
          "length field at byte {})",
          name, header_bytes, old_size + got, file_offset));
    }
  }
  return header;
}

// "int32 ('<i4'), int64 ('<i8') or float64 ('<f8')".
std::string dtype_list(std::span<const NpyDtype> dtypes) {
  std::string list;
  for (std::size_t i = 0; i < dtypes.size(); ++i) {
    if (i > 0) list += i + 1 == dtypes.size() ? " or " : ", ";
    list += fmt::format("{} ('{}')", info_of(dtypes[i]).name, info_of(dtypes[i]).descr);
  }
  return list;
}

// The header as read and checked: the dict, the element and byte counts of its shape, and the
// offset of the first data byte.
struct CheckedHeader {
  NpyHeader header;
  ShapeSize size;
  std::size_t data_offset = 0;
};

// Reads the magic, version, length field and header from the front of `source` and checks them;
// accepted == nullptr: every dtype of kDtypes.
template <class Source>
CheckedHeader read_checked_header(Source& source, std::string_view name,
                                  const NpyAccepted* accepted) {
  std::array<std::byte, 12> prefix{};
  std::size_t got = source.read(prefix.data(), kMagicAndVersionBytes);
  const std::string_view prefix_text(reinterpret_cast<const char*>(prefix.data()), got);
  if (got < kMagic.size() || prefix_text.substr(0, kMagic.size()) != kMagic) {
    throw InvalidInput(
        fmt::format("{}: not a .npy file: bad magic (expected \"\\x93NUMPY\", found \"{}\")", name,
                    printable(prefix_text.substr(0, kMagic.size()))));
  }
  if (got < kMagicAndVersionBytes) {
    throw InvalidInput(
        fmt::format("{}: file ends inside the format version ({} bytes)", name, got));
  }
  const auto major = static_cast<unsigned>(prefix[6]), minor = static_cast<unsigned>(prefix[7]);
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    throw InvalidInput(
        fmt::format("{}: unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", name,
                    major, minor));
  }
  // 1.0: uint16 header length; 2.0 and 3.0: uint32 (both little-endian).
  const std::size_t length_field_bytes = major == 1 ? 2 : 4;
  got = source.read(prefix.data() + kMagicAndVersionBytes, length_field_bytes);
  if (got < length_field_bytes) {
    throw InvalidInput(fmt::format("{}: file ends inside the header length field", name));
  }
  std::uint32_t header_bytes = 0;
  for (std::size_t k = length_field_bytes; k-- > 0;) {
    header_bytes =
        (header_bytes << 8) | static_cast<std::uint32_t>(prefix[kMagicAndVersionBytes + k]);
  }
  const std::size_t header_offset = kMagicAndVersionBytes + length_field_bytes;
  if (auto remaining = source.remaining_bytes(); remaining && header_bytes > *remaining) {
    throw InvalidInput(fmt::format(
        "{}: header length {} bytes runs past the end of the file (only {} bytes follow the "
        "length field at byte {})",
        name, header_bytes, *remaining, kMagicAndVersionBytes));
  }
  const std::string header_text =
      read_header_text(source, header_bytes, kMagicAndVersionBytes, name);
  if (major == 3) {
    // 3.0 differs from 2.0 only in the header's encoding; no accepted header has a non-ASCII
    // character, but invalid UTF-8 deserves its own message.
    if (auto bad = find_invalid_utf8(header_text)) {
      throw InvalidInput(fmt::format(
          "{}: version 3.0 header is not valid UTF-8 (byte {} of the header)", name, *bad));
    }
  }
  const std::string supported =
      accepted == nullptr
          ? fmt::format("supported dtypes: {}", kSupportedDescrs)
          : fmt::format("{} takes {}", accepted->reader, dtype_list(accepted->dtypes));
  CheckedHeader checked;
  checked.header = npy_internal::parse_npy_header(header_text, name, major < 3, supported);
  const NpyHeader& header = checked.header;
  if (accepted != nullptr && std::find(accepted->dtypes.begin(), accepted->dtypes.end(),
                                       header.dtype) == accepted->dtypes.end()) {
    // Refused from the header, before the data is read.
    throw InvalidInput(fmt::format("{}: {}, not {}", name, supported, dtype_name(header.dtype)));
  }
  checked.size = checked_shape_size(header.shape, dtype_size(header.dtype), name);
  checked.data_offset = header_offset + header_bytes;
  return checked;
}

// Where the size of what follows the header is known (a regular file, bytes in memory): refuses
// truncated data and trailing bytes before anything is allocated.
template <class Source>
void check_data_length(const Source& source, const CheckedHeader& checked, std::string_view name) {
  const NpyHeader& header = checked.header;
  const std::size_t bytes = checked.size.bytes;
  if (auto remaining = source.remaining_bytes()) {
    if (*remaining < bytes) {
      throw InvalidInput(
          fmt::format("{}: truncated data: expected {} data bytes after the header (byte {}) for "
                      "shape {} of {}, "
                      "found {}",
                      name, bytes, checked.data_offset, shape_text(header.shape),
                      dtype_name(header.dtype), *remaining));
    }
    if (*remaining > bytes) {
      throw InvalidInput(fmt::format(
          "{}: {} trailing bytes after the data (shape {} of {} is {} bytes from byte {})", name,
          *remaining - bytes, shape_text(header.shape), dtype_name(header.dtype), bytes,
          checked.data_offset));
    }
  }
}

// accepted == nullptr: every dtype of kDtypes.
template <class Source>
NpyArray read_npy_from(Source& source, std::string_view name,
                       const NpyAccepted* accepted = nullptr) {
  const CheckedHeader checked = read_checked_header(source, name, accepted);
  check_data_length(source, checked, name);
  const NpyHeader& header = checked.header;
  const ShapeSize& size = checked.size;
  const std::size_t data_offset = checked.data_offset;
  const std::size_t element_bytes = dtype_size(header.dtype);
  std::size_t got = 0;

  NpyArray array;
  try {
    array = NpyArray(header.dtype, header.shape);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(fmt::format("{}: array data", name), e.bytes_requested());
  }
  got = source.read(array.bytes(), size.bytes);
  if (got < size.bytes) {
    throw InvalidInput(fmt::format(
        "{}: truncated data: expected {} data bytes after the header (byte {}) for shape {} of {}, "
        "found {}",
        name, size.bytes, data_offset, shape_text(header.shape), dtype_name(header.dtype), got));
  }
  std::array<std::byte, 4096> excess{};
  if (const std::size_t extra = source.read(excess.data(), excess.size()); extra != 0) {
    // Reached only when the size was unknown up front (a pipe), or the file grew while read.
    throw InvalidInput(fmt::format(
        "{}: trailing bytes after the data (at least {}; shape {} of {} is {} bytes from byte {})",
        name, extra, shape_text(header.shape), dtype_name(header.dtype), size.bytes, data_offset));
  }

  if (header.fortran_order && size.elements > 1) {
    NpyArray c_order;
    try {
      c_order = NpyArray(header.dtype, header.shape);
    } catch (const OutOfMemory& e) {
      throw OutOfMemory(fmt::format("{}: transposing the Fortran-order data", name),
                        e.bytes_requested());
    }
    npy_internal::fortran_to_c_order(array.bytes(), c_order.bytes(), header.shape, element_bytes);
    array = std::move(c_order);
  }
  return array;
}

}  // namespace

NpyArray read_npy(const std::filesystem::path& path) {
  if (path == "-") {
    FileSource source(STDIN_FILENO, "<stdin>");
    return read_npy_from(source, "<stdin>");
  }
  const std::string name = path.string();
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) throw IoError(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  FileSource source(file.get(), name);
  return read_npy_from(source, name);
}

NpyArray read_npy(const std::filesystem::path& path, const NpyAccepted& accepted) {
  if (path == "-") {
    FileSource source(STDIN_FILENO, "<stdin>");
    return read_npy_from(source, "<stdin>", &accepted);
  }
  const std::string name = path.string();
  FileDescriptor file(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (file.get() < 0) throw IoError(fmt::format("{}: cannot open: {}", name, std::strerror(errno)));
  FileSource source(file.get(), name);
  return read_npy_from(source, name, &accepted);
}

namespace {

// Opens `path` for the slab readers: a regular file (rows are read at their offsets, so standard
// input and pipes are refused). Returns the descriptor (IoError when it cannot be opened).
int open_npy_for_rows(const std::filesystem::path& path) {
  if (path == "-") {
    throw InvalidInput(
        "<stdin>: an array read by rows (as each process of a distributed solve reads its own) "
        "must be a file, not standard input");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw IoError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  return fd;
}

// The header of the file open at `fd`, checked against the file's size.
CheckedHeader check_npy_for_rows(int fd, const std::string& name, const NpyAccepted& accepted) {
  FileSource source(fd, name);
  if (!source.remaining_bytes()) {
    throw InvalidInput(fmt::format(
        "{}: an array read by rows must be a regular file (its rows are read at their offsets)",
        name));
  }
  CheckedHeader checked = read_checked_header(source, name, &accepted);
  check_data_length(source, checked, name);
  return checked;
}

}  // namespace

std::int64_t NpyFileInfo::size() const {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) n *= d;
  return n;
}

NpyFileInfo read_npy_info(const std::filesystem::path& path, const NpyAccepted& accepted) {
  const FileDescriptor file(open_npy_for_rows(path));
  const CheckedHeader checked = check_npy_for_rows(file.get(), path.string(), accepted);
  const NpyHeader& header = checked.header;
  return {header.dtype, header.shape, header.fortran_order, checked.data_offset};
}

NpyArray read_npy_rows(const std::filesystem::path& path, const NpyAccepted& accepted,
                       std::int64_t row_begin, std::int64_t row_count) {
  const std::string name = path.string();
  const FileDescriptor file(open_npy_for_rows(path));
  const CheckedHeader checked = check_npy_for_rows(file.get(), name, accepted);
  const NpyHeader& header = checked.header;
  if (header.shape.empty()) {
    throw InvalidInput(fmt::format("{}: a 0-d array has no rows to read", name));
  }
  const std::int64_t rows = header.shape[0];
  if (row_begin < 0 || row_count < 0 || row_begin > rows || row_count > rows - row_begin) {
    throw InvalidInput(fmt::format("{}: rows {} to {} are outside axis 0 of shape {}", name,
                                   row_begin, row_begin + row_count, shape_text(header.shape)));
  }
  if (header.fortran_order && checked.size.elements > 1) {
    // A Fortran-order array's rows of axis 0 are strided through the whole file.
    throw InvalidInput(fmt::format(
        "{}: a Fortran-order array cannot be read by rows (save it in C order, for example "
        "numpy.save(path, numpy.ascontiguousarray(a)))",
        name));
  }
  std::vector<std::int64_t> slab_shape = header.shape;
  slab_shape[0] = row_count;
  NpyArray slab;
  try {
    slab = NpyArray(header.dtype, slab_shape);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(fmt::format("{}: rows {} to {}", name, row_begin, row_begin + row_count),
                      e.bytes_requested());
  }
  // The byte count of one row fits: the whole array's did (checked_shape_size).
  const std::size_t row_bytes = rows == 0 ? 0 : checked.size.bytes / static_cast<std::size_t>(rows);
  std::uint64_t offset = checked.data_offset + static_cast<std::uint64_t>(row_begin) * row_bytes;
  std::byte* destination = slab.bytes();
  std::size_t left = slab.byte_size();
  constexpr std::size_t kMaxSyscallBytes = std::size_t{1} << 30;
  while (left > 0) {
    const ssize_t got = ::pread(file.get(), destination, std::min(left, kMaxSyscallBytes),
                                static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("{}: read failed: {}", name, std::strerror(errno)));
    }
    if (got == 0) {
      // The file shrank after its size was checked.
      throw InvalidInput(
          fmt::format("{}: truncated data: the file ended at byte {} inside rows {} to {}", name,
                      offset, row_begin, row_begin + row_count));
    }
    destination += got;
    offset += static_cast<std::uint64_t>(got);
    left -= static_cast<std::size_t>(got);
  }
  return slab;
}

NpyArray parse_npy(std::span<const std::byte> file_bytes, std::string_view name) {
  MemorySource source(file_bytes);
  return read_npy_from(source, name);
}

}  // namespace gpukit::io
