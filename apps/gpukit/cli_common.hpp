#pragma once
// Options and helpers shared by the subcommands.

#include <CLI/CLI.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "gpukit/core/context.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"
#include "gpukit/io/option_book.hpp"

namespace gpukit::cli {

/// A command-line usage error found after parsing (a missing or conflicting option, a bad value
/// only a subcommand can judge). main() prints it as CLI11's own errors and exits 2.
class UsageError : public CLI::ParseError {
 public:
  explicit UsageError(const std::string& message) : CLI::ParseError("UsageError", message, 2) {}
};

/// Makes every CLI11 error read "gpukit: usage error: ... (see 'gpukit <command> --help')".
/// Call before the subcommands are added: they copy the formatter when created.
void install_usage_error_format(CLI::App& app);

/// Adds --quiet/-q to the top-level app (with fallthrough it is accepted after a subcommand too).
void add_quiet_flag(CLI::App& app);
/// True when --quiet was given: notices (the device line, progress lines) are not printed.
/// Warnings, --check results and errors still are.
bool quiet();

/// A check for integer options: accepts 1000000 and exact integers with a fraction or an exponent
/// (1e6, 2.5e3, 1.0), rewritten in plain decimal for CLI11's conversion; refuses anything else
/// (1.5, 0x10, 1e100, -1 for a count) and values outside [min, max] with a message naming the
/// range. Leading zeros are decimal (CLI11 alone would read 010 as octal 8).
CLI::Validator integer_in(std::int64_t min, std::uint64_t max);

/// The same check for a value any std::uint64_t may hold (seeds).
CLI::Validator any_uint64();

/// A check that runs a library name parser (such as primitives::parse_reduce_op) on the value,
/// so that a bad enumerated value is a usage error (exit 2) found before any input is read.
CLI::Validator accepted_by(std::function<void(std::string_view)> parse);

/// A check that the value is one of a library's words (finance/choices.hpp: normal_cdf_names(),
/// ...), listed in the help and in CLI11's usage error.
CLI::Validator one_of(std::span<const std::string_view> words);

/// A scalar option of element type T (gemm's --alpha and --beta, saxpy's --alpha) read under
/// blas::parse_scalar's rule (gpukit/blas/scalar.hpp): a bad one is a usage error (exit 2), found
/// before any input is read for T = double and once the arrays' dtype is known for float.
template <class T>
T scalar_option(std::string_view option, std::string_view text);

/// A usage error when more than one of `inputs` (what the command calls each, its path) is stdin
/// ('-'), which can be read once: "X and Y cannot both be stdin ('-')".
void refuse_stdin_twice(
    std::initializer_list<std::pair<std::string_view, std::string_view>> inputs);

/// Test hook: when GPUKIT_TEST_FAULT is `fault` ("gemm-perturb", ...), changes the middle element
/// of `values` (by 1e-2 (1 + |x|) for floats, 1 for integers) after a command computed them, so
/// that the CLI tests can show that its --check catches a wrong result on every backend. Not for
/// users.
template <class T>
void inject_test_fault(std::string_view fault, std::span<T> values) {
  const char* set = std::getenv("GPUKIT_TEST_FAULT");
  if (set == nullptr || fault != set || values.empty()) return;
  T& x = values[values.size() / 2];
  if constexpr (std::is_floating_point_v<T>) {
    x += T(1e-2) * (T(1) + std::fabs(x));
  } else {
    x += T(1);
  }
}

/// "1 option", "2 options": a count and its noun (plural by adding "s"), for messages.
std::string count_text(std::int64_t count, std::string_view noun);

/// The most --threads accepts: 1024, or the hardware threads where there are more. OpenMP
/// crashes far above that (libgomp aborts from about 32768 threads).
int max_cpu_threads();

struct DeviceOptions {
  std::string device = "auto";
  int threads = 0;
};

/// Whether a command takes a list of devices (--device cuda:all, cuda:0,2,3): the commands that
/// spread their work over devices (bs, iv: rows; mc, reduce: fixed blocks; poisson: slabs;
/// docs/scale-out.md).
enum class DeviceLists { refused, accepted };

/// Adds --device and --threads to a subcommand (both checked while parsing: exit 2; a list where
/// the command refuses one is a usage error that says which commands take lists). `list_result`
/// tells --help what a list gives where lists are accepted.
void add_device_options(CLI::App& command, DeviceOptions& options,
                        DeviceLists lists = DeviceLists::refused,
                        std::string_view list_result = "the same bits as one");

/// For the one-device modes of a list-taking command (`mc --demo`): a usage error for a device
/// list, or for a job of several MPI ranks.
void refuse_device_list_and_ranks(const std::string& mode, const DeviceOptions& options);

/// Resolves the device and prints `auto`'s one-line notice on stderr (not with --quiet).
Context resolve_context(const DeviceOptions& options);

/// Writes a file with io::write_file_atomically (gpukit/io/atomic_file.hpp): `write` fills a
/// temporary file beside `path`, renamed into place only when everything succeeded; an existing
/// output keeps its mode, a symlink is written through, a read-only file is refused. "-" is stdout
/// (written only after `write` has produced everything in memory).
void write_output_atomically(const std::string& path,
                             const std::function<void(std::ostream&)>& write);

/// Run first in main(): a closed stdin, stdout or stderr gets a placeholder descriptor on which
/// every read or write fails, so no file opened later takes its number.
void guard_standard_streams();

/// Adds --input/-i and --output/-o for an option book (bs, mc); --input needs --output.
struct BookFileOptions {
  CLI::Option* input;
  CLI::Option* output;
};
BookFileOptions add_book_file_options(CLI::App& command, std::string& input, std::string& output);

/// Reads an option book from `input` ("-" is stdin) for subcommand `command` ("bs", "mc"), to be
/// priced in `precision`, with a progress line on stderr while a person watches (stderr is a
/// terminal, no --quiet), ended by a newline.
io::OptionBook read_book_with_progress(const std::string& command, const std::string& input,
                                       const io::BookDefaults& defaults,
                                       io::BookColumns columns = io::BookColumns::european,
                                       char delimiter = ',',
                                       finance::Precision precision = finance::Precision::float64);

/// Adds --delimiter (',' ';' '|' or tab) to a subcommand that reads a CSV book.
void add_delimiter_option(CLI::App& command, char& delimiter);

/// Refuses (InvalidInput, before anything is written) the first priced value that is no price
/// (io::find_non_finite_output), naming its row and column and the arithmetic of `precision`.
void refuse_non_finite_results(const io::OptionBook& book,
                               std::span<const io::OutputColumn> columns,
                               finance::Precision precision);

/// Says once on stderr which input columns the output columns replace ("gpukit: bs: replacing the
/// input's price, delta columns"), when pricing a book that was priced before.
void note_replaced_columns(const std::string& command, const io::OptionBook& book,
                           std::span<const io::OutputColumn> columns);

/// The .npy dtypes reduce, scan and compact take (read_npy(path, {kPrimitiveDtypes, "reduce"})
/// refuses any other from the header, naming only these).
inline constexpr std::array<io::NpyDtype, 5> kPrimitiveDtypes = {
    io::NpyDtype::int32, io::NpyDtype::int64, io::NpyDtype::uint32, io::NpyDtype::float32,
    io::NpyDtype::float64};

/// Calls f(T{}) with T the element type of an array read from `file`, for the five types the
/// primitives take; InvalidInput naming the file and `command` for uint64.
template <class F>
decltype(auto) with_primitive_element_type(io::NpyDtype dtype, const std::string& file,
                                           const std::string& command, F&& f) {
  switch (dtype) {
    case io::NpyDtype::int32:
      return f(std::int32_t{});
    case io::NpyDtype::int64:
      return f(std::int64_t{});
    case io::NpyDtype::uint32:
      return f(std::uint32_t{});
    case io::NpyDtype::float32:
      return f(float{});
    case io::NpyDtype::float64:
      return f(double{});
    case io::NpyDtype::uint64:
      break;
  }
  throw InvalidInput(file + ": " + command +
                     " takes int32, int64, uint32, float32 or float64, not uint64");
}

/// The registration functions of the subcommands (one file each).
void register_info(CLI::App& app);
void register_demo(CLI::App& app);
void register_bs(CLI::App& app);
void register_iv(CLI::App& app);
void register_mc(CLI::App& app);
void register_bench(CLI::App& app);
void register_reduce(CLI::App& app);
void register_scan(CLI::App& app);
void register_compact(CLI::App& app);
void register_poisson(CLI::App& app);

/// The whole command line, for benchmark records.
const std::string& command_line();
void set_command_line(int argc, char** argv);

}  // namespace gpukit::cli

namespace gpukit::bench {
struct BlackScholesSeedDemo;
}

namespace gpukit::cli {
/// Prints the Black-Scholes demo in the words of the 2008 NVIDIA case study (slides 12 and 15) to
/// `out` (stderr when it reports on a check of data written elsewhere) and returns whether its
/// check passed (float results against the long double reference, each within its derived bound).
bool print_black_scholes_demo(const bench::BlackScholesSeedDemo& demo, std::FILE* out = stdout);
}  // namespace gpukit::cli
