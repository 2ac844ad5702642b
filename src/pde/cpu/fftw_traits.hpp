#pragma once
// Internal to the Poisson solvers on the CPU (one process and FFTW's MPI interface): what FFTW's
// double and float libraries share (buffers, threads, execution, destruction) per precision, and
// the release of a solver's plans and buffers. Each solver adds its own planning calls.

#include <fftw3.h>

#include <cstddef>
#include <mutex>

#include "pde/poisson_impl.hpp"

namespace gpukit::pde {

template <class Real>
struct FftwCommon;
template <>
struct FftwCommon<double> {
  using Plan = fftw_plan;
  using Complex = fftw_complex;
  static void* malloc(std::size_t b) { return fftw_malloc(b); }
  static void free(void* p) { fftw_free(p); }
  static void threads(int n) { fftw_plan_with_nthreads(n); }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};
template <>
struct FftwCommon<float> {
  using Plan = fftwf_plan;
  using Complex = fftwf_complex;
  static void* malloc(std::size_t b) { return fftwf_malloc(b); }
  static void free(void* p) { fftwf_free(p); }
  static void threads(int n) { fftwf_plan_with_nthreads(n); }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

/// Destroys an FFTW plan pair (holding fftw_planner_mutex) and frees a solver's buffers, for
/// traits F derived from FftwCommon; every pointer comes back null, so a second call does nothing.
template <class F, class Real>
void release_fftw(typename F::Plan& forward, typename F::Plan& inverse, Real*& real,
                  typename F::Complex*& spectrum) {
  {
    std::lock_guard lock(fftw_planner_mutex());
    if (forward != nullptr) F::destroy(forward);
    if (inverse != nullptr) F::destroy(inverse);
  }
  forward = nullptr;
  inverse = nullptr;
  if (real != nullptr) F::free(real);
  if (spectrum != nullptr) F::free(spectrum);
  real = nullptr;
  spectrum = nullptr;
}

}  // namespace gpukit::pde
