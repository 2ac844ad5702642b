// read_npy / parse_npy / write_npy: round trips of every dtype and shape through files, the bytes
// numpy.save writes, hand-built version 1.0, 2.0 and 3.0 files, the header syntax numpy produces,
// Fortran-order transposes (every element checked), one test per refusal (exception type and key
// phrase of the message), and the atomic writer.

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/npy.hpp"

namespace gpukit::io {
namespace {

namespace fs = std::filesystem;

// The message of the InvalidInput that `call` throws ("" and a test failure when it throws none).
template <class Call>
std::string message_of(const Call& call) {
  try {
    call();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidInput thrown";
  return {};
}

static_assert(npy_dtype_of<std::int32_t>() == NpyDtype::int32);
static_assert(npy_dtype_of<std::int64_t>() == NpyDtype::int64);
static_assert(npy_dtype_of<long long>() == NpyDtype::int64);
static_assert(npy_dtype_of<std::uint32_t>() == NpyDtype::uint32);
static_assert(npy_dtype_of<std::uint64_t>() == NpyDtype::uint64);
static_assert(npy_dtype_of<float>() == NpyDtype::float32);
static_assert(npy_dtype_of<const double>() == NpyDtype::float64);

// A fresh directory per test, removed afterwards.
class NpyFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("gpukit_npy_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good());
}

// A .npy file built by hand: magic, version major.0, the header length as that version stores it,
// `header` verbatim (no padding added), then `data`.
std::string make_npy(int major, std::string_view header, std::string_view data = {}) {
  std::string file("\x93NUMPY", 6);
  file.push_back(static_cast<char>(major));
  file.push_back('\0');
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  for (std::size_t k = 0; k < length_bytes; ++k) {
    file.push_back(static_cast<char>((header.size() >> (8 * k)) & 0xff));
  }
  file += header;
  file += data;
  return file;
}

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

NpyArray parse(const std::string& file) {
  return parse_npy(std::as_bytes(std::span(file)), "test.npy");
}

// Message of the InvalidInput that parsing `file` throws; fails the test when nothing or something
// else is thrown, or when the message does not start with the file name.
std::string parse_error(const std::string& file) {
  try {
    parse(file);
  } catch (const InvalidInput& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("test.npy: ", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "no InvalidInput thrown";
  return {};
}

std::string header_with(std::string_view descr, std::string_view fortran_order,
                        std::string_view shape) {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': " + std::string(fortran_order) +
         ", 'shape': " + std::string(shape) + ", }  \n";
}

// ---------------------------------------------------------------------------------------------
// Round trips.

template <class T>
class NpyRoundTrip : public NpyFiles {};

using ElementTypes =
    ::testing::Types<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;
TYPED_TEST_SUITE(NpyRoundTrip, ElementTypes);

TYPED_TEST(NpyRoundTrip, EveryShapeReadsBackUnchanged) {
  using T = TypeParam;
  const std::vector<std::vector<std::int64_t>> shapes = {{}, {0}, {1}, {7}, {3, 5}, {2, 3, 4}};
  for (const std::vector<std::int64_t>& shape : shapes) {
    std::int64_t count = 1;
    for (std::int64_t dim : shape) count *= dim;
    std::vector<T> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i) {
      // Distinct, and using the top bit of unsigned and negative values of signed types.
      if constexpr (std::is_floating_point_v<T>) {
        values[i] = static_cast<T>(i) * T(1.5) - T(7.25);
      } else if constexpr (std::is_signed_v<T>) {
        values[i] = static_cast<T>(i * 3) - 11;
      } else {
        values[i] = std::numeric_limits<T>::max() - static_cast<T>(i * 5);
      }
    }
    const fs::path path = this->dir_ / "array.npy";
    write_npy<T>(path, shape, values);

    const std::string file = read_file(path);
    const std::string header = detail::npy_header_bytes(npy_dtype_of<T>(), shape);
    ASSERT_EQ(file.size(), header.size() + values.size() * sizeof(T));
    EXPECT_EQ(header.size() % 64, 0u);
    EXPECT_EQ(file.substr(0, header.size()), header);

    const NpyArray array = read_npy(path);
    EXPECT_EQ(array.dtype, npy_dtype_of<T>());
    EXPECT_EQ(array.shape, shape);
    EXPECT_EQ(array.size(), count);
    EXPECT_EQ(array.byte_size(), values.size() * sizeof(T));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(array.bytes()) % 64, 0u);
    const std::span<const T> read_values = array.values<T>();
    ASSERT_EQ(read_values.size(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      EXPECT_EQ(read_values[i], values[i]) << "element " << i << " of shape size " << shape.size();
    }
  }
}

TEST_F(NpyFiles, OneDimensionalWriterAndNpyArrayWriter) {
  const std::vector<double> values = {1.0, -2.5, 3.25};
  const fs::path path = dir_ / "one.npy";
  write_npy<double>(path, values);
  NpyArray array = read_npy(path);
  EXPECT_EQ(array.shape, (std::vector<std::int64_t>{3}));
  EXPECT_EQ(std::vector<double>(array.values<double>().begin(), array.values<double>().end()),
            values);

  array.values<double>()[1] = 42.0;
  write_npy(path, array);
  const NpyArray again = read_npy(path);
  EXPECT_EQ(again.values<double>()[1], 42.0);
  EXPECT_EQ(again.values<double>()[2], 3.25);
}

TEST(Npy, WritesTheHeaderNumpyWrites) {
  // np.save of np.zeros((3, 4), np.float32) with numpy >= 1.23: sorted keys, a trailing ", ",
  // 21 - len("3") spaces of room for the first axis to grow, padding to 64 bytes, '\n'.
  const std::int64_t shape[] = {3, 4};
  const std::string header = detail::npy_header_bytes(NpyDtype::float32, shape);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";
  ASSERT_EQ(header.size(), 128u);
  EXPECT_EQ(header.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));  // length 118
  EXPECT_EQ(header.substr(10, dict.size()), dict);
  EXPECT_EQ(header.substr(10 + dict.size(), 127 - 10 - dict.size()), std::string(58, ' '));
  EXPECT_EQ(header.back(), '\n');

  // A 0-d array has no growth room; (5,) is spelled with a trailing comma.
  const std::string scalar = detail::npy_header_bytes(NpyDtype::int64, {});
  EXPECT_EQ(scalar.size(), 128u);
  EXPECT_NE(scalar.find("{'descr': '<i8', 'fortran_order': False, 'shape': (), }"),
            std::string::npos);
  const std::int64_t vector_shape[] = {5};
  EXPECT_NE(detail::npy_header_bytes(NpyDtype::uint32, vector_shape).find("'shape': (5,), }"),
            std::string::npos);
}

TEST(Npy, HeaderTooLongForVersionOneIsWrittenAsVersionTwo) {
  // 25 000 dimensions of 1 take 75 000 header bytes, more than 1.0's 16-bit length field holds.
  const std::vector<std::int64_t> shape(25000, 1);
  const std::string header = detail::npy_header_bytes(NpyDtype::float64, shape);
  ASSERT_GT(header.size(), 65535u);
  EXPECT_EQ(header[6], '\x02');
  EXPECT_EQ(header.size() % 64, 0u);
  const double value = 6.5;
  const NpyArray array = parse(header + std::string(reinterpret_cast<const char*>(&value), 8));
  EXPECT_EQ(array.shape, shape);
  EXPECT_EQ(array.values<double>()[0], 6.5);
}

// ---------------------------------------------------------------------------------------------
// Hand-built files and header syntax.

TEST(Npy, ReadsVersionOneTwoAndThreeHeaders) {
  const std::vector<double> values = {0.5, -1.0};
  const std::string header = header_with("<f8", "False", "(2,)");
  for (int major : {1, 2, 3}) {
    const NpyArray array = parse(make_npy(major, header, bytes_of(values)));
    EXPECT_EQ(array.dtype, NpyDtype::float64) << "version " << major;
    EXPECT_EQ(array.shape, (std::vector<std::int64_t>{2})) << "version " << major;
    EXPECT_EQ(array.values<double>()[0], 0.5) << "version " << major;
    EXPECT_EQ(array.values<double>()[1], -1.0) << "version " << major;
  }
}

TEST(Npy, AcceptsTheHeaderSyntaxNumpyAndPythonProduce) {
  const std::vector<std::int32_t> six = {1, 2, 3, 4, 5, 6};
  const std::vector<std::string> headers = {
      "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
      "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 3)}",
      "  {  'shape' :( 2 ,3 ,) ,'fortran_order':False,'descr':'<i4'}\n",
      "{'descr':\t'<i4',\n 'fortran_order': False,\r\n 'shape': (2,3)}" + std::string(40, ' ') +
          "\n",
  };
  for (const std::string& header : headers) {
    const NpyArray array = parse(make_npy(1, header, bytes_of(six)));
    EXPECT_EQ(array.dtype, NpyDtype::int32) << header;
    EXPECT_EQ(array.shape, (std::vector<std::int64_t>{2, 3})) << header;
    EXPECT_EQ(array.values<std::int32_t>()[5], 6) << header;
  }
  // 0-d: one element; a zero dimension: no data.
  const std::vector<std::uint64_t> one = {99};
  const NpyArray scalar = parse(make_npy(1, header_with("<u8", "False", "()"), bytes_of(one)));
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.size(), 1);
  EXPECT_EQ(scalar.values<std::uint64_t>()[0], 99u);
  const NpyArray empty = parse(make_npy(1, header_with("<f4", "True", "(4, 0)")));
  EXPECT_EQ(empty.shape, (std::vector<std::int64_t>{4, 0}));
  EXPECT_EQ(empty.size(), 0);
  EXPECT_NE(empty.bytes(), nullptr);
}

TEST(Npy, AcceptsPythonTwoLongSuffixOnlyBeforeVersionThree) {
  const std::vector<float> values = {1, 2, 3};
  const std::string header = header_with("<f4", "False", "(3L,)");
  EXPECT_EQ(parse(make_npy(1, header, bytes_of(values))).shape, (std::vector<std::int64_t>{3}));
  EXPECT_NE(parse_error(make_npy(3, header, bytes_of(values))).find("expected ',' or ')'"),
            std::string::npos);
}

TEST(Npy, VersionThreeHeaderMustBeUtf8) {
  const std::string header = header_with("<f4", "False", "(0,)") + "\xc3\x28";
  EXPECT_NE(parse_error(make_npy(3, header)).find("not valid UTF-8"), std::string::npos);
  // Valid UTF-8 that is no part of the grammar is a syntax error, like any other character.
  const std::string accented = header_with("<f4", "False", "(0,)") + "\xc3\xa9";
  EXPECT_NE(parse_error(make_npy(3, accented)).find("after the dict"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Fortran order.

// Writes a Fortran-order file of `shape` whose element at C index (i0, i1, ...) has the value
// encode(index) and checks that read_npy gives every element at its C-order position.
void check_fortran_transpose(const fs::path& path, const std::vector<std::int64_t>& shape) {
  const std::size_t rank = shape.size();
  std::int64_t count = 1;
  for (std::int64_t dim : shape) count *= dim;
  auto value_at = [&](const std::vector<std::int64_t>& index) {
    std::int64_t value = 0;
    for (std::int64_t i : index) value = value * 1000 + i;  // unique per index: every dim < 1000
    return value + 1;
  };
  std::vector<std::int64_t> fortran_data(static_cast<std::size_t>(count));
  std::vector<std::int64_t> index(rank, 0);
  for (std::int64_t c_offset = 0; c_offset < count; ++c_offset) {
    // index = the C-order index of c_offset
    std::int64_t rest = c_offset;
    for (std::size_t axis = rank; axis-- > 0;) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
    std::int64_t fortran_offset = 0, stride = 1;
    for (std::size_t axis = 0; axis < rank; ++axis) {
      fortran_offset += index[axis] * stride;
      stride *= shape[axis];
    }
    fortran_data[static_cast<std::size_t>(fortran_offset)] = value_at(index);
  }
  std::string shape_text = "(";
  for (std::int64_t dim : shape) shape_text += std::to_string(dim) + ",";
  shape_text += ")";
  write_file(path, make_npy(1, header_with("<i8", "True", shape_text), bytes_of(fortran_data)));

  const NpyArray array = read_npy(path);
  ASSERT_EQ(array.shape, shape);
  const std::span<const std::int64_t> values = array.values<std::int64_t>();
  ASSERT_EQ(static_cast<std::int64_t>(values.size()), count);
  for (std::int64_t c_offset = 0; c_offset < count; ++c_offset) {
    std::int64_t rest = c_offset;
    for (std::size_t axis = rank; axis-- > 0;) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
    ASSERT_EQ(values[static_cast<std::size_t>(c_offset)], value_at(index))
        << "C offset " << c_offset << " of shape " << shape_text;
  }
}

TEST_F(NpyFiles, FortranOrderIsTransposedToCOrder) {
  // 2-D and 3-D, sizes below and above the transpose's 32 x 32 tile, unit axes, 4-D.
  for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
           {3, 4}, {70, 45}, {2, 3, 4}, {5, 33, 40}, {2, 1, 3, 1, 4}, {3, 2, 4, 5}, {6}, {1, 9}}) {
    check_fortran_transpose(dir_ / "fortran.npy", shape);
  }
}

TEST(Npy, FortranOrderFloat32Transpose) {
  // 4-byte elements take the other copy path: (2, 3) Fortran data 0..5 is [[0, 2, 4], [1, 3, 5]].
  const std::vector<float> fortran_data = {0, 1, 2, 3, 4, 5};
  const NpyArray array =
      parse(make_npy(2, header_with("<f4", "True", "(2, 3)"), bytes_of(fortran_data)));
  const std::vector<float> expected = {0, 2, 4, 1, 3, 5};
  const std::span<const float> values = array.values<float>();
  EXPECT_EQ(std::vector<float>(values.begin(), values.end()), expected);
}

// ---------------------------------------------------------------------------------------------
// Refusals.

TEST(NpyRefuses, BadMagic) {
  std::string file = make_npy(1, header_with("<f8", "False", "(0,)"));
  file[5] = 'X';
  EXPECT_NE(parse_error(file).find("bad magic"), std::string::npos);
  EXPECT_NE(parse_error("").find("bad magic"), std::string::npos);
  EXPECT_NE(parse_error("PK\x03\x04").find("not a .npy file"), std::string::npos);
}

TEST(NpyRefuses, UnknownVersion) {
  const std::string message = parse_error(make_npy(4, header_with("<f8", "False", "(0,)")));
  EXPECT_NE(message.find("unsupported .npy format version 4.0"), std::string::npos) << message;
  std::string minor_one = make_npy(1, header_with("<f8", "False", "(0,)"));
  minor_one[7] = '\x01';
  EXPECT_NE(parse_error(minor_one).find("version 1.1"), std::string::npos);
}

TEST(NpyRefuses, HeaderLengthBeyondTheFile) {
  std::string file = make_npy(1, header_with("<f8", "False", "(0,)"));
  file[8] = '\xff';  // length field 0x??ff: far past the end
  EXPECT_NE(parse_error(file).find("runs past the end of the file"), std::string::npos);
  EXPECT_NE(parse_error(std::string("\x93NUMPY\x02\x00\x10", 9)).find("header length field"),
            std::string::npos);
}

TEST_F(NpyFiles, TruncatedDataGivesExpectedAndFoundBytes) {
  const std::string file = make_npy(1, header_with("<f8", "False", "(4,)"), std::string(20, 'x'));
  const std::string message = parse_error(file);
  EXPECT_NE(message.find("truncated data: expected 32 data bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("found 20"), std::string::npos) << message;

  // The same through a file.
  write_file(dir_ / "short.npy", file);
  try {
    read_npy(dir_ / "short.npy");
    ADD_FAILURE() << "no InvalidInput thrown";
  } catch (const InvalidInput& e) {
    const std::string file_message = e.what();
    EXPECT_EQ(file_message.rfind((dir_ / "short.npy").string() + ": ", 0), 0u) << file_message;
    EXPECT_NE(file_message.find("expected 32 data bytes"), std::string::npos) << file_message;
    EXPECT_NE(file_message.find("found 20"), std::string::npos) << file_message;
  }
}

TEST_F(NpyFiles, TrailingBytesAfterTheData) {
  const std::string file = make_npy(1, header_with("<i4", "False", "(2,)"), std::string(11, 'x'));
  EXPECT_NE(parse_error(file).find("3 trailing bytes after the data"), std::string::npos);
  write_file(dir_ / "long.npy", file);
  EXPECT_THROW(read_npy(dir_ / "long.npy"), InvalidInput);
}

TEST(NpyRefuses, BigEndianDtype) {
  const std::string message = parse_error(make_npy(1, header_with(">f8", "False", "(0,)")));
  EXPECT_NE(message.find("dtype '>f8' is big-endian"), std::string::npos) << message;
  EXPECT_NE(message.find("'<i4', '<i8', '<u4', '<u8', '<f4', '<f8'"), std::string::npos) << message;
}

TEST(NpyRefuses, HalfPrecisionDtype) {
  const std::string message = parse_error(make_npy(1, header_with("<f2", "False", "(0,)")));
  EXPECT_NE(message.find("unsupported dtype '<f2'"), std::string::npos) << message;
  EXPECT_NE(message.find("supported dtypes: '<i4'"), std::string::npos) << message;
}

TEST(NpyRefuses, ComplexDtype) {
  const std::string message = parse_error(make_npy(1, header_with("<c8", "False", "(0,)")));
  EXPECT_NE(message.find("unsupported dtype '<c8'"), std::string::npos) << message;
}

TEST(NpyRefuses, StructuredDtype) {
  const std::string header = "{'descr': [('x', '<f4')], 'fortran_order': False, 'shape': (0,)}";
  EXPECT_NE(parse_error(make_npy(1, header)).find("structured dtypes are not supported"),
            std::string::npos);
}

TEST(NpyRefuses, NegativeDimension) {
  const std::string message = parse_error(make_npy(1, header_with("<f8", "False", "(2, -3)")));
  EXPECT_NE(message.find("negative dimension -3"), std::string::npos) << message;
}

TEST(NpyRefuses, ShapeWhoseByteCountOverflows) {
  // 2^61 float64 elements are 2^64 bytes.
  std::string message =
      parse_error(make_npy(1, header_with("<f8", "False", "(2305843009213693952,)")));
  EXPECT_NE(message.find("overflows 64 bits"), std::string::npos) << message;
  // Each dimension fits, the product does not; a zero dimension does not excuse it (as in numpy).
  message = parse_error(make_npy(1, header_with("<i4", "False", "(4294967296, 4294967296, 0)")));
  EXPECT_NE(message.find("overflows 64 bits"), std::string::npos) << message;
  // A dimension beyond int64.
  message = parse_error(make_npy(1, header_with("<i4", "False", "(99999999999999999999,)")));
  EXPECT_NE(message.find("does not fit in 64 bits"), std::string::npos) << message;
  // Just fits: 2^60 - 1 bytes... refused only as truncated, not as overflowing.
  message = parse_error(make_npy(1, header_with("<f8", "False", "(1152921504606846975,)")));
  EXPECT_NE(message.find("truncated data"), std::string::npos) << message;
}

TEST(NpyRefuses, MissingKey) {
  const std::string message = parse_error(make_npy(1, "{'descr': '<f8', 'fortran_order': False}"));
  EXPECT_NE(message.find("lacks the key 'shape'"), std::string::npos) << message;
}

TEST(NpyRefuses, DuplicateKey) {
  const std::string message = parse_error(
      make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), 'descr': '<f4'}"));
  EXPECT_NE(message.find("duplicate key 'descr'"), std::string::npos) << message;
}

TEST(NpyRefuses, UnknownKey) {
  const std::string message = parse_error(
      make_npy(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), 'comment': 'x'}"));
  EXPECT_NE(message.find("unknown key 'comment'"), std::string::npos) << message;
}

TEST(NpyRefuses, HeaderThatIsNotADict) {
  EXPECT_NE(parse_error(make_npy(1, "['<f8', False, (0,)]\n")).find("not a dict literal"),
            std::string::npos);
  EXPECT_NE(parse_error(make_npy(1, "")).find("not a dict literal"), std::string::npos);
}

TEST(NpyRefuses, MalformedHeaderSyntax) {
  struct Case {
    std::string header, phrase;
  };
  const std::vector<Case> cases = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5)}", "is not a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [5]}", "must be a tuple"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': (5,)}", "True or False"},
      {"{'descr': '<f8', 'fortran_order': false, 'shape': (5,)}", "True or False"},
      {"{'descr' '<f8', 'fortran_order': False, 'shape': (5,)}", "expected ':'"},
      {"{'descr': '<f8' 'fortran_order': False, 'shape': (5,)}", "expected ',' or '}'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,)", "found the end of the header"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,)} x", "after the dict"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (05,)}", "leading zero"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,,)}", "expected a dimension"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1.5,)}", "expected ',' or ')'"},
      {"{'descr': '\\x3cf8', 'fortran_order': False, 'shape': (5,)}", "escape sequences"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (5,), 'descr", "string not closed"},
      {"{descr: '<f8', 'fortran_order': False, 'shape': (5,)}", "expected a quoted key"},
      {std::string("{'descr': '<f8', 'fortran_order': False, 'shape': (5,)}") + '\0',
       "unexpected '\\x00' after the dict"},
  };
  for (const Case& c : cases) {
    const std::string message = parse_error(make_npy(1, c.header));
    EXPECT_NE(message.find(c.phrase), std::string::npos) << c.header << "\n -> " << message;
  }
}

TEST(NpyRefuses, ValuesOfTheWrongType) {
  const std::vector<float> values = {1};
  const NpyArray array = parse(make_npy(1, header_with("<f4", "False", "(1,)"), bytes_of(values)));
  EXPECT_EQ(array.values<float>()[0], 1.0f);
  try {
    array.values<double>();
    ADD_FAILURE() << "no InvalidInput thrown";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("holds float32 elements, not float64"), std::string::npos);
  }
}

TEST_F(NpyFiles, FileThatCannotBeOpenedOrRead) {
  EXPECT_THROW(read_npy(dir_ / "missing.npy"), IoError);
  try {
    read_npy(dir_);
    ADD_FAILURE() << "no IoError thrown";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos);
  }
}

// ---------------------------------------------------------------------------------------------
// Writing.

TEST_F(NpyFiles, WriteIntoAMissingDirectoryThrowsAndLeavesNothing) {
  const std::vector<double> values = {1, 2};
  const fs::path missing = dir_ / "no_such_dir";
  EXPECT_THROW(write_npy<double>(missing / "out.npy", values), IoError);
  EXPECT_FALSE(fs::exists(missing));
  EXPECT_TRUE(fs::is_empty(dir_));
}

TEST_F(NpyFiles, FailedWriteLeavesTheOldFileAndNoTemporary) {
  const fs::path path = dir_ / "keep.npy";
  const std::vector<std::int32_t> old_values = {7, 8, 9};
  write_npy<std::int32_t>(path, old_values);
  const std::string old_bytes = read_file(path);

  // Shape (2, 2) needs 16 bytes; 12 given.
  const std::int64_t shape[] = {2, 2};
  try {
    write_npy<std::int32_t>(path, shape, old_values);
    ADD_FAILURE() << "no InvalidInput thrown";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("holds 16 bytes, but 12 bytes of data were given"),
              std::string::npos)
        << e.what();
  }
  const std::int64_t negative[] = {-1};
  EXPECT_THROW(write_npy(path, NpyDtype::int32, negative, {}), InvalidInput);
  // The target is a directory: the rename fails after the data was written.
  fs::create_directory(dir_ / "a_directory");
  EXPECT_THROW(write_npy<std::int32_t>(dir_ / "a_directory", old_values), IoError);

  EXPECT_EQ(read_file(path), old_bytes);
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir_)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a_directory", "keep.npy"}));
  EXPECT_TRUE(fs::is_empty(dir_ / "a_directory"));
}

TEST_F(NpyFiles, WriteReplacesAnExistingFile) {
  const fs::path path = dir_ / "replace.npy";
  write_file(path, "not a npy file at all");
  const std::vector<std::uint64_t> values = {1, 2, 3, 4};
  write_npy<std::uint64_t>(path, values);
  const NpyArray array = read_npy(path);
  EXPECT_EQ(array.values<std::uint64_t>()[3], 4u);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator{}), 1);
}

// ---------------------------------------------------------------------------------------------
// Reading by rows (read_npy_info, read_npy_rows): every split of awkward shapes into contiguous
// row ranges gives exactly the rows of the whole array read by read_npy (an independent reader:
// it reads the file front to back), and the header is checked as read_npy checks it.

TEST_F(NpyFiles, RowsOfEverySplitEqualTheWholeArrayRows) {
  const std::vector<std::vector<std::int64_t>> shapes = {{1}, {7}, {5, 3}, {4, 1, 3}, {3, 2, 5}};
  for (const std::vector<std::int64_t>& shape : shapes) {
    std::int64_t count = 1;
    for (std::int64_t dim : shape) count *= dim;
    std::vector<float> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 3;
    const fs::path path = dir_ / "rows.npy";
    write_npy<float>(path, shape, values);
    const NpyArray whole = read_npy(path);
    const std::int64_t row_elements = count / shape[0];
    constexpr NpyDtype kFloat[] = {NpyDtype::float32};

    const NpyFileInfo info = read_npy_info(path, {kFloat, "test"});
    EXPECT_EQ(info.dtype, NpyDtype::float32);
    EXPECT_EQ(info.shape, shape);
    EXPECT_FALSE(info.fortran_order);
    EXPECT_EQ(info.size(), count);
    EXPECT_EQ(info.data_offset, detail::npy_header_bytes(NpyDtype::float32, shape).size());

    for (std::int64_t begin = 0; begin <= shape[0]; ++begin) {
      for (std::int64_t rows = 0; begin + rows <= shape[0]; ++rows) {
        const NpyArray slab = read_npy_rows(path, {kFloat, "test"}, begin, rows);
        std::vector<std::int64_t> slab_shape = shape;
        slab_shape[0] = rows;
        ASSERT_EQ(slab.shape, slab_shape);
        const std::span<const float> got = slab.values<float>();
        ASSERT_EQ(static_cast<std::int64_t>(got.size()), rows * row_elements);
        const std::span<const float> expected = whole.values<float>();
        for (std::size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i], expected[static_cast<std::size_t>(begin * row_elements) + i])
              << "rows " << begin << "+" << rows << ", element " << i;
        }
      }
    }
  }
}

TEST_F(NpyFiles, RowsAreRefusedWhereTheWholeArrayIsAndWhereTheyCannotBeRead) {
  constexpr NpyDtype kFloat[] = {NpyDtype::float32};
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::int64_t shape[] = {3, 2};
  const fs::path path = dir_ / "a.npy";
  write_npy<float>(path, shape, values);
  // Rows outside axis 0.
  EXPECT_NE(message_of([&] {
              read_npy_rows(path, {kFloat, "test"}, 2, 2);
            }).find("outside axis 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_npy_rows(path, {kFloat, "test"}, -1, 1);
            }).find("outside axis 0"),
            std::string::npos);
  // A dtype the caller does not take, refused from the header as read_npy refuses it.
  constexpr NpyDtype kDouble[] = {NpyDtype::float64};
  EXPECT_NE(message_of([&] {
              read_npy_rows(path, {kDouble, "poisson"}, 0, 1);
            }).find("poisson takes float64 ('<f8'), not float32"),
            std::string::npos);
  // Truncated data and trailing bytes: the same messages as read_npy, even for rows that are there.
  const std::string file = read_file(path);
  write_file(dir_ / "short.npy", file.substr(0, file.size() - 4));
  const std::string truncated = message_of([&] {
    read_npy_rows(dir_ / "short.npy", {kFloat, "test"}, 0, 1);
  });
  EXPECT_NE(truncated.find("truncated data: expected 24 data bytes"), std::string::npos)
      << truncated;
  EXPECT_NE(truncated.find("found 20"), std::string::npos) << truncated;
  write_file(dir_ / "long.npy", file + "xy");
  EXPECT_NE(message_of([&] {
              read_npy_info(dir_ / "long.npy", {kFloat, "test"});
            }).find("2 trailing bytes after the data"),
            std::string::npos);
  // Fortran order: the rows are not contiguous.
  const std::string fortran = make_npy(1, header_with("<f4", "True", "(3, 2)"), bytes_of(values));
  write_file(dir_ / "f.npy", fortran);
  EXPECT_NE(message_of([&] {
              read_npy_rows(dir_ / "f.npy", {kFloat, "test"}, 0, 1);
            }).find("Fortran-order array cannot be read by rows"),
            std::string::npos);
  // Standard input cannot be read at offsets; a missing file is an I/O error.
  EXPECT_NE(message_of([&] {
              read_npy_rows("-", {kFloat, "test"}, 0, 1);
            }).find("standard input"),
            std::string::npos);
  EXPECT_THROW(read_npy_info(dir_ / "missing.npy", {kFloat, "test"}), IoError);
  // A 0-d array has no rows.
  write_npy<float>(dir_ / "scalar.npy", std::span<const std::int64_t>(),
                   std::span(values).first(1));
  EXPECT_NE(message_of([&] {
              read_npy_rows(dir_ / "scalar.npy", {kFloat, "test"}, 0, 0);
            }).find("0-d array"),
            std::string::npos);
}

// Writing by rows (begin_npy_rows, write_npy_rows): the header, then row ranges written in
// any order and in pieces of any size, make the bytes write_npy writes for the whole array.

TEST_F(NpyFiles, RowsWrittenInAnyOrderMakeTheFileWriteNpyWrites) {
  const std::vector<std::vector<std::int64_t>> shapes = {{1},       {7},       {5, 3},
                                                         {4, 1, 3}, {3, 2, 5}, {0, 4}};
  for (const std::vector<std::int64_t>& shape : shapes) {
    std::int64_t count = 1;
    for (std::int64_t dim : shape) count *= dim;
    std::vector<double> values(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i) * 0.25 - 2;
    write_npy<double>(dir_ / "whole.npy", shape, values);
    const std::string expected = read_file(dir_ / "whole.npy");
    const auto row_bytes = static_cast<std::size_t>(shape[0] == 0 ? 0 : count / shape[0]) * 8;
    const std::span<const std::byte> all = std::as_bytes(std::span(values));
    // Pieces of 1, 2 and 3 rows, written last piece first.
    for (const std::int64_t piece : {1, 2, 3}) {
      SCOPED_TRACE(::testing::Message() << "shape of " << shape.size() << " axes, " << count
                                        << " elements, pieces of " << piece << " rows");
      {
        AtomicFile file(dir_ / "rows.npy");
        begin_npy_rows(file, NpyDtype::float64, shape);
        std::vector<std::int64_t> starts;
        for (std::int64_t r = 0; r < shape[0]; r += piece) starts.push_back(r);
        std::reverse(starts.begin(), starts.end());
        for (const std::int64_t r : starts) {
          const std::int64_t n = std::min(piece, shape[0] - r);
          write_npy_rows(file.temporary_path(), NpyDtype::float64, shape, r,
                         all.subspan(static_cast<std::size_t>(r) * row_bytes,
                                     static_cast<std::size_t>(n) * row_bytes));
        }
        file.commit();
      }
      EXPECT_TRUE(read_file(dir_ / "rows.npy") == expected);
    }
  }
}

TEST_F(NpyFiles, RowWritesAreRefusedOutsideAxisZeroAndForPartialRows) {
  const std::int64_t shape[] = {3, 2};
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::span<const std::byte> bytes = std::as_bytes(std::span(values));
  AtomicFile file(dir_ / "a.npy");
  begin_npy_rows(file, NpyDtype::float32, shape);
  const fs::path temporary = file.temporary_path();
  EXPECT_NE(message_of([&] {
              write_npy_rows(temporary, NpyDtype::float32, shape, 2, bytes.first(16));
            }).find("rows 2 to 4 are outside axis 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              write_npy_rows(temporary, NpyDtype::float32, shape, -1, bytes.first(8));
            }).find("outside axis 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              write_npy_rows(temporary, NpyDtype::float32, shape, 0, bytes.first(12));
            }).find("12 bytes are not whole rows of 8 bytes"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              write_npy_rows(temporary, NpyDtype::float32, std::span<const std::int64_t>(), 0,
                             bytes.first(4));
            }).find("0-d array"),
            std::string::npos);
  // A file that is not there is an I/O error (the rows need the header's file).
  EXPECT_THROW(write_npy_rows(dir_ / "missing.npy", NpyDtype::float32, shape, 0, bytes), IoError);
}

TEST(NpyArrayType, ConstructionCopyAndMove) {
  NpyArray array(NpyDtype::int32, {2, 3});
  EXPECT_EQ(array.size(), 6);
  EXPECT_EQ(array.byte_size(), 24u);
  std::span<std::int32_t> values = array.values<std::int32_t>();
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * i);

  NpyArray copy = array;
  EXPECT_NE(copy.bytes(), array.bytes());
  EXPECT_EQ(std::memcmp(copy.bytes(), array.bytes(), 24), 0);
  EXPECT_EQ(copy.shape, array.shape);

  NpyArray moved = std::move(copy);
  EXPECT_EQ(moved.values<std::int32_t>()[5], 25);
  EXPECT_EQ(copy.byte_size(), 0u);  // NOLINT(bugprone-use-after-move): documented state

  EXPECT_THROW(NpyArray(NpyDtype::float64, {-2}), InvalidInput);
  EXPECT_THROW(NpyArray(NpyDtype::float64, {std::int64_t{1} << 61}), InvalidInput);
  EXPECT_EQ(dtype_name(NpyDtype::uint64), "uint64");
  EXPECT_EQ(dtype_size(NpyDtype::float32), 4u);
  EXPECT_EQ(dtype_size(NpyDtype::int64), 8u);
}

}  // namespace
}  // namespace gpukit::io
