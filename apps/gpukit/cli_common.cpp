#include "cli_common.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpukit/blas/scalar.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/devices.hpp"
#include "gpukit/io/atomic_file.hpp"
#include "gpukit/io/csv.hpp"

namespace gpukit::cli {

void install_usage_error_format(CLI::App& app) {
  app.failure_message([](const CLI::App* top, const CLI::Error& e) {
    // The deepest subcommand parsed so far names the help screen that explains the option.
    std::string command = "gpukit";
    for (const CLI::App* level = top; !level->get_subcommands().empty();) {
      level = level->get_subcommands().front();
      command += " " + level->get_name();
    }
    return fmt::format("gpukit: usage error: {} (see '{} --help')\n", e.what(), command);
  });
}

namespace {
bool quiet_flag = false;

// An integer written in decimal, with no leading zeros ("0" for zero).
struct Decimal {
  bool negative = false;
  std::string digits;
};

// Signed comparison of two Decimals: -1, 0 or 1.
int compare(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  int magnitude = a.digits.size() != b.digits.size() ? (a.digits.size() < b.digits.size() ? -1 : 1)
                                                     : a.digits.compare(b.digits);
  magnitude = magnitude < 0 ? -1 : (magnitude > 0 ? 1 : 0);
  return a.negative ? -magnitude : magnitude;
}

Decimal decimal_of(std::int64_t value) {
  if (value >= 0) return {false, std::to_string(value)};
  // -(INT64_MIN) does not fit an int64: negate in unsigned arithmetic.
  return {true, std::to_string(std::uint64_t{0} - static_cast<std::uint64_t>(value))};
}

// The exact integer `text` denotes: [+-]digits[.digits][(e|E)[+-]digits]; nullopt when it is
// not of that form or not a whole number. Exponents so large that the value exceeds every
// range keep a 41-digit magnitude, enough for any range check to refuse it.
std::optional<Decimal> exact_integer(std::string_view text) {
  std::size_t i = 0;
  Decimal d;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) d.negative = text[i++] == '-';
  std::string mantissa;
  long exponent = 0;
  bool point = false, any_digit = false;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c >= '0' && c <= '9') {
      mantissa += c, any_digit = true;
      if (point) --exponent;
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool negative_exponent = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative_exponent = text[i++] == '-';
    long written = 0;
    bool exponent_digit = false;
    for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) {
      written = std::min(written * 10 + (text[i] - '0'), 100000L);
      exponent_digit = true;
    }
    if (!exponent_digit) return std::nullopt;
    exponent += negative_exponent ? -written : written;
  }
  if (i != text.size()) return std::nullopt;
  mantissa.erase(0, std::min(mantissa.find_first_not_of('0'), mantissa.size()));
  if (mantissa.empty()) return Decimal{false, "0"};
  if (exponent < 0) {
    const auto drop = static_cast<std::size_t>(-exponent);
    if (drop >= mantissa.size() ||
        mantissa.find_first_not_of('0', mantissa.size() - drop) != std::string::npos)
      return std::nullopt;  // a fraction remains: 1.5, 1e-3
    mantissa.resize(mantissa.size() - drop);
  } else {
    mantissa.append(static_cast<std::size_t>(std::min(exponent, 41L)), '0');
  }
  d.digits = mantissa;
  return d;
}
}  // namespace

void add_quiet_flag(CLI::App& app) {
  app.add_flag("--quiet,-q", quiet_flag,
               "No notices on stderr (the device line, progress); warnings and errors remain");
}

bool quiet() { return quiet_flag; }

CLI::Validator integer_in(std::int64_t min, std::uint64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        const Decimal low = decimal_of(min), high{false, std::to_string(max)};
        const std::string range =
            max == static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                ? fmt::format("at least {}", min)
                : fmt::format("from {} to {}", min, max);
        const std::optional<Decimal> d = exact_integer(value);
        if (!d) {
          return fmt::format("must be a whole number (such as 1000000 or 1e6) {}, got '{}'", range,
                             value);
        }
        if (compare(*d, low) < 0 || compare(*d, high) > 0)
          return fmt::format("must be {}, got {}", range, value);
        value = (d->negative && d->digits != "0" ? "-" : "") + d->digits;
        return {};
      },
      "", "integer");
}

CLI::Validator any_uint64() { return integer_in(0, std::numeric_limits<std::uint64_t>::max()); }

CLI::Validator accepted_by(std::function<void(std::string_view)> parse) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
        } catch (const Error& e) {
          return e.what();
        }
        return {};
      },
      "", "accepted_by");
}

CLI::Validator one_of(std::span<const std::string_view> words) {
  return CLI::IsMember(std::vector<std::string>(words.begin(), words.end()));
}

template <class T>
T scalar_option(std::string_view option, std::string_view text) {
  try {
    return blas::parse_scalar<T>(option, text);
  } catch (const InvalidInput& e) {
    throw UsageError(e.what());
  }
}
template float scalar_option<float>(std::string_view, std::string_view);
template double scalar_option<double>(std::string_view, std::string_view);

void refuse_stdin_twice(
    std::initializer_list<std::pair<std::string_view, std::string_view>> inputs) {
  std::vector<std::string_view> from_stdin;
  for (const auto& [name, path] : inputs)
    if (path == "-") from_stdin.push_back(name);
  if (from_stdin.size() < 2) return;
  const std::string_view last = from_stdin.back();
  from_stdin.pop_back();
  throw UsageError(fmt::format("{} and {} cannot {} be stdin ('-'): it can be read once",
                               fmt::join(from_stdin, ", "), last,
                               from_stdin.size() == 1 ? "both" : "all"));
}

std::string count_text(std::int64_t count, std::string_view noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

int max_cpu_threads() {
  return std::max(1024, static_cast<int>(std::thread::hardware_concurrency()));
}

void add_device_options(CLI::App& command, DeviceOptions& options, DeviceLists lists,
                        std::string_view list_result) {
  const bool accepted = lists == DeviceLists::accepted;
  const std::string name = command.get_name();
  command
      .add_option("--device", options.device,
                  accepted
                      ? fmt::format("auto (a GPU when there is one, else the CPU) | cpu | cuda | "
                                    "cuda:N | cuda:all | cuda:N,M,... (the work split over "
                                    "those GPUs, {})",
                                    list_result)
                      : "auto (a GPU when there is one, else the CPU) | cpu | cuda | cuda:N")
      ->check(CLI::Validator(
          [accepted, name](std::string& spec) -> std::string {
            distributed::DeviceSpec parsed;
            try {
              parsed = distributed::parse_device_spec(spec);
            } catch (const Error& e) {
              return e.what();
            }
            if (parsed.is_list() && !accepted) {
              return fmt::format(
                  "'{}' lists several devices, but gpukit {} runs on one; device lists are "
                  "for mc, bs, iv, reduce and poisson",
                  spec, name);
            }
            return {};
          },
          "", "device"))
      ->capture_default_str();
  command
      .add_option(
          "--threads", options.threads,
          fmt::format("CPU threads, 1 to {} (0, the default: all cores)", max_cpu_threads()))
      ->transform(integer_in(0, static_cast<std::uint64_t>(max_cpu_threads())));
}

void refuse_device_list_and_ranks(const std::string& mode, const DeviceOptions& options) {
  if (distributed::parse_device_spec(options.device).is_list()) {
    throw UsageError(
        fmt::format("{} runs on one device, but --device {} lists several", mode, options.device));
  }
  if (distributed::Communicator::world().distributed()) {
    throw UsageError(fmt::format("{} runs in one process, not across {} MPI ranks", mode,
                                 distributed::Communicator::world().size()));
  }
}

Context resolve_context(const DeviceOptions& options) {
  const DeviceSelection selection = select_device(options.device, options.threads);
  if (!selection.notice.empty() && !quiet()) std::cerr << selection.notice << '\n';
  return selection.context;
}

void write_output_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write) {
  io::write_file_atomically(path, write);
}

void guard_standard_streams() {
  // A closed descriptor 0, 1 or 2 would be handed out by the next open(): an input file opened as
  // descriptor 1 would then receive what is printed. A placeholder opened the wrong way round
  // keeps the number taken and makes every use fail as a closed one does (EBADF), so a result
  // printed into a closed stdout is still an error.
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      const int placeholder = ::open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
      if (placeholder >= 0 && placeholder != fd) ::close(placeholder);
    }
  }
}

namespace {
std::string& command_line_storage() {
  static std::string line;
  return line;
}
}  // namespace

const std::string& command_line() { return command_line_storage(); }

void set_command_line(int argc, char** argv) {
  std::string& line = command_line_storage();
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += argv[i];
  }
}

BookFileOptions add_book_file_options(CLI::App& command, std::string& input, std::string& output) {
  CLI::Option* in = command.add_option("--input,-i", input, "Option book CSV ('-' for stdin)");
  CLI::Option* out = command.add_option("--output,-o", output,
                                        "Priced book CSV ('-' for stdout); needed with --input");
  in->needs(out);
  return {in, out};
}

io::OptionBook read_book_with_progress(const std::string& command, const std::string& input,
                                       const io::BookDefaults& defaults, io::BookColumns columns,
                                       char delimiter, finance::Precision precision) {
  const bool show_progress = ::isatty(2) != 0 && !quiet();
  std::int64_t total_bytes = -1;
  std::ifstream file;
  std::istream* in = &std::cin;
  std::string name = "<stdin>";
  if (input != "-") {
    std::error_code ec;
    if (std::filesystem::is_directory(input, ec))
      throw IoError(fmt::format("{}: cannot read: it is a directory", input));
    errno = 0;
    file.open(input, std::ios::binary);
    if (!file) {
      throw IoError(fmt::format("{}: cannot open for reading: {}", input,
                                errno != 0 ? std::strerror(errno) : "unknown reason"));
    }
    total_bytes = static_cast<std::int64_t>(std::filesystem::file_size(input, ec));
    in = &file;
    name = input;
  }
  io::ProgressCallback progress;
  bool progress_shown = false;
  if (show_progress) {
    progress = [total_bytes, &command, &progress_shown](std::int64_t bytes, std::int64_t rows) {
      progress_shown = true;
      if (total_bytes > 0) {
        fmt::print(stderr, "\rgpukit: {}: reading {:.0f}% ({})", command,
                   100.0 * static_cast<double>(bytes) / static_cast<double>(total_bytes),
                   count_text(rows, "option"));
      } else {
        fmt::print(stderr, "\rgpukit: {}: reading ({})", command, count_text(rows, "option"));
      }
    };
  }
  try {
    io::OptionBook book =
        io::read_option_book(*in, name, defaults, progress, columns, delimiter, precision);
    if (progress_shown) fmt::print(stderr, "\n");
    return book;
  } catch (...) {
    // An error message must start a line of its own.
    if (progress_shown) fmt::print(stderr, "\n");
    throw;
  }
}

void add_delimiter_option(CLI::App& command, char& delimiter) {
  command
      .add_option_function<std::string>(
          "--delimiter",
          [&delimiter](const std::string& name) { delimiter = *io::parse_csv_delimiter(name); },
          "Field delimiter of the input CSV: ',' (default), ';', '|' or tab (also '\\t'; a first "
          "line sep=X names the file's own); the output uses the same")
      ->check(CLI::Validator(
          [](const std::string& name) {
            return io::parse_csv_delimiter(name)
                       ? std::string()
                       : "must be ',', ';', '|' or tab, got '" + name + "'";
          },
          "DELIMITER"));
}

void refuse_non_finite_results(const io::OptionBook& book,
                               std::span<const io::OutputColumn> columns,
                               finance::Precision precision) {
  const std::optional<io::OutputProblem> problem = io::find_non_finite_output(columns);
  if (!problem) return;
  throw InvalidInput(
      fmt::format("{}: {}{}", book.row_location(static_cast<std::size_t>(problem->row)),
                  problem->what(precision),
                  precision == finance::Precision::float32 ? " (--precision double may)" : ""));
}

void note_replaced_columns(const std::string& command, const io::OptionBook& book,
                           std::span<const io::OutputColumn> columns) {
  const std::vector<std::string> replaced = io::input_columns_replaced(book, columns);
  if (replaced.empty() || quiet()) return;
  fmt::print(stderr, "gpukit: {}: replacing the input's {} column{}\n", command,
             fmt::join(replaced, ", "), replaced.size() > 1 ? "s" : "");
}

}  // namespace gpukit::cli
