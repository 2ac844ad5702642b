#pragma once
// Internal: the arrays of the CUDA slab engine (and the layout its tests check), in plain C++.
//
// Part p holds rows R_p = slab_range(n0, P, p) of axis 0. After the transform along the trailing
// axes its slab is A_p, laid out (R_p.count, M, T) complex: 3D M = n1, T = n2/2 + 1; 2D M =
// n1/2 + 1, T = 1. The forward transpose sends to part q the block (R_p.count, C_q.count, T) of
// columns C_q = slab_range(M, P, q), packed contiguously; part q receives the blocks in part
// order, which lays them out as B_q = (n0, C_q.count, T): every row of axis 0 for its columns,
// ready for the transform along axis 0 (stride C_q.count * T). The inverse transpose sends B_q's
// rows R_p (contiguous) back to part p, which unpacks them into A_p.

#include <algorithm>
#include <cstdint>

#include "gpukit/pde/poisson.hpp"
#include "gpukit/scale_out/slabs.hpp"

namespace gpukit::scale_out::detail {

struct SlabLayout {
  int parts = 1;
  int rank = 3;
  std::int64_t n0 = 1, n1 = 1, n2 = 1;  // n2 = 1 in 2D
  std::int64_t m = 1, t = 1;            // the split axis and the trailing complex extent

  SlabLayout(const pde::PoissonGrid& grid, int part_count) : parts(part_count), rank(grid.rank()) {
    n0 = grid.shape[0];
    n1 = grid.shape[1];
    n2 = rank == 3 ? grid.shape[2] : 1;
    m = rank == 3 ? n1 : n1 / 2 + 1;
    t = rank == 3 ? n2 / 2 + 1 : 1;
  }
  /// Real elements of one row of axis 0.
  std::int64_t row_real() const { return n1 * n2; }
  /// Complex elements of one row of axis 0 after the trailing transform (M * T).
  std::int64_t row_complex() const { return m * t; }
  SlabRange rows(int p) const { return slab_range(n0, parts, p); }
  SlabRange columns(int q) const { return slab_range(m, parts, q); }
  /// Complex elements of A_p and of B_p.
  std::int64_t a_elements(int p) const { return rows(p).count * row_complex(); }
  std::int64_t b_elements(int p) const { return n0 * columns(p).count * t; }
  /// The work array holds A_p, then B_p; the send array the packed blocks (A_p's size).
  std::int64_t work_elements(int p) const { return std::max(a_elements(p), b_elements(p)); }
  std::int64_t send_elements(int p) const { return a_elements(p); }

  /// A rectangle copy: `height` rows of `width` values, `source_pitch` apart from
  /// `source_offset`, to rows `destination_pitch` apart from `destination_offset` (complex
  /// elements; a cudaMemcpy2DAsync).
  struct Copy2D {
    std::int64_t destination_offset, destination_pitch, source_offset, source_pitch, width, height;
  };
  /// Packing A_p into part p's send array: the block for part q (columns C_q of every local row)
  /// lands contiguously at rows_p * C_q.begin * T.
  Copy2D pack(int p, int q) const {
    const SlabRange r = rows(p), c = columns(q);
    return {r.count * c.begin * t, c.count * t, c.begin * t, row_complex(), c.count * t, r.count};
  }
  /// Unpacking part p's send array (the blocks received from every q) back into A_p.
  Copy2D unpack(int p, int q) const {
    const Copy2D k = pack(p, q);
    return {k.source_offset,     k.source_pitch, k.destination_offset,
            k.destination_pitch, k.width,        k.height};
  }

  /// One block of a transpose, in complex elements.
  struct Block {
    std::int64_t source_offset, destination_offset, count;
  };
  /// Forward: part `from`'s packed block for `to` (in from's send array) to `to`'s work array,
  /// laid out as B_to = (n0, C_to, T): rows R_from of it. Inverse: rows R_to of part `from`'s
  /// B (in from's work array) back to `to`'s send array, at the packed place of C_from.
  Block block(int from, int to, bool forward) const {
    if (forward) {
      const SlabRange r = rows(from), c = columns(to);
      return {r.count * c.begin * t, r.begin * c.count * t, r.count * c.count * t};
    }
    const SlabRange r = rows(to), c = columns(from);
    return {r.begin * c.count * t, r.count * c.begin * t, r.count * c.count * t};
  }
};

}  // namespace gpukit::scale_out::detail
