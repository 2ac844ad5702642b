// CsvReader: libcsv does the RFC 4180 state machine; this file feeds it one physical line at a time
// so that every record can be stamped with the line where it ends, and turns libcsv's status codes
// into gpukit errors.

#include <csv.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <istream>
#include <utility>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"

namespace gpukit::io {

namespace {

// One block read from the stream per refill; large enough that the per-call overhead of
// std::istream::read vanishes, small enough to keep the reader's footprint constant. The first
// block is smaller, so that reading many small inputs (tests, the fuzzer) does not map and unmap
// a megabyte each time.
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
constexpr std::size_t kFirstBlockBytes = std::size_t{64} << 10;

// A physical line longer than this is handed to libcsv in pieces, so that the growth of libcsv's
// field buffer can be made geometric between pieces (below).
constexpr std::size_t kMaxPieceBytes = std::size_t{64} << 10;

// libcsv grows its field buffer by a fixed block size on every overflow; the default (128 bytes)
// makes a long field cost quadratic time. Setting the block to the current buffer size before each
// piece makes the growth geometric.
constexpr std::size_t kMinParserBlockBytes = 4096;

bool is_blank_byte(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

struct CsvReader::Impl {
  Impl(std::istream& input, std::string name)
      : in(input),
        source_name(std::move(name)),
        buffer(std::make_unique_for_overwrite<char[]>(kFirstBlockBytes)) {
    // CSV_STRICT: a quote inside an unquoted field or text after a closing quote is an error
    // instead of being taken literally. CSV_STRICT_FINI: an unterminated quoted field at the end of
    // the input is an error instead of a silently truncated record.
    if (csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI) != 0) {
      throw OutOfMemory(source_name + ": CSV parser", sizeof(csv_parser));
    }
  }
  ~Impl() { csv_free(&parser); }
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  bool next(CsvRecord& record);

  // Parses the next piece of input (at most one physical line), or finishes at end of input.
  void advance();
  // Refills the block; false when the stream has nothing more.
  bool fill_buffer();
  void parse_piece(const char* data, std::size_t size);
  void finish();
  [[noreturn]] void throw_status_error(int status, std::int64_t line);

  // libcsv callbacks. They run inside C code, so they must not throw: a failure is parked in
  // callback_error and rethrown once csv_parse has returned.
  static void on_field(void* data, std::size_t size, void* self);
  static void on_record_end(int terminator, void* self);
  void add_field(const char* data, std::size_t size);
  void end_record();

  std::istream& in;
  std::string source_name;
  csv_parser parser{};

  std::unique_ptr<char[]> buffer;
  std::size_t buffer_capacity = kFirstBlockBytes;
  std::size_t buffer_pos = 0;
  std::size_t buffer_end = 0;
  bool stream_exhausted = false;
  bool at_input_start = true;  // the byte order mark is looked for only there
  bool finished = false;       // csv_fini has run; nothing more will come
  std::int64_t bytes_read = 0;

  // Physical line being fed to the parser (1-based); advances after each LF.
  std::int64_t current_line = 1;
  // Line on which the record now being parsed began, 0 when between records; names the line of an
  // unterminated quote, which is only detected at the end of the input.
  std::int64_t open_record_line = 0;
  bool record_ended_in_piece = false;

  // The record being assembled, and the completed records not yet handed out (a FIFO whose slots
  // are recycled, so their strings keep their capacity from record to record).
  CsvRecord building;
  std::size_t building_field_count = 0;
  std::vector<CsvRecord> ready;
  std::size_t ready_head = 0;
  std::size_t ready_tail = 0;

  std::exception_ptr callback_error;
};

void CsvReader::Impl::on_field(void* data, std::size_t size, void* self) {
  auto* impl = static_cast<Impl*>(self);
  if (impl->callback_error) return;
  try {
    impl->add_field(static_cast<const char*>(data), size);
  } catch (...) {
    impl->callback_error = std::current_exception();
  }
}

void CsvReader::Impl::on_record_end(int /*terminator*/, void* self) {
  auto* impl = static_cast<Impl*>(self);
  if (impl->callback_error) return;
  try {
    impl->end_record();
  } catch (...) {
    impl->callback_error = std::current_exception();
  }
}

void CsvReader::Impl::add_field(const char* data, std::size_t size) {
  auto& fields = building.fields;
  std::string_view text{data, size};
  if (building_field_count < fields.size()) {
    fields[building_field_count].assign(text);
  } else {
    fields.emplace_back(text);
  }
  ++building_field_count;
}

void CsvReader::Impl::end_record() {
  building.fields.resize(building_field_count);
  building.line = current_line;
  if (ready_tail == ready.size()) ready.emplace_back();
  std::swap(ready[ready_tail], building);
  ++ready_tail;
  building_field_count = 0;
  record_ended_in_piece = true;
  open_record_line = 0;
}

bool CsvReader::Impl::next(CsvRecord& record) {
  while (ready_head == ready_tail) {
    if (finished) return false;
    ready_head = ready_tail = 0;  // all handed out: reuse the slots from the front
    advance();
  }
  std::swap(record, ready[ready_head]);
  ++ready_head;
  return true;
}

void CsvReader::Impl::advance() {
  if (buffer_pos == buffer_end && !fill_buffer()) {
    finish();
    return;
  }
  const char* piece = buffer.get() + buffer_pos;
  std::size_t piece_size = std::min(buffer_end - buffer_pos, kMaxPieceBytes);
  const void* line_feed = std::memchr(piece, '\n', piece_size);
  if (line_feed != nullptr) {
    piece_size = static_cast<std::size_t>(static_cast<const char*>(line_feed) - piece) + 1;
  }
  parse_piece(piece, piece_size);
  buffer_pos += piece_size;
  if (line_feed != nullptr) ++current_line;
}

bool CsvReader::Impl::fill_buffer() {
  if (stream_exhausted) return false;
  if (!at_input_start && buffer_capacity < kBlockBytes) {
    // The input is more than one small block: switch to full-size blocks (the buffer holds
    // nothing unparsed when it is refilled).
    buffer = std::make_unique_for_overwrite<char[]>(kBlockBytes);
    buffer_capacity = kBlockBytes;
  }
  std::streamsize got = 0;
  try {
    in.read(buffer.get(), static_cast<std::streamsize>(buffer_capacity));
    got = in.gcount();
  } catch (const std::exception& e) {  // a stream with exceptions() enabled
    throw IoError(fmt::format("{}: read failed: {}", source_name, e.what()));
  }
  if (in.bad()) throw IoError(fmt::format("{}: read failed", source_name));
  // read() stops short of the request only at the end of the stream.
  if (got < static_cast<std::streamsize>(buffer_capacity)) stream_exhausted = true;
  buffer_pos = 0;
  buffer_end = static_cast<std::size_t>(got);
  bytes_read += got;
  if (at_input_start && buffer_end > 0) {
    at_input_start = false;
    if (buffer_end >= 3 && std::memcmp(buffer.get(), "\xEF\xBB\xBF", 3) == 0) buffer_pos = 3;
  }
  return buffer_end > 0;
}

void CsvReader::Impl::parse_piece(const char* data, std::size_t size) {
  record_ended_in_piece = false;
  csv_set_blk_size(&parser, std::max(kMinParserBlockBytes, csv_get_buffer_size(&parser)));
  std::size_t parsed = csv_parse(&parser, data, size, &Impl::on_field, &Impl::on_record_end, this);
  if (callback_error) std::rethrow_exception(callback_error);
  if (parsed != size) throw_status_error(csv_error(&parser), current_line);
  if (!record_ended_in_piece && open_record_line == 0 &&
      !std::all_of(data, data + size, is_blank_byte)) {
    open_record_line = current_line;
  }
}

void CsvReader::Impl::finish() {
  finished = true;
  int rc = csv_fini(&parser, &Impl::on_field, &Impl::on_record_end, this);
  if (callback_error) std::rethrow_exception(callback_error);
  if (rc != 0) throw_status_error(csv_error(&parser), current_line);
}

void CsvReader::Impl::throw_status_error(int status, std::int64_t line) {
  switch (status) {
    case CSV_EPARSE:
      if (finished) {
        std::int64_t opened = open_record_line != 0 ? open_record_line : line;
        throw InvalidInput(fmt::format(
            "{}:{}: unterminated quoted field: the record starting on this line opens a quote "
            "that is never closed",
            source_name, opened));
      }
      // libcsv stops on the offending byte with `quoted` still describing the field it was in.
      if (parser.quoted) {
        throw InvalidInput(fmt::format(
            "{}:{}: malformed CSV: text after the closing quote of a quoted field (a quote inside "
            "a quoted field must be doubled)",
            source_name, line));
      }
      throw InvalidInput(fmt::format(
          "{}:{}: malformed CSV: quote character inside an unquoted field (enclose the field in "
          "quotes and double the quote)",
          source_name, line));
    case CSV_ENOMEM:
    case CSV_ETOOBIG:
      throw OutOfMemory(fmt::format("{}:{}: CSV field buffer", source_name, line),
                        csv_get_buffer_size(&parser) + parser.blk_size);
    default:
      throw InvalidInput(
          fmt::format("{}:{}: CSV parser error: {}", source_name, line, csv_strerror(status)));
  }
}

CsvReader::CsvReader(std::istream& in, std::string source_name) {
  // An std::ifstream that failed to open arrives here with failbit set; reading it would look
  // like an empty file.
  if (in.fail())
    throw IoError(fmt::format("{}: cannot read (stream in a failed state)", source_name));
  impl_ = std::make_unique<Impl>(in, std::move(source_name));
}

CsvReader::~CsvReader() = default;
CsvReader::CsvReader(CsvReader&&) noexcept = default;
CsvReader& CsvReader::operator=(CsvReader&&) noexcept = default;

bool CsvReader::next(CsvRecord& record) { return impl_->next(record); }

std::int64_t CsvReader::bytes_read() const { return impl_->bytes_read; }

const std::string& CsvReader::source_name() const { return impl_->source_name; }

}  // namespace gpukit::io
