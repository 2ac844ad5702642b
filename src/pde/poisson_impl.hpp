#pragma once
// Internal: the backends behind PoissonPlan (CPU: FFTW; CUDA: a registry variant). What other
// engines of the problem share with them (the wave numbers, the mean rule's sums, the input
// checks, the FFT traits) is pde's installed building blocks, gpukit/pde/detail/.

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "gpukit/pde/detail/poisson_building_blocks.hpp"
#include "gpukit/pde/detail/poisson_mean_sums.hpp"
#include "gpukit/pde/poisson.hpp"

namespace gpukit::pde {

template <class Real>
struct PoissonPlan<Real>::Impl {
  PoissonGrid grid;
  PoissonOptions options;
  std::string variant;
  std::size_t device_bytes = 0;
  int host_threads = 1;  // for the host-side passes over f (the finite check)

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

}  // namespace gpukit::pde
