#pragma once
// Black-Scholes-Merton prices and Greeks of European calls and puts with a continuous dividend
// yield (seed 000, slides 3-15), on the CPU or a CUDA device, in float or double.
//
// Formulas (F = S e^{-qT}, K = X e^{-rT}, s = sigma sqrt(T), d1 = ln(F/K)/s + s/2, d2 = d1 - s):
//   call = F N(d1) - K N(d2),  put = K N(-d2) - F N(-d1).
// Each option is priced on its own side (BlackScholesInputs::is_put): only that side's price and
// Greeks are computed and written, so a book moves its inputs, a byte of side and one value per
// output.
// Degenerate inputs (sigma sqrt(T) == 0, or X == 0) give the discounted intrinsic value
// max(F - K, 0) / max(K - F, 0), never NaN. Greeks are per unit (not per 1%), theta per year of
// calendar time (-dV/dT); in the degenerate case they are the one-sided derivatives of the
// intrinsic value, with gamma = vega = 0.
//
// Valid inputs: spot > 0, strike >= 0, maturity >= 0, volatility >= 0, rate and dividend finite.
// The functions do not validate (the CLI does, naming file, line and column); a NaN input gives
// NaN outputs for that option only. Prices are clamped at 0 (rounding can otherwise make a deep
// out-of-the-money price -1e-17).
//
// Accuracy: with NormalCdf::erfc each N(d) is taken from erfc(|d|/sqrt 2) on the small tail, so
// both tails keep their relative accuracy; double prices agree with an independent long-double
// closed form within 1e-9 absolute (tested on thousands of options from 1-day to 30-year
// maturities and volatilities 0.01-3). NormalCdf::hull_polynomial is the seed's 5th-degree
// polynomial (absolute error about 7.5e-8 in N), kept as the seed's variant.
//
// Determinism: each option is priced independently; results do not depend on threads, grid or
// chunk sizes. CPU and GPU results differ by the last bits of the math libraries (erfc, exp, log)
// and, for the lean-* CUDA variants (the default among them), by their rearranged call/put
// arithmetic, tested to the same tolerances (max |GPU - CPU| 3.4e-13 on 100,000 extreme double
// options through the default variant, erfc).

#include <cstdint>
#include <span>
#include <string>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance {

enum class NormalCdf {
  erfc,             // accurate: 0.5 erfc(|d| / sqrt 2) on the small tail
  hull_polynomial,  // the seed's CND (Hull's 5th-degree polynomial)
  /// The CUDA SDK's fast path behind the seed's timings: Hull's polynomial with the hardware
  /// approximations __expf, __logf and __fdividef (each about 2^-21 relative error) in float
  /// kernels. Double precision and the CPU use the accurate functions for it.
  hull_polynomial_fast_math,
};

/// Structure-of-arrays views of a book; all pointers in host memory or all in device memory.
template <class Real>
struct BlackScholesInputs {
  std::int64_t count = 0;
  const Real* spot = nullptr;
  const Real* strike = nullptr;
  const Real* maturity = nullptr;  // years
  PerOption<Real> rate, volatility, dividend;
  /// Each option's side: a put where non-zero, a call where 0 (an OptionBookView's is_put column
  /// as it is), per option or once for the book (by default every option is a call). It selects
  /// what is computed and written: the outputs hold each option's own side.
  PerOption<std::uint8_t> is_put;
};

/// Each option's results on its own side (BlackScholesInputs::is_put); each array may be null (not
/// computed). Outputs must not alias inputs.
template <class Real>
struct BlackScholesOutputs {
  Real* price = nullptr;  // the call's or the put's
  Real* delta = nullptr;  // of the option's side (a put's is the put delta)
  Real* gamma = nullptr;  // the same for both sides
  Real* vega = nullptr;   // the same for both sides
  Real* theta = nullptr;  // of the option's side, per year
  Real* rho = nullptr;    // of the option's side

  bool has_greeks() const { return delta || gamma || vega || theta || rho; }
};

struct BlackScholesOptions {
  NormalCdf cdf = NormalCdf::erfc;
  std::string variant;  // CUDA variant name (see black_scholes_variants.hpp); empty = the default
  /// Options per chunk on the host-memory CUDA path; 0 = automatic (4Mi options).
  std::int64_t chunk_options = 0;
};

/// Prices a book in host memory, each option on its own side, reading the caller's arrays where
/// they are (no copy of the book is made). CPU context: OpenMP over options. CUDA context: the book
/// streams through pinned double buffers in chunks, overlapping transfers in both directions with
/// the kernel, so a book larger than device memory streams through. The pinned and device staging
/// buffers (about 140 MB in float, for a book of per-option sides and one output) are kept between
/// calls and freed at exit; each device has its own, and concurrent calls on one device take turns
/// on them.
/// Throws DeviceUnavailable, OutOfMemory or CudaError; InvalidInput for count < 0 or an unknown
/// variant.
template <class Real>
void price_black_scholes(const Context& context, const BlackScholesInputs<Real>& host_inputs,
                         const BlackScholesOutputs<Real>& host_outputs,
                         const BlackScholesOptions& options = {});

/// Prices a book already in device memory (the current device) on `stream`: checks the arguments
/// (InvalidInput as price_black_scholes()), enqueues the kernel and returns without waiting, as
/// every `*_on_device` function that hands nothing back to the host does (docs/design-notes.md);
/// the arrays must stay valid until the stream has run it.
template <class Real>
void price_black_scholes_on_device(const BlackScholesInputs<Real>& device_inputs,
                                   const BlackScholesOutputs<Real>& device_outputs,
                                   StreamHandle stream, const BlackScholesOptions& options = {});

}  // namespace gpukit::finance
