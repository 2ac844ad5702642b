// Black-Scholes: argument checks and dispatch, to the CPU backend (cpu/) or to a CUDA variant
// (cuda/, through the registry), for host data through the chunked host path.

#include "gpukit/finance/black_scholes.hpp"

#include "finance/cpu/black_scholes_launchers.hpp"
#include "finance/cuda/black_scholes_host_pipeline.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"

namespace gpukit::finance {

namespace {

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
    cpu_detail::price_on_cpu(host_inputs, host_outputs, options.cdf,
                             context.effective_cpu_threads());
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
