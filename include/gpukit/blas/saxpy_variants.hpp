#pragma once
// The registry of CUDA SAXPY / DAXPY kernels: the seed's kernel as written, the steps to the
// memory limit (a grid sized from the SM count, 16-byte vector loads and stores, more bytes in
// flight), and cuBLAS's axpy as the vendor row. Tests (tests/blas/saxpy_gpu_test.cpp) and
// `gpukit bench saxpy` iterate over it, so a new entry is tested and measured with no new test or
// bench code.

#include <cstdint>
#include <span>
#include <string_view>

#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit::blas {

/// A CUDA launcher: enqueues out = alpha * x + y for `count` elements of device memory on
/// `stream`; nothing waits. Any alignment of T. out may be y (in place) or an array that overlaps
/// neither input. Launchers compute IEEE alpha * x + y for every alpha: the alpha == 0 rule of the
/// API (saxpy.hpp) is the dispatch's, applied before a launcher is called.
template <class T>
using SaxpyLaunch = void(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                         StreamHandle stream);
using SaxpyLaunchers = PerType<SaxpyLaunch, RealTypes>;

struct SaxpyVariant {
  /// Traffic: x and y read once, out written once; two flops (a multiply and an add) an element.
  /// Every variant computes each element once, so its bits never depend on the launch shape or
  /// the run; `deterministic` is still false for all, because the CPU backend (OpenBLAS) may
  /// round separately where these fuse (saxpy_reference.hpp).
  VariantInfo info;
  /// What the tests require of every element (saxpy_reference.hpp).
  AxpyRounding rounding = AxpyRounding::fused;
  SaxpyLaunchers launchers;

  template <class T>
  void launch(T alpha, const T* x, const T* y, T* out, std::int64_t count,
              StreamHandle stream) const {
    launchers.get<T>()(alpha, x, y, out, count, stream);
  }
};

/// Every variant in ladder order (the seed's kernel first, cuBLAS last); empty without CUDA.
std::span<const SaxpyVariant> saxpy_variants();

/// The variant axpy() and axpy_on_device() use: the top of the ladder.
const SaxpyVariant& default_saxpy_variant();

/// Looks a variant up by name; InvalidInput listing the names when there is none,
/// DeviceUnavailable in a build without CUDA.
const SaxpyVariant& find_saxpy_variant(std::string_view name);

}  // namespace gpukit::blas
