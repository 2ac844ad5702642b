#pragma once
// Internal: the functions behind each entry of the registry (gpukit/pde/poisson_variants.hpp:
// GridShape, DeviceSolver), callable from plain C++ (no CUDA headers). A variant is three
// functions named after it:
//   bool <variant>_supports(const GridShape&)   shapes it can solve (all others: false)
//   PoissonDeviceBytes<Real> <variant>_device_bytes
//                                               device memory a solver allocates, known before
//                                               allocating anything
//   MakePoissonSolver<Real> make_<variant>_solver
// so that the registry can refuse a grid that does not fit before any allocation, and a solver
// (its cuFFT plans, tables and buffers) is created once per shape and then solves many
// right-hand sides.

#include <cstddef>
#include <memory>

#include "gpukit/pde/poisson_variants.hpp"

namespace gpukit::pde::cuda_detail {

using pde::DeviceSolver;
using pde::GridShape;

// The seed's pipeline and its optimization steps (poisson_seed.cu), all on the full grid with
// cuFFT complex-to-complex transforms: real-to-complex copy, forward C2C, solve, inverse C2C,
// scaled copy of the real part.
//   seed            slides 44-52: wave numbers read from global memory, scalar accesses
//   seed_shared_k   slides 57-58: the wave numbers staged in shared memory (+ cheap index math)
//   seed_coalesced  slides 59-62: and complex elements moved as one float2/double2
// The symmetry the seed left out (poisson_r2c.cu): cuFFT R2C / C2R on the half spectrum.
//   r2c             the improved solve kernel: |k|^2 from the indices, no tables, one complex
//                   load and store per element, no division or modulo
//   cufft           the vendor row: cuFFT R2C, a plain flat-index scaling kernel, cuFFT C2R
bool seed_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> seed_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_seed_solver;
bool seed_shared_k_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> seed_shared_k_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_seed_shared_k_solver;
bool seed_coalesced_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> seed_coalesced_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_seed_coalesced_solver;
bool r2c_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> r2c_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_r2c_solver;
bool cufft_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> cufft_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_cufft_solver;

// The fused solver (poisson_fused.cu): cuFFT real-to-complex transforms along the contiguous
// axes, then one kernel that does the forward transform along axis 0, the Poisson scaling and
// the inverse transform along axis 0 in shared memory/registers (one read and one write of the
// half spectrum instead of three of each), then cuFFT complex-to-real along the contiguous axes.
bool fused_supports(const GridShape& shape);
template <class Real>
PoissonDeviceBytes<Real> fused_device_bytes;
template <class Real>
MakePoissonSolver<Real> make_fused_solver;

}  // namespace gpukit::pde::cuda_detail
