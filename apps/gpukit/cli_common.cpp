#include "cli_common.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"

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

io::OptionBook read_book_with_progress(const std::string& command, const std::string& input,
                                       const io::BookDefaults& defaults, io::BookColumns columns) {
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
  io::OptionBook book = io::read_option_book(*in, name, defaults, progress, columns);
  if (show_progress && book.size() >= (std::size_t{1} << 20)) fmt::print(stderr, "\n");
  return book;
}

}  // namespace gpukit::cli
