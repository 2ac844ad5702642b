// Collective .npy reading and writing by rows (npy_rows.hpp).

#include "gpukit/scale_out/npy_rows.hpp"

#include <memory>
#include <string>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/io/atomic_file.hpp"

namespace gpukit::scale_out {

io::NpyFileInfo read_npy_info_collectively(distributed::Communicator& comm,
                                           const std::filesystem::path& path,
                                           const io::NpyAccepted& accepted) {
  return distributed::agree(comm, [&] { return io::read_npy_info(path, accepted); });
}

io::NpyArray read_npy_rows_collectively(distributed::Communicator& comm,
                                        const std::filesystem::path& path,
                                        const io::NpyAccepted& accepted, std::int64_t row_begin,
                                        std::int64_t row_count) {
  return distributed::agree(
      comm, [&] { return io::read_npy_rows(path, accepted, row_begin, row_count); });
}

void write_npy_rows_collectively(distributed::Communicator& comm, const std::filesystem::path& path,
                                 io::NpyDtype dtype, std::span<const std::int64_t> shape,
                                 std::int64_t row_begin, std::span<const std::byte> bytes) {
  std::unique_ptr<io::AtomicFile> file;
  std::string temporary;
  distributed::agree(comm, [&] {
    if (path == "-") {
      throw InvalidInput(
          "a distributed solve writes its output to a file (each rank writes its rows), not to "
          "standard output");
    }
    if (comm.is_root()) {
      file = std::make_unique<io::AtomicFile>(path);
      io::begin_npy_rows(*file, dtype, shape);
      temporary = file->temporary_path().string();
    }
  });
  // Every rank writes into the file rank 0 created.
  std::vector<std::byte> name(temporary.size());
  std::copy_n(reinterpret_cast<const std::byte*>(temporary.data()), temporary.size(), name.begin());
  comm.broadcast(name, 0);
  temporary.assign(reinterpret_cast<const char*>(name.data()), name.size());
  distributed::agree(comm, [&] { io::write_npy_rows(temporary, dtype, shape, row_begin, bytes); });
  // Renamed only once every rank's rows are on disk; a failed rename removes the temporary file
  // (the AtomicFile's destructor) and every rank reports it.
  distributed::agree(comm, [&] {
    if (file) file->commit();
  });
}

}  // namespace gpukit::scale_out
