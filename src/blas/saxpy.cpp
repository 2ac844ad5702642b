// axpy: argument checks, the alpha == 0 rule, and dispatch to the CPU backend (OpenBLAS) or the
// CUDA default variant (host data through the chunked pipeline, device data directly).

#include "gpukit/blas/saxpy.hpp"

#include <cstdint>
#include <functional>
#include <string>

#include "blas/cpu/saxpy_openblas.hpp"
#include "core/parallel_copy.hpp"
#include "gpukit/blas/saxpy_variants.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"

#if GPUKIT_HAVE_CUDA
#include "blas/cuda/saxpy_host_pipeline.hpp"
#endif

namespace gpukit::blas {

namespace {

// Whether [a, a + count) and [b, b + count) share an element (std::less: a total order on
// unrelated pointers).
template <class T>
bool overlap(const T* a, const T* b, std::int64_t count) {
  if (count == 0) return false;
  const std::less<const T*> before;
  return before(a, b + count) && before(b, a + count);
}

// The aliasing the contract allows: out is y, or x is y is out, or out overlaps neither input.
template <class T>
void check_aliasing(const char* what, const T* x, const T* y, const T* out, std::int64_t count) {
  if (out == y && (x == y || !overlap<T>(x, out, count))) return;
  if (out != y && !overlap<T>(out, x, count) && !overlap<T>(out, y, count)) return;
  throw InvalidInput(std::string(what) +
                     ": the output may be y, or overlap neither x nor y (it overlaps " +
                     (out != y && overlap<T>(out, y, count) ? "y" : "x") + ")");
}

}  // namespace

template <class T>
void axpy(const Context& context, T alpha, std::span<const T> x, std::span<const T> y,
          std::span<T> out) {
  if (x.size() != y.size() || y.size() != out.size()) {
    throw InvalidInput("axpy: x, y and the output must have the same length (x " +
                       std::to_string(x.size()) + ", y " + std::to_string(y.size()) + ", output " +
                       std::to_string(out.size()) + ")");
  }
  const auto count = static_cast<std::int64_t>(x.size());
  check_aliasing<T>("axpy", x.data(), y.data(), out.data(), count);
  if (count == 0) return;
  if (alpha == T(0)) {
    // BLAS's quick return: out = y, x not read (saxpy.hpp).
    if (out.data() != y.data()) {
      gpukit::detail::parallel_copy(out.data(), y.data(), out.size_bytes(),
                                    context.effective_cpu_threads());
    }
    return;
  }
  if (context.backend == Backend::cpu) {
    cpu_detail::axpy_openblas<T>(alpha, x.data(), y.data(), out.data(), count,
                                 context.effective_cpu_threads());
    return;
  }
#if GPUKIT_HAVE_CUDA
  detail::axpy_through_device<T>(context, alpha, x, y, out);
#else
  throw DeviceUnavailable("axpy on CUDA: this gpukit was built without CUDA");
#endif
}

template <class T>
void axpy_on_device(T alpha, const T* x, const T* y, T* out, std::int64_t count,
                    StreamHandle stream) {
  if (count < 0) throw InvalidInput("axpy_on_device: count must be >= 0");
  if (count > 0 && (x == nullptr || y == nullptr || out == nullptr))
    throw InvalidInput("axpy_on_device: null array with count > 0");
  check_aliasing<T>("axpy_on_device", x, y, out, count);
  if (count == 0) return;
  if (alpha == T(0)) {
    if (out != y) {
      cuda::copy_device_to_device_async(out, y, static_cast<std::size_t>(count) * sizeof(T),
                                        stream);
    }
    return;
  }
  default_saxpy_variant().launch<T>(alpha, x, y, out, count, stream);
}

template void axpy<float>(const Context&, float, std::span<const float>, std::span<const float>,
                          std::span<float>);
template void axpy<double>(const Context&, double, std::span<const double>, std::span<const double>,
                           std::span<double>);
template void axpy_on_device<float>(float, const float*, const float*, float*, std::int64_t,
                                    StreamHandle);
template void axpy_on_device<double>(double, const double*, const double*, double*, std::int64_t,
                                     StreamHandle);

}  // namespace gpukit::blas
