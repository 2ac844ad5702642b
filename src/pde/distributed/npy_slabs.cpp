// Collective .npy reading and writing by slabs of axis 0 (npy_slabs.hpp).

#include "pde/distributed/npy_slabs.hpp"

#include <memory>
#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"

namespace gpukit::pde::distributed {

io::NpyFileInfo read_npy_info_collectively(const ProcessGroup& group,
                                           const std::filesystem::path& path,
                                           const io::NpyAccepted& accepted) {
  io::NpyFileInfo info;
  group.agree([&] { info = io::read_npy_info(path, accepted); });
  return info;
}

io::NpyArray read_npy_rows_collectively(const ProcessGroup& group,
                                        const std::filesystem::path& path,
                                        const io::NpyAccepted& accepted, std::int64_t row_begin,
                                        std::int64_t row_count) {
  io::NpyArray rows;
  group.agree([&] { rows = io::read_npy_rows(path, accepted, row_begin, row_count); });
  return rows;
}

void write_npy_rows_collectively(const ProcessGroup& group, const std::filesystem::path& path,
                                 io::NpyDtype dtype, std::span<const std::int64_t> shape,
                                 std::int64_t row_begin, std::span<const std::byte> bytes) {
  std::unique_ptr<io::AtomicFile> file;
  std::string temporary;
  std::uint64_t header_bytes = 0, row_bytes = 0;
  group.agree([&] {
    if (path == "-") {
      throw InvalidInput(
          "poisson: a distributed solve writes its output to a file (each process writes its "
          "rows), not to standard output");
    }
    const std::string header = io::detail::npy_header_bytes(dtype, shape);
    header_bytes = header.size();
    std::uint64_t elements = 1;
    for (std::size_t a = 1; a < shape.size(); ++a) elements *= static_cast<std::uint64_t>(shape[a]);
    row_bytes = elements * io::dtype_size(dtype);
    if (group.rank() == 0) {
      file = std::make_unique<io::AtomicFile>(path);
      file->write(header);
      temporary = file->temporary_path().string();
    }
  });
  // Every process writes into the file rank 0 created.
  std::uint64_t length = temporary.size();
  group.broadcast(std::as_writable_bytes(std::span(&length, 1)), 0);
  temporary.resize(length);
  group.broadcast(std::as_writable_bytes(std::span(temporary.data(), temporary.size())), 0);
  group.agree([&] {
    if (!bytes.empty()) {
      io::write_file_region(
          temporary, header_bytes + static_cast<std::uint64_t>(row_begin) * row_bytes, bytes);
    }
  });
  // Renamed only once every part is on disk; a failed rename removes the temporary file (the
  // AtomicFile's destructor) and every process reports it.
  group.agree([&] {
    if (file) file->commit();
  });
}

}  // namespace gpukit::pde::distributed
