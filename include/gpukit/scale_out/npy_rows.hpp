#pragma once
// A .npy array read and written by rows of axis 0 across the ranks of a job, collectively, so
// that no rank ever holds the whole array (the distributed Poisson solver's input and output):
// io's plain row-range reads and writes (gpukit/io/npy.hpp), each rank its own rows, with the
// failure agreement of gpukit/distributed/communicator.hpp (every rank throws the same error)
// and the atomic-output rules of gpukit/io/atomic_file.hpp (nothing written on any failure
// anywhere). The files must be visible to every rank at the same path (one host, or a shared
// file system).

#include <cstdint>
#include <filesystem>
#include <span>

#include "gpukit/distributed/communicator.hpp"
#include "gpukit/io/npy.hpp"

namespace gpukit::scale_out {

/// Collective: the header of `path` as every rank reads it (io::read_npy_info; agreed).
io::NpyFileInfo read_npy_info_collectively(distributed::Communicator& comm,
                                           const std::filesystem::path& path,
                                           const io::NpyAccepted& accepted);

/// Collective: this rank's rows [row_begin, row_begin + row_count) of axis 0 (io::read_npy_rows;
/// agreed).
io::NpyArray read_npy_rows_collectively(distributed::Communicator& comm,
                                        const std::filesystem::path& path,
                                        const io::NpyAccepted& accepted, std::int64_t row_begin,
                                        std::int64_t row_count);

/// Collective: writes the C-order .npy array of `dtype` and `shape` whose rows of axis 0 are
/// spread over the ranks, this rank's rows [row_begin, ...) being `bytes` (whole rows; the ranks'
/// rows must tile axis 0). Rank 0 creates the output's io::AtomicFile and writes numpy's header
/// (io::begin_npy_rows); every rank writes its rows into the temporary file (io::write_npy_rows,
/// flushed to disk); only when every rank succeeded does rank 0 rename it over `path`. On any
/// failure anywhere every rank throws the same error, the temporary file is removed and an
/// existing output is left as it was. "-" (standard output) is refused: InvalidInput.
void write_npy_rows_collectively(distributed::Communicator& comm, const std::filesystem::path& path,
                                 io::NpyDtype dtype, std::span<const std::int64_t> shape,
                                 std::int64_t row_begin, std::span<const std::byte> bytes);

}  // namespace gpukit::scale_out
