#pragma once
// Internal to the distributed Poisson solver: a .npy grid read and written by slabs of axis 0,
// collectively, so that no process ever holds the whole grid, with the atomic-output rules of
// gpukit/io/atomic_file.hpp (nothing written on any failure anywhere) and the failure rule of
// ProcessGroup::settle (every process throws the same error).

#include <cstdint>
#include <filesystem>
#include <span>

#include "gpukit/io/npy.hpp"
#include "pde/distributed/process_group.hpp"

namespace gpukit::pde::distributed {

/// Collective: the header of `path` as every process reads it (io::read_npy_info; settled).
io::NpyFileInfo read_npy_info_collectively(const ProcessGroup& group,
                                           const std::filesystem::path& path,
                                           const io::NpyAccepted& accepted);

/// Collective: this process's rows [row_begin, row_begin + row_count) of axis 0
/// (io::read_npy_rows; settled).
io::NpyArray read_npy_rows_collectively(const ProcessGroup& group,
                                        const std::filesystem::path& path,
                                        const io::NpyAccepted& accepted, std::int64_t row_begin,
                                        std::int64_t row_count);

/// Collective: writes the C-order .npy array of `dtype` and `shape` whose rows of axis 0 are
/// spread over the processes in rank order, this process's rows [row_begin, ...) being `bytes`
/// (a whole number of rows; the processes' rows must tile axis 0). Rank 0 creates the output's
/// io::AtomicFile and writes numpy's header; every process writes its rows at their offset in the
/// temporary file (io::write_file_region, flushed to disk); only when every process succeeded
/// does rank 0 rename it over `path`. On any failure anywhere every process throws the same
/// error, the temporary file is removed and an existing output is left as it was. "-" (standard
/// output) is refused: InvalidInput. The output's directory must be visible to every process at
/// the same path (one host, or a shared file system).
void write_npy_rows_collectively(const ProcessGroup& group, const std::filesystem::path& path,
                                 io::NpyDtype dtype, std::span<const std::int64_t> shape,
                                 std::int64_t row_begin, std::span<const std::byte> bytes);

}  // namespace gpukit::pde::distributed
