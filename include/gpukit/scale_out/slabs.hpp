#pragma once
// The distribution style for grids: slabs of axis 0, exchanged by all-to-all transposes.
//
// Why slabs of axis 0. A grid solver (the spectral Poisson solver; the non-periodic one next)
// transforms along every axis, and a transform along an axis needs the whole of that axis on one
// part. Cutting the grid into slabs of its first (.npy) axis gives each part whole rows of the
// trailing axes in one contiguous block of memory and of the file: the trailing transforms run
// locally, each rank reads and writes its rows of the .npy file with plain positioned reads and
// writes (no rank ever holds the whole grid), and one all-to-all transpose (each part sends every
// other part one block) gives each part every row of axis 0 for a slab of the next axis, where
// axis 0 is transformed; a second transpose brings the data back. Two all-to-alls of the data a
// solve is the least a distributed multi-dimensional FFT moves. Slabs allow at most n0 parts
// (1024 for a 1024^3 grid); pencils (two axes split) allow more but make two transposes each way
// instead of one, so they pay only past that limit, far beyond the GPUs gpukit runs on. It is
// also the layout FFTW's MPI interface imposes on the CPU, so both backends split a grid alike.
//
// The split. Part p of P holds rows slab_range(n0, P, p): FFTW's block distribution, blocks of
// ceil(n0 / P) rows, the last parts holding fewer, or none when P does not divide the axis
// closely. Parts are numbered across the ranks of a job in rank order and within a rank in the
// order of its devices (gpukit/distributed/device_exchange.hpp). The split never changes what
// is computed, only where: a solve's result is within the bound its case documents of the
// one-device result (poisson.hpp), and bit for bit the same run after run for the same parts.

#include <cstdint>

namespace gpukit::scale_out {

/// Rows [begin, begin + count) of an axis.
struct SlabRange {
  std::int64_t begin = 0;
  std::int64_t count = 0;
  std::int64_t end() const { return begin + count; }
  friend bool operator==(const SlabRange&, const SlabRange&) = default;
};

/// FFTW's block for `rows` split into `parts`: ceil(rows / parts) (parts >= 1).
std::int64_t slab_block(std::int64_t rows, int parts);
/// Part `part`'s rows of `rows` split into `parts` blocks of slab_block rows (the last ones
/// shorter or empty). The ranges are contiguous, in part order, and cover [0, rows) once.
SlabRange slab_range(std::int64_t rows, int parts, int part);

}  // namespace gpukit::scale_out
