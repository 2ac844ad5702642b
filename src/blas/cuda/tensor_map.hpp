#pragma once
// Internal: TMA tensor maps (CUtensorMap) for the K-major GEMM operands, encoded through the
// driver's cuTensorMapEncodeTiled, which is reached through the runtime's entry-point query so
// that gpukit does not link libcuda (a CUDA build must start on a machine without a driver).

#include <cuda.h>

#include <cstdint>

namespace gpukit::blas::cuda_detail {

enum class TensorMapElement { bfloat16, float32 };

/// A 2-D map of a K-major matrix of `rows` x `k` elements (row r at data + r * ld elements; ld a
/// multiple of 16 bytes, data 16-byte aligned), read in boxes of box_rows x box_k elements (box_k
/// * element size = 128 bytes) into shared memory in the 128-byte swizzle, out-of-bounds
/// elements read as zero. InvalidInput when the shape breaks TMA's limits (it names them).
CUtensorMap make_k_major_tensor_map(TensorMapElement element, const void* data, std::int64_t rows,
                                    std::int64_t k, std::int64_t ld, int box_rows, int box_k);

}  // namespace gpukit::blas::cuda_detail
