// CsvReader: a small RFC 4180 state machine, fed one physical line at a time so that every record
// can be stamped with the line where it ends.
//
// Why not libcsv (used until issue 18): it drops the blanks around an unquoted field as it reads,
// so a pass-through column could not come out byte for byte. Telling it that nothing is a blank
// keeps them, but then it rejects blanks around a quoted field (`a, "b"`) and turns a line of
// blanks into a record. The dialect wanted here (csv.hpp) is a few states; the fuzz target checks
// it against the writer.

#include <algorithm>
#include <cstring>
#include <istream>
#include <new>
#include <optional>
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

// A physical line longer than this is parsed in pieces (the state carries over between them).
constexpr std::size_t kMaxPieceBytes = std::size_t{64} << 10;

}  // namespace

namespace detail {

std::optional<std::string_view> binary_file_kind(std::string_view start) noexcept {
  struct Magic {
    std::string_view bytes, kind;
  };
  static constexpr Magic kMagics[] = {
      {"\x1F\x8B", "gzip-compressed; decompress it first (gunzip)"},
      {"BZh", "bzip2-compressed; decompress it first (bunzip2)"},
      {std::string_view("\xFD"
                        "7zXZ\0",
                        6),
       "xz-compressed; decompress it first (unxz)"},
      {"\x28\xB5\x2F\xFD", "zstd-compressed; decompress it first (unzstd)"},
      {"PK\x03\x04",
       "a ZIP archive (an .xlsx workbook?); save the sheet as CSV UTF-8 (comma delimited)"},
  };
  for (const Magic& magic : kMagics) {
    if (!start.starts_with(magic.bytes)) continue;
    // bzip2's "BZh" is followed by the block size digit and the block magic "1AY&SY", so that
    // a header merely starting "BZh" is not taken for one.
    if (magic.bytes == "BZh" &&
        (start.size() < 10 || start[3] < '1' || start[3] > '9' || start.substr(4, 6) != "1AY&SY")) {
      continue;
    }
    return magic.kind;
  }
  return std::nullopt;
}

bool starts_like_sep_line(std::string_view text) noexcept {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  return text.size() >= 4 && lower(text[0]) == 's' && lower(text[1]) == 'e' &&
         lower(text[2]) == 'p' && text[3] == '=';
}

}  // namespace detail

std::optional<char> parse_csv_delimiter(std::string_view name) {
  if (name == "tab" || name == "\\t" || name == "\t") return '\t';
  if (name == "," || name == ";" || name == "|") return name.front();
  return std::nullopt;
}

struct CsvReader::Impl {
  // Where the parser is within a record. A blank is a space or a tab that is not the delimiter.
  enum class State : std::uint8_t {
    field_start,      // no byte of the field yet, or only blanks (kept in the field for now)
    unquoted,         // an unquoted field: every byte up to the delimiter or line end is its text
    quoted,           // inside quotes
    quote_in_quoted,  // a quote inside quotes: the closing one, or the first of a doubled pair
    after_quoted,     // blanks after the closing quote
  };

  Impl(std::istream& input, std::string name, char delimiter_char)
      : in(input),
        source_name(std::move(name)),
        delimiter(delimiter_char),
        buffer(std::make_unique_for_overwrite<char[]>(kFirstBlockBytes)) {}

  bool next(CsvRecord& record);

  // Parses the next piece of input (at most one physical line), or finishes at end of input.
  void advance();
  // Refills the block; false when the stream has nothing more.
  bool fill_buffer();
  void parse_piece(const char* data, std::size_t size);
  void finish();

  bool is_blank(char c) const { return (c == ' ' || c == '\t') && c != delimiter; }
  std::string& field() { return building.fields[building_field_count]; }
  std::string& raw_field() { return building.raw_fields[building_field_count]; }
  // What the start of the input says about it: a byte order mark (skipped), a UTF-16 or binary
  // file (refused), an Excel `sep=` line (taken as the delimiter and skipped).
  void read_input_start();
  void note_first_line_end(char c);
  void start_field();
  void end_field();
  // Ends the record; `terminator` is the CR or LF that ended it (0 at the end of the input).
  void end_record(char terminator);
  [[noreturn]] void throw_quote_in_unquoted() const;
  [[noreturn]] void throw_text_after_quote() const;

  std::istream& in;
  std::string source_name;
  char delimiter;

  std::unique_ptr<char[]> buffer;
  std::size_t buffer_capacity = kFirstBlockBytes;
  std::size_t buffer_pos = 0;
  std::size_t buffer_end = 0;
  bool stream_exhausted = false;
  bool at_input_start = true;  // the byte order mark is looked for only there
  bool has_byte_order_mark = false;
  std::string sep_line;  // Excel's `sep=X` first line, or empty
  // The first record's line break: 0 until it ends, then '\n' or '\r'; a CR followed by LF
  // makes it CR LF (seen at the next byte).
  char first_line_end = 0;
  bool first_line_end_is_crlf = false;
  bool awaiting_lf_after_first_cr = false;
  bool finished = false;  // the end of the input was parsed; nothing more will come
  std::int64_t bytes_read = 0;

  // Physical line being parsed (1-based); advances after each LF.
  std::int64_t current_line = 1;
  // Line on which the record now being parsed began; names the line of an unterminated quote,
  // which is only detected at the end of the input.
  std::int64_t record_line = 0;

  State state = State::field_start;
  // The field being built was quoted: its input bytes (raw_field) differ from its text.
  bool field_quoted = false;
  std::string blanks_after_quote;  // of the quoted field being built
  // The record has a delimiter, a quote or a non-blank byte: a line end now ends a record instead
  // of a blank line.
  bool record_open = false;

  // The record being assembled (its field strings are recycled), and the completed records not
  // yet handed out (a FIFO whose slots are recycled, so their strings keep their capacity).
  CsvRecord building;
  std::size_t building_field_count = 0;
  std::vector<CsvRecord> ready;
  std::size_t ready_head = 0;
  std::size_t ready_tail = 0;
};

void CsvReader::Impl::start_field() {
  auto& fields = building.fields;
  if (building_field_count == fields.size()) fields.emplace_back();
  if (building_field_count == building.raw_fields.size()) building.raw_fields.emplace_back();
  fields[building_field_count].clear();
  building.raw_fields[building_field_count].clear();
}

void CsvReader::Impl::end_field() {
  if (field_quoted) {
    // raw_field holds the blanks before the opening quote and the quote; between the quotes the
    // input held the field with each quote doubled, the only way a quote can be written there.
    std::string& raw = raw_field();
    for (const char c : field()) {
      raw.push_back(c);
      if (c == '"') raw.push_back('"');
    }
    raw.push_back('"');
    raw += blanks_after_quote;
    blanks_after_quote.clear();
    field_quoted = false;
  }
  ++building_field_count;
  start_field();
  state = State::field_start;
}

void CsvReader::Impl::note_first_line_end(char c) {
  if (first_line_end != 0) return;
  first_line_end = c;
  awaiting_lf_after_first_cr = c == '\r';
}

void CsvReader::Impl::end_record(char terminator) {
  if (terminator != 0) note_first_line_end(terminator);
  building.fields.resize(building_field_count);
  building.raw_fields.resize(building_field_count);
  building.line = current_line;
  if (ready_tail == ready.size()) ready.emplace_back();
  std::swap(ready[ready_tail], building);
  ++ready_tail;
  building_field_count = 0;
  start_field();
  state = State::field_start;
  record_open = false;
}

void CsvReader::Impl::throw_quote_in_unquoted() const {
  throw InvalidInput(fmt::format(
      "{}:{}: malformed CSV: quote character inside an unquoted field (enclose the field in "
      "quotes and double the quote)",
      source_name, current_line));
}

void CsvReader::Impl::throw_text_after_quote() const {
  throw InvalidInput(fmt::format(
      "{}:{}: malformed CSV: text after the closing quote of a quoted field (a quote inside a "
      "quoted field must be doubled)",
      source_name, current_line));
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
  try {
    parse_piece(piece, piece_size);
  } catch (const std::bad_alloc&) {
    const std::size_t held = building_field_count < building.fields.size()
                                 ? building.fields[building_field_count].capacity()
                                 : 0;
    throw OutOfMemory(fmt::format("{}:{}: CSV field", source_name, current_line), 2 * held + 1);
  }
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
    read_input_start();
  }
  return buffer_end > 0;
}

void CsvReader::Impl::read_input_start() {
  const std::string_view start(buffer.get(), buffer_end);
  if (start.starts_with("\xEF\xBB\xBF")) {
    has_byte_order_mark = true;
    buffer_pos = 3;
  }
  // Read as bytes, UTF-16 would give fields of text and NULs and a misleading "column is
  // missing"; spreadsheets write it as "Unicode text" with a byte order mark.
  if (start.starts_with("\xFF\xFE") || start.starts_with("\xFE\xFF")) {
    throw InvalidInput(fmt::format(
        "{}:1: the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8 CSV",
        source_name));
  }
  // A compressed file or a workbook read as text gives a header of binary bytes and a baffling
  // "column is missing": say what the file is. (Reading gzip would tie the reader to zlib for
  // what `zcat FILE |` does on every system.)
  if (const std::optional<std::string_view> kind = detail::binary_file_kind(start)) {
    throw InvalidInput(fmt::format("{}:1: the file is {}", source_name, *kind));
  }
  // Excel's delimiter hint: `sep=X` and a line end (or nothing more) as the whole first line.
  const std::string_view rest = start.substr(buffer_pos);
  if (rest.size() >= 5 && detail::starts_like_sep_line(rest) && rest[4] != '\r' &&
      rest[4] != '\n') {
    const std::string_view after = rest.substr(5);
    const bool whole_line =
        after.empty() ? stream_exhausted : (after.front() == '\n' || after.front() == '\r');
    if (whole_line) {
      const char named = rest[4];
      if (named == '"' || named == ' ') {
        throw InvalidInput(fmt::format(
            "{}:1: the first line \"{}\" names a delimiter a CSV file cannot use (a quote or a "
            "space)",
            source_name, rest.substr(0, 5)));
      }
      delimiter = named;
      sep_line.assign(rest.substr(0, 5));
      // Skipped with its line end; the header's line end is the book's.
      std::size_t skipped = 5;
      if (after.starts_with("\r\n") || after.starts_with("\n")) {
        skipped += after.front() == '\r' ? 2 : 1;
        ++current_line;
      } else if (!after.empty()) {
        skipped += 1;  // a lone CR, which line numbers do not count
      }
      buffer_pos += skipped;
    }
  }
}

void CsvReader::Impl::parse_piece(const char* data, std::size_t size) {
  if (building.fields.empty()) start_field();
  const char* const end = data + size;
  for (const char* p = data; p != end;) {
    const char c = *p;
    switch (state) {
      case State::field_start:
        if (awaiting_lf_after_first_cr) {
          // The byte after the CR that ended the first record: an LF makes the line end CR LF.
          awaiting_lf_after_first_cr = false;
          first_line_end_is_crlf = c == '\n';
        }
        if (c == delimiter) {
          if (!record_open) record_line = current_line;
          record_open = true;
          end_field();
        } else if (c == '\r' || c == '\n') {
          if (record_open) {
            end_field();
            end_record(c);
          } else {
            field().clear();  // a line of blanks is skipped
          }
        } else if (is_blank(c)) {
          field().push_back(c);  // part of the field unless a quote follows
        } else if (c == '"') {
          if (!record_open) record_line = current_line;
          record_open = true;
          // Blanks before the opening quote are not part of the field, but of its input bytes.
          raw_field().assign(field());
          raw_field().push_back('"');
          field().clear();
          field_quoted = true;
          state = State::quoted;
        } else {
          if (!record_open) record_line = current_line;
          record_open = true;
          state = State::unquoted;
          continue;  // the unquoted run below takes this byte
        }
        ++p;
        break;
      case State::unquoted: {
        // Take the run of ordinary bytes at once.
        const char* q = p;
        while (q != end && *q != delimiter && *q != '"' && *q != '\r' && *q != '\n') ++q;
        field().append(p, q);
        p = q;
        if (p == end) break;
        if (*p == '"') throw_quote_in_unquoted();
        end_field();
        if (*p != delimiter) end_record(*p);
        ++p;
        break;
      }
      case State::quoted: {
        const void* quote = std::memchr(p, '"', static_cast<std::size_t>(end - p));
        const char* q = quote != nullptr ? static_cast<const char*>(quote) : end;
        field().append(p, q);
        p = q;
        if (p != end) {
          state = State::quote_in_quoted;
          ++p;
        }
        break;
      }
      case State::quote_in_quoted:
        if (c == '"') {
          field().push_back('"');  // a doubled quote
          state = State::quoted;
          ++p;
          break;
        }
        state = State::after_quoted;
        [[fallthrough]];
      case State::after_quoted:
        if (c == delimiter) {
          end_field();
        } else if (c == '\r' || c == '\n') {
          end_field();
          end_record(c);
        } else if (!is_blank(c)) {
          throw_text_after_quote();
        } else {
          blanks_after_quote.push_back(c);
        }
        ++p;
        break;
    }
  }
}

void CsvReader::Impl::finish() {
  finished = true;
  if (state == State::quoted) {
    throw InvalidInput(fmt::format(
        "{}:{}: unterminated quoted field: the record starting on this line opens a quote "
        "that is never closed",
        source_name, record_line));
  }
  if (state != State::field_start || record_open) {
    end_field();
    end_record(0);
  }
}

CsvReader::CsvReader(std::istream& in, std::string source_name, char delimiter) {
  // An std::ifstream that failed to open arrives here with failbit set; reading it would look
  // like an empty file.
  if (in.fail())
    throw IoError(fmt::format("{}: cannot read (stream in a failed state)", source_name));
  if (delimiter == '"' || delimiter == '\r' || delimiter == '\n' || delimiter == ' ') {
    throw InvalidInput(
        fmt::format("{}: a CSV delimiter cannot be a quote, a space or a line end", source_name));
  }
  impl_ = std::make_unique<Impl>(in, std::move(source_name), delimiter);
}

CsvReader::~CsvReader() = default;
CsvReader::CsvReader(CsvReader&&) noexcept = default;
CsvReader& CsvReader::operator=(CsvReader&&) noexcept = default;

bool CsvReader::next(CsvRecord& record) { return impl_->next(record); }

std::int64_t CsvReader::bytes_read() const { return impl_->bytes_read; }

const std::string& CsvReader::source_name() const { return impl_->source_name; }

char CsvReader::delimiter() const { return impl_->delimiter; }

bool CsvReader::byte_order_mark() const { return impl_->has_byte_order_mark; }

const std::string& CsvReader::sep_line() const { return impl_->sep_line; }

std::string_view CsvReader::line_end() const {
  if (impl_->first_line_end == '\r') return impl_->first_line_end_is_crlf ? "\r\n" : "\r";
  return "\n";
}

}  // namespace gpukit::io
