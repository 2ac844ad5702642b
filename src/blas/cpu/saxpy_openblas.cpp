// The CPU backend: OpenBLAS, not a loop of ours. BLAS updates y in place, so an output that is
// not y first receives a copy of y; the array then goes to OpenBLAS in fixed pieces (below).

#include "blas/cpu/saxpy_openblas.hpp"

#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "core/parallel_copy.hpp"
#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::blas::cpu_detail {

namespace {

// Fixed pieces, one OpenBLAS call each on one of our OpenMP threads, OpenBLAS itself on one
// thread. Left to its own threads, OpenBLAS cuts the array by the thread count, and each thread's
// piece ends in a scalar tail that may round a*x first where the vector body fuses (measured:
// Debian's OpenBLAS 0.3.21 gave 5 elements of 100000 other bits with 2 threads than with 1).
// With pieces of a fixed size the bits depend on the array alone, never on the thread count.
// 2^16 elements: a multiple of every vector width, large enough that a call costs nothing.
constexpr std::int64_t kPieceElements = std::int64_t{1} << 16;

// An element of y = a x + y on one thread (float): 0.37 ns (gpukit_tune_cpu_threads costs at idle,
// 2^22 elements in place: 0.34, 0.40). The thread rule's figure.
constexpr double kNsPerElement = 0.37;

}  // namespace

template <class T>
void axpy_openblas(T alpha, const T* x, const T* y, T* out, std::int64_t count, int threads) {
  if (count == 0) return;
  if (out != y) {
    gpukit::detail::parallel_copy(out, y, static_cast<std::size_t>(count) * sizeof(T), threads);
  }
  // Process-wide in OpenBLAS: each caller sets it before its own calls.
  openblas_set_num_threads(1);
  const std::int64_t pieces = (count + kPieceElements - 1) / kPieceElements;
  const int team = cpu_threads_for({count, kNsPerElement, pieces}, threads);
#pragma omp parallel for schedule(static) num_threads(team)
  for (std::int64_t p = 0; p < pieces; ++p) {
    const std::int64_t begin = p * kPieceElements;
    const auto n = static_cast<blasint>(std::min(kPieceElements, count - begin));
    if constexpr (std::is_same_v<T, float>) {
      cblas_saxpy(n, alpha, x + begin, 1, out + begin, 1);
    } else {
      cblas_daxpy(n, alpha, x + begin, 1, out + begin, 1);
    }
  }
}

template void axpy_openblas<float>(float, const float*, const float*, float*, std::int64_t, int);
template void axpy_openblas<double>(double, const double*, const double*, double*, std::int64_t,
                                    int);

}  // namespace gpukit::blas::cpu_detail
