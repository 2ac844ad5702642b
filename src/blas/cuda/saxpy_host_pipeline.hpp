#pragma once
// Internal: axpy of host arrays on a CUDA device, in chunks through pinned staging buffers.

#include <span>

#include "gpukit/core/context.hpp"

namespace gpukit::blas::detail {

/// out = alpha * x + y on the context's device with the default variant; out may be y.
template <class T>
void axpy_through_device(const Context& context, T alpha, std::span<const T> x,
                         std::span<const T> y, std::span<T> out);

}  // namespace gpukit::blas::detail
