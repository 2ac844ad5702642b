// Black-Scholes dispatch and the CPU backend.

#include "gpukit/finance/black_scholes.hpp"

#include <omp.h>

#include "finance/black_scholes_host_pipeline.hpp"
#include "finance/black_scholes_math.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"

namespace gpukit::finance {

namespace {

template <class Real, NormalCdf Cdf, bool kGreeks>
void price_on_cpu(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                  int threads) {
  // Independent options, one straight-line body: OpenMP splits the range and the compiler can
  // vectorize the arithmetic.
#pragma omp parallel for simd schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < in.count; ++i) {
    detail::price_and_store<Real, Cdf, kGreeks>(in, out, i);
  }
}

template <class Real>
void price_on_cpu(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
                  NormalCdf cdf, int threads) {
  const bool greeks = out.has_greeks();
  if (cdf == NormalCdf::erfc) {
    greeks ? price_on_cpu<Real, NormalCdf::erfc, true>(in, out, threads)
           : price_on_cpu<Real, NormalCdf::erfc, false>(in, out, threads);
  } else {
    // The CPU has no fast-math variant: both Hull modes use the accurate functions here.
    greeks ? price_on_cpu<Real, NormalCdf::hull_polynomial, true>(in, out, threads)
           : price_on_cpu<Real, NormalCdf::hull_polynomial, false>(in, out, threads);
  }
}

template <class Real>
void check_count(const BlackScholesInputs<Real>& in) {
  if (in.count < 0) throw InvalidInput("Black-Scholes: negative option count");
}

}  // namespace

template <class Real>
void price_black_scholes(const Context& context, const BlackScholesInputs<Real>& host_inputs,
                         const BlackScholesOutputs<Real>& host_outputs,
                         const BlackScholesOptions& options) {
  check_count(host_inputs);
  if (context.backend == Backend::cpu) {
    price_on_cpu(host_inputs, host_outputs, options.cdf, context.effective_cpu_threads());
  } else {
    price_black_scholes_through_device(context, host_inputs, host_outputs, options);
  }
}

template <class Real>
void price_black_scholes_on_device(const BlackScholesInputs<Real>& device_inputs,
                                   const BlackScholesOutputs<Real>& device_outputs,
                                   StreamHandle stream, const BlackScholesOptions& options) {
  check_count(device_inputs);
  const BlackScholesVariant& variant = options.variant.empty()
                                           ? default_black_scholes_variant()
                                           : find_black_scholes_variant(options.variant);
  variant.launch(device_inputs, device_outputs, options.cdf, stream);
}

template void price_black_scholes<float>(const Context&, const BlackScholesInputs<float>&,
                                         const BlackScholesOutputs<float>&,
                                         const BlackScholesOptions&);
template void price_black_scholes<double>(const Context&, const BlackScholesInputs<double>&,
                                          const BlackScholesOutputs<double>&,
                                          const BlackScholesOptions&);
template void price_black_scholes_on_device<float>(const BlackScholesInputs<float>&,
                                                   const BlackScholesOutputs<float>&, StreamHandle,
                                                   const BlackScholesOptions&);
template void price_black_scholes_on_device<double>(const BlackScholesInputs<double>&,
                                                    const BlackScholesOutputs<double>&,
                                                    StreamHandle, const BlackScholesOptions&);

}  // namespace gpukit::finance
