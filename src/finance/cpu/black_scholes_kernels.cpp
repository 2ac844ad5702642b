// The CPU backend of Black-Scholes: one OpenMP loop over independent options, each priced on its
// own side.

#include "finance/cpu/black_scholes_launchers.hpp"

#include "finance/black_scholes_math.hpp"
#include "gpukit/core/cpu_threads.hpp"

namespace gpukit::finance::cpu_detail {

namespace {

// One option on one thread (erfc, double): 60 ns; with delta and gamma 85 ns
// (gpukit_tune_cpu_threads costs at idle, 2^16 options: 53 and 72, 65 and 96, measured when every
// option was priced as a call and a put: its own side alone costs no more). The thread rule's
// figures.
constexpr double kNsPerOption = 60, kNsPerOptionWithGreeks = 85;

template <class Real, NormalCdf Cdf, bool kGreeks>
void price_options(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                   int threads) {
  // Independent options, one straight-line body: OpenMP splits the range and the compiler can
  // vectorize the arithmetic.
  const int team =
      cpu_threads_for({in.count, kGreeks ? kNsPerOptionWithGreeks : kNsPerOption}, threads);
#pragma omp parallel for simd schedule(static) num_threads(team)
  for (std::int64_t i = 0; i < in.count; ++i) {
    detail::price_and_store<Real, Cdf, kGreeks>(in, out, i);
  }
}

}  // namespace

template <class Real>
void price_on_cpu(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                  NormalCdf cdf, int threads) {
  const bool greeks = out.has_greeks();
  if (cdf == NormalCdf::erfc) {
    greeks ? price_options<Real, NormalCdf::erfc, true>(in, out, threads)
           : price_options<Real, NormalCdf::erfc, false>(in, out, threads);
  } else {
    greeks ? price_options<Real, NormalCdf::hull_polynomial, true>(in, out, threads)
           : price_options<Real, NormalCdf::hull_polynomial, false>(in, out, threads);
  }
}

template void price_on_cpu<float>(const BlackScholesInputs<float>&,
                                  const BlackScholesOutputs<float>&, NormalCdf, int);
template void price_on_cpu<double>(const BlackScholesInputs<double>&,
                                   const BlackScholesOutputs<double>&, NormalCdf, int);

}  // namespace gpukit::finance::cpu_detail
