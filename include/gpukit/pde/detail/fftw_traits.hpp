#pragma once
// pde's building blocks, internal but installed (detail/: not the public API; it may change with
// any version; see poisson_building_blocks.hpp): what the Poisson solvers on the CPU (pde's plan
// in one process, gpukit_scale_out's on FFTW's MPI interface) share of FFTW's double and float
// libraries per precision (buffers, threads, execution, destruction), the release of a solver's
// plans and buffers, and the process-wide planner lock and thread set-up. Each solver adds its
// own planning calls, and the real-to-real transform of each boundary (the serial plan's
// poisson_r2r.cpp and the MPI engine's walls use the same kinds and normalisations). Needs FFTW's
// headers (fftw3.h: the gpukit_fftw link rule in the build).

#include <fftw3.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "gpukit/pde/poisson.hpp"

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

/// The real-to-real transform of an axis with `boundary`, forward and back, whose output index j
/// is the axis' mode j (laplacian_eigenvalues' order): RODFT00 (the DST-I, its own inverse) on a
/// dirichlet axis, REDFT10 (the DCT-II) and REDFT01 (the DCT-III) on a neumann one, R2HC and HC2R
/// on a periodic one (the cosine and sine coefficients of frequency m at j = m and n - m, both
/// divided by the eigenvalue of |m|). One r2r_kind enum serves FFTW's double and float libraries.
inline fftw_r2r_kind r2r_forward_kind(Boundary boundary) {
  return boundary == Boundary::dirichlet ? FFTW_RODFT00
         : boundary == Boundary::neumann ? FFTW_REDFT10
                                         : FFTW_R2HC;
}
inline fftw_r2r_kind r2r_inverse_kind(Boundary boundary) {
  return boundary == Boundary::dirichlet ? FFTW_RODFT00
         : boundary == Boundary::neumann ? FFTW_REDFT01
                                         : FFTW_HC2R;
}

/// The factor the forward and inverse r2r transforms of an axis of n points with `boundary`
/// multiply by (FFTW's transforms are unnormalised): 2(n + 1) dirichlet, 2n neumann, n periodic.
inline double r2r_round_trip_factor(Boundary boundary, std::int64_t n) {
  const auto points = static_cast<double>(n);
  return boundary == Boundary::dirichlet ? 2 * (points + 1)
         : boundary == Boundary::neumann ? 2 * points
                                         : points;
}

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
