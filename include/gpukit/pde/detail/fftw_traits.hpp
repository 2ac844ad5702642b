#pragma once
// pde's building blocks, internal but installed (detail/: not the public API; it may change with
// any version; see poisson_building_blocks.hpp): what the Poisson solvers on the CPU (pde's plan
// in one process, gpukit_scale_out's on FFTW's MPI interface) share of FFTW's double and float
// libraries per precision (buffers, threads, execution, destruction), the release of a solver's
// plans and buffers, and the process-wide planner lock and thread set-up. Each solver adds its
// own planning calls. Needs FFTW's headers (fftw3.h: the gpukit_fftw link rule in the build).

#include <fftw3.h>

#include <cstddef>
#include <mutex>

namespace gpukit::pde::detail {

/// FFTW's planner is not thread-safe: every FFTW planner call and plan destruction of gpukit (the
/// serial and the MPI CPU backends) holds this mutex (one per process, in gpukit_pde).
std::mutex& fftw_planner_mutex();
/// fftw_init_threads() and fftwf_init_threads(), once per process: before the first plan of a
/// solver that calls FftwCommon::threads.
void init_fftw_threads_once();

/// FFTW's calls per precision: FftwCommon<double> (fftw_...) and FftwCommon<float> (fftwf_...).
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

}  // namespace gpukit::pde::detail
