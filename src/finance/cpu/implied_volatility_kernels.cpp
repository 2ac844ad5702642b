// The CPU backend of implied volatility: one OpenMP loop over independent rows.

#include "finance/cpu/implied_volatility_launchers.hpp"

#include "finance/implied_volatility_math.hpp"
#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::finance::cpu_detail {

namespace {

// One row on one thread (double, black_scholes, a realistic chain): about 250 ns; the thread
// rule's figure (needs to be right within a factor of a few).
constexpr double kNsPerRow = 250;

template <class Real, VolatilityModel kModel>
void invert_rows(const ImpliedVolatilityInputs<Real>& in, const ImpliedVolatilityOutputs<Real>& out,
                 int threads) {
  const int team = cpu_threads_for({in.count, kNsPerRow}, threads);
  // Rows take different branches: dynamic chunks of a fixed size keep the threads busy; each row
  // is computed alone, so the bits do not depend on the schedule.
#pragma omp parallel for schedule(dynamic, 4096) num_threads(team)
  for (std::int64_t i = 0; i < in.count; ++i) {
    detail::implied_volatility_and_store<Real, kModel>(in, out, i);
  }
}

}  // namespace

template <class Real>
void implied_volatility_on_cpu(const ImpliedVolatilityInputs<Real>& in,
                               const ImpliedVolatilityOutputs<Real>& out, VolatilityModel model,
                               int threads) {
  switch (model) {
    case VolatilityModel::black_scholes:
      return invert_rows<Real, VolatilityModel::black_scholes>(in, out, threads);
    case VolatilityModel::black76:
      return invert_rows<Real, VolatilityModel::black76>(in, out, threads);
    case VolatilityModel::bachelier:
      return invert_rows<Real, VolatilityModel::bachelier>(in, out, threads);
  }
}

template void implied_volatility_on_cpu<float>(const ImpliedVolatilityInputs<float>&,
                                               const ImpliedVolatilityOutputs<float>&,
                                               VolatilityModel, int);
template void implied_volatility_on_cpu<double>(const ImpliedVolatilityInputs<double>&,
                                                const ImpliedVolatilityOutputs<double>&,
                                                VolatilityModel, int);

}  // namespace gpukit::finance::cpu_detail
