#include "cli_common.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/csv.hpp"

namespace gpukit::cli {

void add_device_options(CLI::App& command, DeviceOptions& options) {
  command.add_option("--device", options.device, "auto | cpu | cuda | cuda:N")
      ->capture_default_str();
  command.add_option("--threads", options.threads, "CPU threads (0 = all cores)")
      ->capture_default_str();
}

Context resolve_context(const DeviceOptions& options) {
  const DeviceSelection selection = select_device(options.device, options.threads);
  if (!selection.notice.empty()) std::cerr << selection.notice << '\n';
  return selection.context;
}

void write_output_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write) {
  if (path == "-") {
    std::ostringstream buffer;
    write(buffer);
    std::cout << buffer.str();
    std::cout.flush();
    if (!std::cout) throw IoError("<stdout>: write failed");
    return;
  }
  const std::filesystem::path target(path);
  const std::filesystem::path temporary =
      target.parent_path() /
      ("." + target.filename().string() + ".gpukit-tmp-" + std::to_string(::getpid()));
  try {
    std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
    if (!file) throw IoError(fmt::format("{}: cannot open for writing", path));
    write(file);
    file.flush();
    if (!file) throw IoError(fmt::format("{}: write failed (disk full?)", path));
    file.close();
    std::error_code ec;
    std::filesystem::rename(temporary, target, ec);
    if (ec) throw IoError(fmt::format("{}: cannot move into place: {}", path, ec.message()));
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
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

io::OptionBook read_book_with_progress(const std::string& command, const std::string& input,
                                       const io::BookDefaults& defaults, io::BookColumns columns,
                                       char delimiter) {
  const bool show_progress = ::isatty(2) != 0;
  std::int64_t total_bytes = -1;
  std::ifstream file;
  std::istream* in = &std::cin;
  std::string name = "<stdin>";
  if (input != "-") {
    file.open(input, std::ios::binary);
    if (!file) throw IoError(fmt::format("{}: cannot open for reading", input));
    std::error_code ec;
    total_bytes = static_cast<std::int64_t>(std::filesystem::file_size(input, ec));
    in = &file;
    name = input;
  }
  io::ProgressCallback progress;
  if (show_progress) {
    progress = [total_bytes, &command](std::int64_t bytes, std::int64_t rows) {
      if (total_bytes > 0) {
        fmt::print(stderr, "\rgpukit {}: reading {:.0f}% ({} options)", command,
                   100.0 * static_cast<double>(bytes) / static_cast<double>(total_bytes), rows);
      } else {
        fmt::print(stderr, "\rgpukit {}: reading ({} options)", command, rows);
      }
    };
  }
  io::OptionBook book = io::read_option_book(*in, name, defaults, progress, columns, delimiter);
  if (show_progress && book.size() >= (std::size_t{1} << 20)) fmt::print(stderr, "\n");
  return book;
}

void add_delimiter_option(CLI::App& command, char& delimiter) {
  command
      .add_option_function<std::string>(
          "--delimiter",
          [&delimiter](const std::string& name) { delimiter = *io::parse_csv_delimiter(name); },
          "Field delimiter of the input CSV: ',' (default), ';', '|' or tab (also '\\t'); the "
          "output uses the same")
      ->check(CLI::Validator(
          [](const std::string& name) {
            return io::parse_csv_delimiter(name)
                       ? std::string()
                       : "must be ',', ';', '|' or tab, got '" + name + "'";
          },
          "DELIMITER"));
}

void note_replaced_columns(const std::string& command, const io::OptionBook& book,
                           std::span<const io::OutputColumn> columns) {
  const std::vector<std::string> replaced = io::input_columns_replaced(book, columns);
  if (replaced.empty()) return;
  fmt::print(stderr, "gpukit: {}: replacing the input's {} column{}\n", command,
             fmt::join(replaced, ", "), replaced.size() > 1 ? "s" : "");
}

}  // namespace gpukit::cli
