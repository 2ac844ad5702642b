#include "gpukit/pde/poisson_variants.hpp"

#include <string>

#include "gpukit/core/variant_registry.hpp"
#include "pde/cuda/poisson_device_solver.hpp"

namespace gpukit::pde {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;
// An entry's functions: <v>_supports, <v>_device_bytes<Real>, make_<v>_solver<Real>
// (poisson_device_solver.hpp), in the registry's one shape.
using DeviceBytesTable = PerType<PoissonDeviceBytes, RealTypes>;
using MakeSolverTable = PerType<MakePoissonSolver, RealTypes>;

// The traffic model counts one read of f and one write of u per grid point; its flops depend on
// the grid (PoissonVariant::info_for).
constexpr TrafficModel kReadFWriteU{.reads_per_element = 1, .writes_per_element = 1};

// Bytes per element (float): the seed moves complex data through 2 copy kernels, 2 C2C FFTs
// (about 2 passes each of read + write of 8-byte elements on large grids) and the solve; the
// half-spectrum variants touch half as many complex elements in the FFTs.
const PoissonVariant kVariants[] = {
    {.info = {.name = "seed",
              .description = "C2C on the full grid: copy to complex, FFT, solve (k from global "
                             "memory), iFFT, copy back",
              .seed_reference = "000: slides 44-52",
              .role = VariantRole::step,
              .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 8 + 4 * 16 + 16 + 8 + 4,
     .supports = &seed_supports,
     .device_bytes_of = DeviceBytesTable::of([]<class Real> { return &seed_device_bytes<Real>; }),
     .make_solver = MakeSolverTable::of([]<class Real> { return &make_seed_solver<Real>; })},
    {.info = {.name = "seed-shared-k",
              .description = "the seed with the wave numbers staged in shared memory",
              .seed_reference = "000: slides 57-58",
              .role = VariantRole::step,
              .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 8 + 4 * 16 + 16 + 8 + 4,
     .supports = &seed_shared_k_supports,
     .device_bytes_of =
         DeviceBytesTable::of([]<class Real> { return &seed_shared_k_device_bytes<Real>; }),
     .make_solver =
         MakeSolverTable::of([]<class Real> { return &make_seed_shared_k_solver<Real>; })},
    {.info = {.name = "seed-coalesced",
              .description = "and complex elements loaded and stored as one float2/double2",
              .seed_reference = "000: slides 59-62",
              .role = VariantRole::step,
              .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 8 + 4 * 16 + 16 + 8 + 4,
     .supports = &seed_coalesced_supports,
     .device_bytes_of =
         DeviceBytesTable::of([]<class Real> { return &seed_coalesced_device_bytes<Real>; }),
     .make_solver =
         MakeSolverTable::of([]<class Real> { return &make_seed_coalesced_solver<Real>; })},
    {.info = {.name = "r2c",
              .description = "R2C/C2R on the half spectrum, solve with |k|^2 from the indices",
              .seed_reference = "beyond the seeds: the symmetry slide 44 left out",
              .role = VariantRole::step,
              .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 4 * 8 + 8 + 4,
     .supports = &r2c_supports,
     .device_bytes_of = DeviceBytesTable::of([]<class Real> { return &r2c_device_bytes<Real>; }),
     .make_solver = MakeSolverTable::of([]<class Real> { return &make_r2c_solver<Real>; })},
    {.info =
         {.name = "fused",
          .description =
              "R2C/C2R along the contiguous axes, axis-0 FFT + solve + inverse fused in one kernel",
          .seed_reference = "beyond the seeds",
          .role = VariantRole::best,
          .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 2 * 8 + 8 + 4,
     .supports = &fused_supports,
     .device_bytes_of = DeviceBytesTable::of([]<class Real> { return &fused_device_bytes<Real>; }),
     .make_solver = MakeSolverTable::of([]<class Real> { return &make_fused_solver<Real>; })},
    {.info = {.name = "cufft",
              .description = "cuFFT R2C, a plain scaling kernel, cuFFT C2R: the vendor baseline",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kReadFWriteU},
     .bytes_per_element = 4 + 4 * 8 + 8 + 4,
     .supports = &cufft_supports,
     .device_bytes_of = DeviceBytesTable::of([]<class Real> { return &cufft_device_bytes<Real>; }),
     .make_solver = MakeSolverTable::of([]<class Real> { return &make_cufft_solver<Real>; })},
};

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
