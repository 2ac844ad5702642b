#include "blas/cuda/tensor_map.hpp"

#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include <fmt/format.h>

#include "core/cuda/check.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::blas::cuda_detail {

namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_function() {
  static PFN_cuTensorMapEncodeTiled_v12000 function = nullptr;
  static std::once_flag looked_up;
  std::call_once(looked_up, [] {
    void* pointer = nullptr;
    cudaDriverEntryPointQueryResult found{};
    GPUKIT_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &pointer, 12000,
                                                       cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || pointer == nullptr) {
      throw CudaError("cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\")",
                      "not available from this CUDA driver", __FILE__, __LINE__);
    }
    function = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(pointer);
  });
  return function;
}

}  // namespace

CUtensorMap make_k_major_tensor_map(TensorMapElement element, const void* data, std::int64_t rows,
                                    std::int64_t k, std::int64_t ld, int box_rows, int box_k) {
  const std::int64_t element_bytes = element == TensorMapElement::bfloat16 ? 2 : 4;
  const std::int64_t row_bytes = ld * element_bytes;
  // TMA's limits: 16-byte aligned base and row pitch, pitch below 2^40, dimensions below 2^32.
  if (reinterpret_cast<std::uintptr_t>(data) % 16 != 0 || row_bytes % 16 != 0 ||
      row_bytes >= (std::int64_t{1} << 40) || rows >= (std::int64_t{1} << 32) ||
      k >= (std::int64_t{1} << 32)) {
    throw InvalidInput(fmt::format(
        "gemm: a TMA operand needs a 16-byte aligned start and row pitch (got {} bytes at offset "
        "{} mod 16) and dimensions below 2^32",
        row_bytes, reinterpret_cast<std::uintptr_t>(data) % 16));
  }
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(row_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_k), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult result =
      encode_function()(&map,
                        element == TensorMapElement::bfloat16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                              : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                        2, const_cast<void*>(data), dims, strides, box, element_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (result != CUDA_SUCCESS) {
    throw CudaError("cuTensorMapEncodeTiled",
                    fmt::format("CUresult {} for a {} x {} matrix, row pitch {} bytes, box {} x {}",
                                static_cast<int>(result), rows, k, row_bytes, box_rows, box_k),
                    __FILE__, __LINE__);
  }
  return map;
}

}  // namespace gpukit::blas::cuda_detail
