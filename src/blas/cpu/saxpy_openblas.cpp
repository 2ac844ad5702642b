// The CPU backend: OpenBLAS, not a loop of ours. BLAS updates y in place, so an output that is
// not y first receives a copy of y. cblas's sizes are `blasint` (32 bits in Debian's OpenBLAS),
// so arrays of 2^31 elements and more go in pieces.

#include "blas/cpu/saxpy_openblas.hpp"

#include <cblas.h>

#include <algorithm>
#include <type_traits>

#include "core/parallel_copy.hpp"

namespace gpukit::blas::cpu_detail {

namespace {

// Below 2^31 whatever blasint is; large enough that the pieces cost nothing.
constexpr std::int64_t kPieceElements = std::int64_t{1} << 30;

}  // namespace

template <class T>
void axpy_openblas(T alpha, const T* x, const T* y, T* out, std::int64_t count, int threads) {
  if (count == 0) return;
  if (out != y) {
    gpukit::detail::parallel_copy(out, y, static_cast<std::size_t>(count) * sizeof(T), threads);
  }
  // OpenBLAS's thread count is process-wide: set it for this call.
  openblas_set_num_threads(threads);
  for (std::int64_t begin = 0; begin < count; begin += kPieceElements) {
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
