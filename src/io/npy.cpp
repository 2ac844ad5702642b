// .npy reading and writing: the header dict parser, shape arithmetic with overflow checks, reading
// the data straight into aligned storage, the Fortran-order transpose; files are written by
// AtomicFile.
//
// The header parser is our own: no Debian-packaged C/C++ library parses .npy headers robustly.
// xtensor's xnpy.hpp (libxtensor-dev) finds the keys with string searches, requires them in
// numpy's order (the format says readers must not), reads dimensions with an unchecked stream
// extraction and never checks the shape's product for overflow; cnpy is not packaged and has the
// same weaknesses. The grammar needed is tiny: one dict literal with three known keys, strings,
// True/False and a tuple of integers.

#include "gpukit/io/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/standard_output.hpp"

namespace gpukit::io {

namespace {

// numpy aligns the data to 64 bytes (ARRAY_ALIGN in numpy/lib/format.py); the storage uses the
// same alignment, enough for any vector load and for a cache line.
constexpr std::size_t kAlignment = 64;

constexpr std::string_view kMagic = "\x93NUMPY";  // followed by major and minor version bytes
constexpr std::size_t kMagicAndVersionBytes = 8;

// A single read() moves at most about 2 GiB on Linux; larger requests are split.
constexpr std::size_t kMaxSyscallBytes = std::size_t{1} << 30;

// numpy.save pads the header so that the first axis can grow to this many digits in place
// (GROWTH_AXIS_MAX_DIGITS in numpy/lib/format.py, numpy >= 1.23); written the same way so that our
// files are byte-identical to numpy's.
constexpr std::size_t kGrowthAxisMaxDigits = 21;

struct DtypeInfo {
  NpyDtype dtype;
  std::string_view descr;  // as numpy writes it in the header
  std::string_view name;
  std::size_t size;
};

constexpr std::array<DtypeInfo, 6> kDtypes = {{
    {NpyDtype::int32, "<i4", "int32", 4},
    {NpyDtype::int64, "<i8", "int64", 8},
    {NpyDtype::uint32, "<u4", "uint32", 4},
    {NpyDtype::uint64, "<u8", "uint64", 8},
    {NpyDtype::float32, "<f4", "float32", 4},
    {NpyDtype::float64, "<f8", "float64", 8},
}};

constexpr std::string_view kSupportedDescrs = "'<i4', '<i8', '<u4', '<u8', '<f4', '<f8'";

const DtypeInfo& info_of(NpyDtype dtype) {
  for (const DtypeInfo& info : kDtypes) {
    if (info.dtype == dtype) return info;
  }
  throw InvalidInput(fmt::format("npy: invalid NpyDtype value {}", static_cast<int>(dtype)));
}

// Text from a file as shown in a message: non-printable bytes escaped and long text cut, so that
// the message stays one readable line whatever the file holds.
std::string printable(std::string_view text, std::size_t max_shown_bytes = 80) {
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

struct ShapeSize {
  std::int64_t elements = 1;
  std::size_t bytes = 0;
};

// Element count and byte count of a shape. Every multiplication is checked: the shape comes from
// an untrusted file. Zero dimensions are skipped in the check (the array is empty), as numpy does,
// so a shape numpy refuses to create, like (2**62, 2**62, 0), is refused here too.
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

std::unique_ptr<std::byte[], detail::AlignedFree> allocate_aligned(std::size_t bytes,
                                                                   std::string_view where) {
  // At least one alignment unit, so that even an empty array has a valid, non-null pointer.
  const std::size_t allocated = std::max(bytes, kAlignment);
  void* storage = ::operator new (allocated, std::align_val_t{kAlignment}, std::nothrow);
  if (storage == nullptr) throw OutOfMemory(std::string(where), bytes);
  return std::unique_ptr<std::byte[], detail::AlignedFree>(static_cast<std::byte*>(storage));
}

// ---------------------------------------------------------------------------------------------
// Header dict parser.

struct NpyHeader {
  NpyDtype dtype = NpyDtype::float64;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;
};

// Parses exactly the Python literal numpy writes: '{' (string ':' value) separated by ',' with an
// optional trailing ',' '}', surrounded by any whitespace; values are a string (descr), True or
// False (fortran_order) and a tuple of non-negative integers (shape). Anything else is refused with
// the byte offset in the header where parsing stopped.
class HeaderParser {
 public:
  // `supported` ends the message for a dtype that is not taken: what the caller reads.
  HeaderParser(std::string_view header, std::string_view name, bool accept_long_suffix,
               std::string_view supported)
      : header_(header),
        name_(name),
        accept_long_suffix_(accept_long_suffix),
        supported_(supported) {}

  NpyHeader parse();

 private:
  [[noreturn]] void fail(std::string_view what) const {
    throw InvalidInput(fmt::format("{}: .npy header, byte {}: {}; header: \"{}\"", name_, pos_,
                                   what, printable(header_, 120)));
  }
  bool at_end() const { return pos_ >= header_.size(); }
  char peek() const { return at_end() ? '\0' : header_[pos_]; }
  std::string found() const {
    return at_end() ? std::string("the end of the header")
                    : fmt::format("'{}'", printable(header_.substr(pos_, 1)));
  }
  void skip_whitespace() {
    // Python allows newlines inside brackets; numpy pads with spaces and ends with '\n'.
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) {
      ++pos_;
    }
  }
  void expect(char wanted, std::string_view context) {
    if (peek() != wanted) fail(fmt::format("expected '{}' {}, found {}", wanted, context, found()));
    ++pos_;
  }
  std::string_view parse_string(std::string_view what);
  std::string_view parse_identifier();
  NpyDtype parse_descr();
  bool parse_bool();
  std::vector<std::int64_t> parse_shape();
  std::int64_t parse_dimension();

  std::string_view header_;
  std::string_view name_;
  bool accept_long_suffix_;
  std::string_view supported_;
  std::size_t pos_ = 0;
};

std::string_view HeaderParser::parse_string(std::string_view what) {
  const char quote = peek();
  if (quote != '\'' && quote != '"') fail(fmt::format("expected {}, found {}", what, found()));
  const std::size_t begin = ++pos_;
  while (!at_end() && peek() != quote) {
    // numpy never writes an escape, and no accepted key or dtype contains one.
    if (peek() == '\\') fail("escape sequences in strings are not supported");
    if (peek() == '\n') fail("line break inside a string");
    ++pos_;
  }
  if (at_end()) {
    pos_ = begin - 1;
    fail("string not closed");
  }
  return header_.substr(begin, pos_++ - begin);
}

std::string_view HeaderParser::parse_identifier() {
  const std::size_t begin = pos_;
  auto is_word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  while (!at_end() && is_word(peek())) ++pos_;
  return header_.substr(begin, pos_ - begin);
}

NpyDtype HeaderParser::parse_descr() {
  if (peek() == '[') fail("'descr' is a list: structured dtypes are not supported");
  const std::string_view descr = parse_string("a dtype string for 'descr'");
  for (const DtypeInfo& info : kDtypes) {
    if (descr == info.descr) return info.dtype;
  }
  if (!descr.empty() && descr.front() == '>') {
    throw InvalidInput(fmt::format("{}: dtype '{}' is big-endian, which is not supported ({})",
                                   name_, printable(descr), supported_));
  }
  throw InvalidInput(
      fmt::format("{}: unsupported dtype '{}' ({})", name_, printable(descr), supported_));
}

bool HeaderParser::parse_bool() {
  const std::size_t begin = pos_;
  const std::string_view word = parse_identifier();
  if (word == "True") return true;
  if (word == "False") return false;
  pos_ = begin;
  fail(fmt::format("'fortran_order' must be True or False, found {}", found()));
}

std::int64_t HeaderParser::parse_dimension() {
  const std::size_t begin = pos_;
  const bool negative = peek() == '-';
  if (negative) ++pos_;
  if (peek() < '0' || peek() > '9') {
    pos_ = begin;
    fail(fmt::format("expected a dimension (an integer) in 'shape', found {}", found()));
  }
  // Python 3 refuses leading zeros ("05" is a syntax error), so numpy never wrote them.
  if (peek() == '0' && pos_ + 1 < header_.size() && header_[pos_ + 1] >= '0' &&
      header_[pos_ + 1] <= '9') {
    fail("a dimension has a leading zero");
  }
  std::uint64_t magnitude = 0;
  bool too_large = false;
  while (!at_end() && peek() >= '0' && peek() <= '9') {
    const auto digit = static_cast<std::uint64_t>(peek() - '0');
    if (magnitude > (std::uint64_t{1} << 63) / 10 ||
        magnitude * 10 + digit > (std::uint64_t{1} << 63)) {
      too_large = true;
    } else {
      magnitude = magnitude * 10 + digit;
    }
    ++pos_;
  }
  // Python 2 numpy wrote long integers as "3L"; numpy still accepts them in 1.0 and 2.0 headers.
  if (accept_long_suffix_ && (peek() == 'L' || peek() == 'l')) ++pos_;
  if (too_large) {
    throw InvalidInput(fmt::format("{}: dimension {} in 'shape' does not fit in 64 bits", name_,
                                   printable(header_.substr(begin, pos_ - begin))));
  }
  if (negative && magnitude != 0) {
    throw InvalidInput(fmt::format("{}: negative dimension -{} in 'shape'", name_, magnitude));
  }
  if (magnitude > std::uint64_t{std::numeric_limits<std::int64_t>::max()}) {
    throw InvalidInput(
        fmt::format("{}: dimension {} in 'shape' does not fit in 64 bits", name_, magnitude));
  }
  return static_cast<std::int64_t>(magnitude);
}

std::vector<std::int64_t> HeaderParser::parse_shape() {
  if (peek() != '(') fail(fmt::format("'shape' must be a tuple like (3, 4), found {}", found()));
  ++pos_;
  std::vector<std::int64_t> shape;
  skip_whitespace();
  if (peek() == ')') {
    ++pos_;
    return shape;
  }
  while (true) {
    shape.push_back(parse_dimension());
    skip_whitespace();
    if (peek() == ')') {
      // (5) is the integer 5 in Python, not a tuple; numpy refuses it.
      if (shape.size() == 1) fail("'shape' (n) is not a tuple; a 1-D shape is written (n,)");
      ++pos_;
      return shape;
    }
    expect(',', "or ')' after a dimension");
    skip_whitespace();
    if (peek() == ')') {
      ++pos_;
      return shape;
    }
  }
}

NpyHeader HeaderParser::parse() {
  NpyHeader header;
  bool has_descr = false, has_fortran_order = false, has_shape = false;
  skip_whitespace();
  if (peek() != '{') fail(fmt::format("not a dict literal: expected '{{', found {}", found()));
  ++pos_;
  while (true) {
    skip_whitespace();
    if (peek() == '}') break;
    const std::size_t key_pos = pos_;
    const std::string_view key = parse_string("a quoted key or '}'");
    bool* seen = nullptr;
    if (key == "descr") {
      seen = &has_descr;
    } else if (key == "fortran_order") {
      seen = &has_fortran_order;
    } else if (key == "shape") {
      seen = &has_shape;
    } else {
      pos_ = key_pos;
      fail(fmt::format(
          "unknown key '{}' (a .npy header has exactly 'descr', 'fortran_order' and 'shape')",
          printable(key)));
    }
    if (*seen) {
      // Python would silently keep the last value; a file saying two things is refused.
      pos_ = key_pos;
      fail(fmt::format("duplicate key '{}'", key));
    }
    *seen = true;
    skip_whitespace();
    expect(':', fmt::format("after the key '{}'", key));
    skip_whitespace();
    if (key == "descr") {
      header.dtype = parse_descr();
    } else if (key == "fortran_order") {
      header.fortran_order = parse_bool();
    } else {
      header.shape = parse_shape();
    }
    skip_whitespace();
    if (peek() == '}') break;
    expect(',', "or '}' after a value");
  }
  ++pos_;  // '}'
  skip_whitespace();
  if (!at_end()) fail(fmt::format("unexpected {} after the dict", found()));
  for (auto [present, key] :
       {std::pair{has_descr, "descr"}, std::pair{has_fortran_order, "fortran_order"},
        std::pair{has_shape, "shape"}}) {
    if (!present) {
      throw InvalidInput(fmt::format("{}: .npy header lacks the key '{}'; header: \"{}\"", name_,
                                     key, printable(header_, 120)));
    }
  }
  return header;
}

// Offset of the first byte that breaks UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing
// above U+10FFFF), or nullopt when `text` is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    std::size_t continuation_count = 0;
    std::uint32_t code_point = 0, min_code_point = 0;
    if (lead < 0x80) {
      ++i;
      continue;
    } else if ((lead & 0xe0) == 0xc0) {
      continuation_count = 1, code_point = lead & 0x1f, min_code_point = 0x80;
    } else if ((lead & 0xf0) == 0xe0) {
      continuation_count = 2, code_point = lead & 0x0f, min_code_point = 0x800;
    } else if ((lead & 0xf8) == 0xf0) {
      continuation_count = 3, code_point = lead & 0x07, min_code_point = 0x10000;
    } else {
      return i;
    }
    if (text.size() - i <= continuation_count) return i;
    for (std::size_t k = 1; k <= continuation_count; ++k) {
      const auto byte = static_cast<unsigned char>(text[i + k]);
      if ((byte & 0xc0) != 0x80) return i;
      code_point = (code_point << 6) | (byte & 0x3f);
    }
    if (code_point < min_code_point || code_point > 0x10ffff ||
        (code_point >= 0xd800 && code_point <= 0xdfff)) {
      return i;
    }
    i += continuation_count + 1;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Fortran order -> C order.

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

// ---------------------------------------------------------------------------------------------
// Byte sources: the reader below runs over a file descriptor or over bytes in memory.

class MemorySource {
 public:
  explicit MemorySource(std::span<const std::byte> bytes) : bytes_(bytes) {}
  std::optional<std::uint64_t> remaining_bytes() const { return bytes_.size() - offset_; }
  // Copies up to `count` bytes; fewer only at the end of the input.
  std::size_t read(std::byte* destination, std::size_t count) {
    const std::size_t taken = std::min(count, bytes_.size() - offset_);
    if (taken != 0) std::memcpy(destination, bytes_.data() + offset_, taken);
    offset_ += taken;
    return taken;
  }

 private:
  std::span<const std::byte> bytes_;
  std::size_t offset_ = 0;
};

class FileSource {
 public:
  FileSource(int fd, std::string_view name) : fd_(fd), name_(name) {
    struct stat status {};
    if (::fstat(fd_, &status) != 0) {
      throw IoError(fmt::format("{}: cannot read: {}", name_, std::strerror(errno)));
    }
    if (S_ISDIR(status.st_mode)) throw IoError(fmt::format("{}: is a directory", name_));
    if (S_ISREG(status.st_mode)) {
      // A regular file's size lets the header be checked before anything large is allocated.
      const off_t position = ::lseek(fd_, 0, SEEK_CUR);
      if (position >= 0 && position <= status.st_size) {
        remaining_ = static_cast<std::uint64_t>(status.st_size - position);
      }
      // The data is read once, front to back: let the kernel read ahead aggressively.
      (void)::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
  }
  // Known for a regular file (it may still change while it is read: the reads below decide).
  std::optional<std::uint64_t> remaining_bytes() const { return remaining_; }
  // Reads up to `count` bytes; fewer only at the end of the input.
  std::size_t read(std::byte* destination, std::size_t count) {
    std::size_t done = 0;
    while (done < count) {
      const ssize_t got = ::read(fd_, destination + done, std::min(count - done, kMaxSyscallBytes));
      if (got < 0) {
        if (errno == EINTR) continue;
        throw IoError(fmt::format("{}: read failed: {}", name_, std::strerror(errno)));
      }
      if (got == 0) break;
      done += static_cast<std::size_t>(got);
    }
    if (remaining_) *remaining_ -= std::min<std::uint64_t>(*remaining_, done);
    return done;
  }

 private:
  int fd_;
  std::string_view name_;
  std::optional<std::uint64_t> remaining_;
};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

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

// accepted == nullptr: every dtype of kDtypes.
template <class Source>
NpyArray read_npy_from(Source& source, std::string_view name,
                       const NpyAccepted* accepted = nullptr) {
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
  const NpyHeader header = HeaderParser(header_text, name, major < 3, supported).parse();
  if (accepted != nullptr && std::find(accepted->dtypes.begin(), accepted->dtypes.end(),
                                       header.dtype) == accepted->dtypes.end()) {
    // Refused from the header, before the data is read.
    throw InvalidInput(fmt::format("{}: {}, not {}", name, supported, dtype_name(header.dtype)));
  }
  const std::size_t element_bytes = dtype_size(header.dtype);
  const ShapeSize size = checked_shape_size(header.shape, element_bytes, name);
  const std::size_t data_offset = header_offset + header_bytes;

  if (auto remaining = source.remaining_bytes()) {
    if (*remaining < size.bytes) {
      throw InvalidInput(
          fmt::format("{}: truncated data: expected {} data bytes after the header (byte {}) for "
                      "shape {} of {}, "
                      "found {}",
                      name, size.bytes, data_offset, shape_text(header.shape),
                      dtype_name(header.dtype), *remaining));
    }
    if (*remaining > size.bytes) {
      throw InvalidInput(fmt::format(
          "{}: {} trailing bytes after the data (shape {} of {} is {} bytes from byte {})", name,
          *remaining - size.bytes, shape_text(header.shape), dtype_name(header.dtype), size.bytes,
          data_offset));
    }
  }

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
    if (element_bytes == 4) {
      fortran_to_c_order<4>(array.bytes(), c_order.bytes(), header.shape);
    } else {
      fortran_to_c_order<8>(array.bytes(), c_order.bytes(), header.shape);
    }
    array = std::move(c_order);
  }
  return array;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Public API.

std::string_view dtype_name(NpyDtype dtype) { return info_of(dtype).name; }

std::size_t dtype_size(NpyDtype dtype) { return info_of(dtype).size; }

namespace detail {

void AlignedFree::operator()(std::byte* storage) const noexcept {
  ::operator delete (storage, std::align_val_t{kAlignment});
}

void throw_dtype_mismatch(NpyDtype held, NpyDtype asked) {
  throw InvalidInput(
      fmt::format("NpyArray holds {} elements, not {}", dtype_name(held), dtype_name(asked)));
}

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

NpyArray::NpyArray(NpyDtype element_type, std::vector<std::int64_t> dimensions)
    : dtype(element_type), shape(std::move(dimensions)) {
  byte_size_ = checked_shape_size(shape, dtype_size(dtype), "NpyArray").bytes;
  storage_ = allocate_aligned(byte_size_, "NpyArray");
}

NpyArray::NpyArray(const NpyArray& other)
    : dtype(other.dtype), shape(other.shape), byte_size_(other.byte_size_) {
  if (other.storage_) {
    storage_ = allocate_aligned(byte_size_, "NpyArray copy");
    std::memcpy(storage_.get(), other.storage_.get(), byte_size_);
  }
}

NpyArray& NpyArray::operator=(const NpyArray& other) {
  if (this != &other) *this = NpyArray(other);
  return *this;
}

NpyArray::NpyArray(NpyArray&& other) noexcept
    : dtype(other.dtype),
      shape(std::exchange(other.shape, {0})),
      storage_(std::move(other.storage_)),
      byte_size_(std::exchange(other.byte_size_, 0)) {}

NpyArray& NpyArray::operator=(NpyArray&& other) noexcept {
  if (this != &other) {
    dtype = other.dtype;
    shape = std::exchange(other.shape, {0});
    storage_ = std::move(other.storage_);
    byte_size_ = std::exchange(other.byte_size_, 0);
  }
  return *this;
}

std::int64_t NpyArray::size() const {
  std::int64_t elements = 1;
  for (std::int64_t dim : shape) elements *= dim;
  return elements;
}

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

NpyArray parse_npy(std::span<const std::byte> file_bytes, std::string_view name) {
  MemorySource source(file_bytes);
  return read_npy_from(source, name);
}

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

void write_npy(const std::filesystem::path& path, const NpyArray& array) {
  write_npy(path, array.dtype, array.shape, std::span(array.bytes(), array.byte_size()));
}

}  // namespace gpukit::io
