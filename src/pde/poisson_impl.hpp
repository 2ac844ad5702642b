#pragma once
// Internal: the backends behind PoissonPlan (CPU: FFTW; CUDA: a registry variant) and the sums
// the mean rule needs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde {

template <class Real>
struct PoissonPlan<Real>::Impl {
  PoissonGrid grid;
  PoissonOptions options;
  std::string variant;
  std::size_t device_bytes = 0;

  virtual ~Impl() = default;
  virtual PoissonResult solve(std::span<const Real> f, std::span<Real> u) = 0;
  virtual PoissonResult solve_on_device(const Real* f, Real* u, StreamHandle stream) = 0;
};

template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cpu_poisson(const Context& context,
                                                                   const PoissonGrid& grid,
                                                                   const PoissonOptions& options);
template <class Real>
std::unique_ptr<typename PoissonPlan<Real>::Impl> make_cuda_poisson(const Context& context,
                                                                    const PoissonGrid& grid,
                                                                    const PoissonOptions& options);

/// sum(f) and sum(|f|) over host memory in double, Neumaier-compensated per thread.
template <class Real>
void host_sums(std::span<const Real> f, double& sum, double& sum_abs, int threads);

/// The InvalidInput `strict` throws for a non-zero mean.
[[noreturn]] void throw_nonzero_mean(const PoissonResult& result);

}  // namespace gpukit::pde
