#pragma once
// Internal: the transforms behind the CPU PoissonPlan (cpu/poisson_plan.cpp), one capability per
// file: the real-to-complex solve of a periodic grid (poisson_plan.cpp) and the real-to-real solve
// of a grid with a dirichlet or neumann axis (poisson_r2r.cpp). The plan around them does what is
// common to both: the finite check, the mean rule, the copies in and out, the gauge.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde::cpu_detail {

/// One plan's transforms on their own buffer of grid.size() reals (FFTW's plans are tied to the
/// aligned buffers they were made for): f is copied into buffer(), run() leaves there the solution
/// of (lap - lambda) u = f for the plan's grid and options, the constant mode 0 when the problem is
/// singular (so u has mean zero), before any gauge. Not used by two threads at once.
template <class Real>
class TransformSolve {
 public:
  virtual ~TransformSolve() = default;
  virtual Real* buffer() = 0;
  virtual void run() = 0;
};

/// A periodic grid (any operator, any lambda): FFTW real-to-complex on the half spectrum.
template <class Real>
std::unique_ptr<TransformSolve<Real>> make_fourier_solve(const PoissonGrid& grid,
                                                         const PoissonOptions& options,
                                                         int threads);

/// A grid with a dirichlet or neumann axis: FFTW real-to-real on every axis, in place.
template <class Real>
std::unique_ptr<TransformSolve<Real>> make_r2r_solve(const PoissonGrid& grid,
                                                     const PoissonOptions& options, int threads);

/// OutOfMemory (`bytes` asked) for `what` when `bytes` exceeds the host's physical memory, before
/// anything is allocated.
void refuse_beyond_host_memory(std::size_t bytes, const std::string& what);

/// The grid's axes as FFTW takes them (int); InvalidInput for an axis of 2^31 or more.
std::vector<int> fftw_dims(const PoissonGrid& grid);

}  // namespace gpukit::pde::cpu_detail
