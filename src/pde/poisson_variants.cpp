#include "pde/poisson_variants.hpp"

#include <string>

#include "gpukit/core/variant_registry.hpp"

namespace gpukit::pde {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
#define GPUKIT_POISSON_FUNCTIONS(v)                                                              \
  &v##_supports, &v##_device_bytes<float>, &v##_device_bytes<double>, &make_##v##_solver<float>, \
      &make_##v##_solver<double>

// Bytes per element (float): the seed moves complex data through 2 copy kernels, 2 C2C FFTs
// (about 2 passes each of read + write of 8-byte elements on large grids) and the solve; the
// half-spectrum variants touch half as many complex elements in the FFTs.
const PoissonVariant kVariants[] = {
    {"seed",
     "C2C on the full grid: copy to complex, FFT, solve (k from global memory), iFFT, copy back",
     "000: slides 44-52", 4 + 8 + 4 * 16 + 16 + 8 + 4, false, GPUKIT_POISSON_FUNCTIONS(seed)},
    {"seed-shared-k", "the seed with the wave numbers staged in shared memory", "000: slides 57-58",
     4 + 8 + 4 * 16 + 16 + 8 + 4, false, GPUKIT_POISSON_FUNCTIONS(seed_shared_k)},
    {"seed-coalesced", "and complex elements loaded and stored as one float2/double2",
     "000: slides 59-62", 4 + 8 + 4 * 16 + 16 + 8 + 4, false,
     GPUKIT_POISSON_FUNCTIONS(seed_coalesced)},
    {"r2c", "R2C/C2R on the half spectrum, solve with |k|^2 from the indices",
     "beyond the seeds: the symmetry slide 44 left out", 4 + 4 * 8 + 8 + 4, false,
     GPUKIT_POISSON_FUNCTIONS(r2c)},
    {"fused", "R2C/C2R along the contiguous axes, axis-0 FFT + solve + inverse fused in one kernel",
     "beyond the seeds", 4 + 2 * 8 + 8 + 4, false, GPUKIT_POISSON_FUNCTIONS(fused)},
    {"cufft", "cuFFT R2C, a plain scaling kernel, cuFFT C2R: the vendor baseline", "vendor",
     4 + 4 * 8 + 8 + 4, true, GPUKIT_POISSON_FUNCTIONS(cufft)},
};
#undef GPUKIT_POISSON_FUNCTIONS

constexpr std::string_view kBest[] = {"fused", "r2c", "cufft"};
#endif

}  // namespace

std::span<const PoissonVariant> poisson_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const PoissonVariant& find_poisson_variant(std::string_view name) {
  return find_variant(poisson_variants(), name, "poisson");
}

std::span<const std::string_view> best_poisson_variants() {
#if GPUKIT_HAVE_CUDA
  return kBest;
#else
  return {};
#endif
}

GridShape grid_shape(const PoissonGrid& grid) {
  GridShape shape;
  shape.rank = grid.rank();
  for (int a = 0; a < shape.rank; ++a) {
    shape.n[a] = grid.shape[static_cast<std::size_t>(a)];
    shape.length[a] = grid.length(a);
  }
  return shape;
}

}  // namespace gpukit::pde
