#pragma once
// NumPy .npy files: one dense array of int32, int64, uint32, uint64, float32 or float64, read into
// 64-byte aligned host memory and written the way numpy.save writes it. Used for the grids of the
// Poisson solver and the inputs/outputs of reduction and scan.
//
// Format (numpy/lib/format.py, NEP 1): "\x93NUMPY", a major and a minor version byte, the header
// length (little-endian uint16 for version 1.0, uint32 for 2.0 and 3.0), the header: a Python dict
// literal {'descr': <dtype string>, 'fortran_order': <bool>, 'shape': <tuple of ints>} padded with
// spaces and ended by '\n' (ASCII/latin-1 for 1.0 and 2.0, UTF-8 for 3.0), then the raw elements.
//
// Plain C++: no CUDA. Sizes are std::int64_t, so arrays of 2^31 elements and more (files of
// several GB) work.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpukit::io {

/// The element types gpukit reads and writes, all little-endian in the file.
enum class NpyDtype { int32, int64, uint32, uint64, float32, float64 };

/// "int32", "int64", "uint32", "uint64", "float32", "float64".
std::string_view dtype_name(NpyDtype dtype);
/// Bytes per element: 4 or 8.
std::size_t dtype_size(NpyDtype dtype);

namespace detail {
template <class T>
inline constexpr bool is_npy_integer_v =
    std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char> &&
    !std::is_same_v<T, signed char> && !std::is_same_v<T, unsigned char> &&
    !std::is_same_v<T, wchar_t> && !std::is_same_v<T, char8_t> && !std::is_same_v<T, char16_t> &&
    !std::is_same_v<T, char32_t> && (sizeof(T) == 4 || sizeof(T) == 8);
template <class T>
inline constexpr bool always_false_v = false;
}  // namespace detail

/// The NpyDtype of a C++ element type: std::int32_t -> int32, std::int64_t -> int64 (also
/// `long long`), std::uint32_t -> uint32, std::uint64_t -> uint64, float -> float32, double ->
/// float64. Any other type does not compile.
template <class T>
constexpr NpyDtype npy_dtype_of() {
  using Element = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<Element, float>) {
    return NpyDtype::float32;
  } else if constexpr (std::is_same_v<Element, double>) {
    return NpyDtype::float64;
  } else if constexpr (detail::is_npy_integer_v<Element>) {
    if constexpr (std::is_signed_v<Element>) {
      return sizeof(Element) == 4 ? NpyDtype::int32 : NpyDtype::int64;
    } else {
      return sizeof(Element) == 4 ? NpyDtype::uint32 : NpyDtype::uint64;
    }
  } else {
    static_assert(detail::always_false_v<T>,
                  "npy_dtype_of: element type must be a 4- or 8-byte integer, float or double");
  }
}

namespace detail {
struct AlignedFree {
  void operator()(std::byte* storage) const noexcept;
};
// Throws InvalidInput naming both dtypes (kept out of line: no fmt or error.hpp in this header).
[[noreturn]] void throw_dtype_mismatch(NpyDtype held, NpyDtype asked);
}  // namespace detail

/// A dense array in host memory, C order (last index fastest).
///
/// `dtype` and `shape` describe the storage allocated at construction; they are public to be read
/// (and may be reassigned together with a new array), but changing them in place does not resize
/// the storage. Copying copies the elements; moving is cheap and leaves the source empty (shape
/// {0}).
struct NpyArray {
  NpyDtype dtype = NpyDtype::float64;
  std::vector<std::int64_t> shape{0};  // C order; {} is a 0-d array (one element)

  /// An empty 1-D float64 array, shape {0}.
  NpyArray() = default;
  /// Allocates (uninitialized) storage for `shape` elements of `dtype`.
  /// Throws gpukit::InvalidInput for a negative dimension or a byte count that overflows, and
  /// gpukit::OutOfMemory (with the byte count) when the allocation fails.
  NpyArray(NpyDtype element_type, std::vector<std::int64_t> dimensions);
  NpyArray(const NpyArray& other);
  NpyArray& operator=(const NpyArray& other);
  NpyArray(NpyArray&& other) noexcept;
  NpyArray& operator=(NpyArray&& other) noexcept;
  ~NpyArray() = default;

  /// Number of elements: the product of shape (1 for a 0-d array, 0 when a dimension is 0).
  std::int64_t size() const;
  /// Bytes of element data: size() * dtype_size(dtype).
  std::size_t byte_size() const { return byte_size_; }

  /// The element data, byte_size() bytes, native (little-endian) order, 64-byte aligned; not null
  /// for an array constructed with a shape or read from a file (also when it has no elements), null
  /// for a default-constructed or moved-from one.
  const std::byte* bytes() const { return storage_.get(); }
  std::byte* bytes() { return storage_.get(); }

  /// The elements as T; throws gpukit::InvalidInput when npy_dtype_of<T>() != dtype.
  template <class T>
  std::span<const T> values() const {
    if (npy_dtype_of<T>() != dtype) detail::throw_dtype_mismatch(dtype, npy_dtype_of<T>());
    return {reinterpret_cast<const T*>(storage_.get()), byte_size_ / sizeof(T)};
  }
  template <class T>
  std::span<T> values() {
    if (npy_dtype_of<T>() != dtype) detail::throw_dtype_mismatch(dtype, npy_dtype_of<T>());
    return {reinterpret_cast<T*>(storage_.get()), byte_size_ / sizeof(T)};
  }

 private:
  std::unique_ptr<std::byte[], detail::AlignedFree> storage_;
  std::size_t byte_size_ = 0;
};

/// Reads a .npy file; "-" reads standard input.
///
/// Accepted: format versions 1.0, 2.0 and 3.0 (3.0 headers must be valid UTF-8); dtypes '<i4',
/// '<i8', '<u4', '<u8', '<f4', '<f8' (the strings numpy writes for these types); fortran_order
/// False, or True, in which case the data is transposed into C order (any number of dimensions; the
/// transpose needs a second buffer of the array's size while it runs); the header dict as numpy
/// writes it, keys in any order, either quote style, any whitespace, an optional trailing comma,
/// shapes (), (n,), (n, m, ...), and the 'L' suffix Python 2 numpy wrote on dimensions (1.0 and
/// 2.0 headers only, as numpy accepts it).
///
/// Errors:
///   - gpukit::IoError when the file cannot be opened or read;
///   - gpukit::InvalidInput, message "<path>: <what>", for anything malformed: bad magic, unknown
///     version, header length past the end of the file, a header that is not such a dict literal,
///     a missing, duplicate or unknown key, a big-endian ('>') or other dtype (the message names it
///     and lists the supported ones), a negative dimension, a shape whose element count times the
///     element size overflows int64 (every multiplication is checked, zero dimensions aside, as
///     numpy does), truncated data (the message gives the data bytes expected and found), bytes
///     after the data;
///   - gpukit::OutOfMemory with the byte count when the storage cannot be allocated.
///
/// Cost: the header is read first, then the data straight into the array's storage with large
/// read() calls (one copy, from the page cache); a regular file's size is checked against the
/// header before anything is allocated. From a pipe the storage is allocated from the header before
/// the data is known to be there (the kernel commits the pages only as they are filled).
/// Tested in tests/io/npy_test.cpp; the parser is fuzzed through parse_npy by fuzz/npy_fuzz.cpp.
NpyArray read_npy(const std::filesystem::path& path);

/// What a caller of read_npy takes: its dtypes and its name in messages ("reduce").
struct NpyAccepted {
  std::span<const NpyDtype> dtypes;
  std::string_view reader;
};

/// read_npy for a caller that takes only `accepted.dtypes`: any other dtype, known or not, is
/// refused from the header, before the data is read, with an InvalidInput message that lists
/// only those ("x.npy: reduce takes int32 ('<i4'), ... or float64 ('<f8'), not uint64").
NpyArray read_npy(const std::filesystem::path& path, const NpyAccepted& accepted);

/// What the header of a .npy file says, and where its data starts.
struct NpyFileInfo {
  NpyDtype dtype = NpyDtype::float64;
  std::vector<std::int64_t> shape;
  bool fortran_order = false;
  std::uint64_t data_offset = 0;  // bytes before the first element (magic, length, header)
  /// Elements: the product of shape (1 for a 0-d array).
  std::int64_t size() const;
};

/// The header of the .npy file `path`, read and checked as read_npy(path, accepted) checks it
/// (the same messages), and the file's size checked against it (truncated data and trailing bytes
/// refused), without reading the data. `path` must be a regular file: "-" and pipes are refused
/// (InvalidInput), since the readers by rows below read at offsets. IoError when the file cannot
/// be opened or read.
NpyFileInfo read_npy_info(const std::filesystem::path& path, const NpyAccepted& accepted);

/// Rows [row_begin, row_begin + row_count) of axis 0 of a C-order .npy file: an array of shape
/// (row_count, shape[1], ...) holding exactly those elements. The file is checked as
/// read_npy_info checks it; InvalidInput for a 0-d array, rows outside axis 0 (row_count may be
/// 0), and a Fortran-order array (its rows are strided through the whole file: the message says
/// how to save it in C order). Only the rows' bytes are read (positioned reads), so the processes
/// of a distributed solve each read their own slab and none holds the whole array.
/// Tested in tests/io/npy_test.cpp (every split of awkward shapes against read_npy, refusals).
NpyArray read_npy_rows(const std::filesystem::path& path, const NpyAccepted& accepted,
                       std::int64_t row_begin, std::int64_t row_count);

/// The same as read_npy, from the complete file contents in memory; `name` stands for the file in
/// messages. Never allocates more than file_bytes.size() bytes of element storage (sizes are
/// checked against the input first). The result does not alias file_bytes.
NpyArray parse_npy(std::span<const std::byte> file_bytes, std::string_view name);

/// Writes `data`, the elements of an array of `dtype` and `shape` in C order, as a .npy file; "-"
/// writes to standard output.
///
/// Output: what numpy.save writes for the same array: version 1.0 (2.0 only when the header does
/// not fit 1.0's 16-bit length), keys in sorted order, fortran_order False, the header padded with
/// spaces (including numpy's spare room for a growing first axis) so that the data starts at a
/// multiple of 64 bytes, ended by '\n'.
/// Written by AtomicFile (gpukit/io/atomic_file.hpp): a temporary file in the same directory,
/// flushed to disk, then renamed over `path`; on any failure the temporary file is removed and
/// `path` is untouched; an existing file keeps its mode, a symlink is written through, a read-only
/// file is refused. "-" goes through write_stdout (IoError when stdout fails).
/// Throws gpukit::InvalidInput for a negative dimension, an overflowing shape, or when data.size()
/// is not the shape's element count times dtype_size(dtype); gpukit::IoError when a file cannot be
/// created, written or renamed. `data` may be anything readable, including an NpyArray's bytes().
void write_npy(const std::filesystem::path& path, NpyDtype dtype,
               std::span<const std::int64_t> shape, std::span<const std::byte> data);

/// write_npy of an NpyArray (its dtype, shape and bytes).
void write_npy(const std::filesystem::path& path, const NpyArray& array);

/// write_npy of typed elements in C order; the shape's element count must equal values.size().
template <class T>
void write_npy(const std::filesystem::path& path, std::span<const std::int64_t> shape,
               std::span<const T> values) {
  write_npy(path, npy_dtype_of<T>(), shape, std::as_bytes(values));
}

/// write_npy of a 1-D array, shape (values.size(),).
template <class T>
void write_npy(const std::filesystem::path& path, std::span<const T> values) {
  const std::int64_t shape[1] = {static_cast<std::int64_t>(values.size())};
  write_npy(path, npy_dtype_of<T>(), shape, std::as_bytes(values));
}

class AtomicFile;  // gpukit/io/atomic_file.hpp

/// Begins a C-order .npy output written by rows (write_npy_rows below), possibly by several
/// processes: writes into `file` (an AtomicFile just made for the output) numpy's header for
/// `dtype` and `shape`, the header write_npy writes. The file is complete, and the bytes write_npy
/// writes for the same array, once every row is written; then `file.commit()` puts it in place.
/// Throws InvalidInput for a negative dimension or a shape whose byte count overflows; IoError
/// when the write fails.
void begin_npy_rows(AtomicFile& file, NpyDtype dtype, std::span<const std::int64_t> shape);

/// Writes rows [row_begin, row_begin + n) of axis 0 of the C-order array of `dtype` and `shape`
/// into the file `path`, whose header begin_npy_rows wrote (an AtomicFile's temporary_path()):
/// `bytes` holds n whole rows (a row: the product of shape[1:] elements), written at their offset
/// after the header (io::write_file_region: positioned writes, flushed to disk). Rows may be
/// written in any order, by any process that sees `path`; each of them once. Not collective:
/// gpukit/scale_out/npy_rows.hpp is the helper by which the ranks of a job write one file.
/// Throws InvalidInput for a 0-d shape, `bytes` that are not whole rows, or rows outside axis 0;
/// IoError naming the file when it cannot be written. Tested in tests/io/npy_test.cpp (rows
/// written in every order and piece size give write_npy's bytes).
void write_npy_rows(const std::filesystem::path& path, NpyDtype dtype,
                    std::span<const std::int64_t> shape, std::int64_t row_begin,
                    std::span<const std::byte> bytes);

namespace detail {
/// Everything numpy.save writes before the data of a C-order array of `dtype` and `shape`: magic,
/// version, header length, header dict, padding. Its size is a multiple of 64. Throws InvalidInput
/// for a negative dimension. Exposed for the tests and the fuzz target's round trip.
std::string npy_header_bytes(NpyDtype dtype, std::span<const std::int64_t> shape);
}  // namespace detail

}  // namespace gpukit::io
