#pragma once
// Implied volatility: the volatility at which a model reprices an option's quoted present value,
// for whole books, on the CPU or a CUDA device, in float or double. Three models:
//   black_scholes: spot S, dividend yield q, rate r: forward F = S e^{(r-q)T};
//   black76:       the forward F given, discounted at r;
//   bachelier:     the forward F given, normal (absolute) volatility, discounted at r.
// Method: Peter Jaeckel's "Let's Be Rational" (Wilmott 2015, revised 2017) for the lognormal
// models: the normalised Black price, rational initial guesses on four branches, at most two
// Householder steps of third order; and Jaeckel's "Implied Normal Volatility" (2017) for Bachelier.
// No iteration count or tolerance to choose: every row gets the answer to its precision.
//
// Every row is answered. A row whose quote admits no volatility gets NaN and a status saying why
// (ImpliedVolatilityStatus); the book goes on.
//
// Statuses are decided in the Real the book is computed in, the same way on the CPU and the GPU,
// in this order: invalid_input, zero_maturity, then (lognormal models) a zero forward or strike,
// whose price is its intrinsic value or above the bound, then below_intrinsic, a price exactly at
// the intrinsic value (0, ok), above_maximum. The intrinsic value of a lognormal row is compared
// in normalised form, sqrt(DF DK) 2 sinh(|x|/2) with x = ln(F/K) taken from the inputs so that it
// keeps its relative accuracy near the money (DF - DK directly would carry a rounding of DF, more
// than the time value of a deep in-the-money row holds); a Bachelier row's undiscounted, price / D
// against max(F - K, 0).
//
// Accuracy: implied_volatility_reference.hpp states the bound each row's volatility stays within
// (a few units of rounding of Real in sigma plus the price's rounding carried through 1/vega,
// derived from the price's conditioning) and holds the independent long double check that the
// tests and `gpukit iv --check` run. Measured on the CPU (the tests print it): on the grid
// (|ln(F/K)| up to 10 sigma sqrt(T), 1 day to 30 years, volatilities 1% to 500%, calls and puts,
// every model) the worst error is 0.10 of the bound in double and in float, and 0.25 of it over
// 1.2 million random rows of the same ranges; in double every row whose price carries the
// information is within 1e-13 of the volatility that generated it. The GPU runs the same
// arithmetic with CUDA's erfc, erfcx and normcdfinv (implied_volatility_gpu_test.cpp checks it
// there against the same bound).

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance {

/// The model a price is inverted under.
enum class VolatilityModel : std::uint8_t { black_scholes, black76, bachelier };

/// Why a row has (or has no) implied volatility. D = e^{-rT} is the discount factor.
enum class ImpliedVolatilityStatus : std::uint8_t {
  ok = 0,           // a volatility reproduces the price (0 for a price exactly at intrinsic)
  below_intrinsic,  // price < D max(F - K, 0) (call) or D max(K - F, 0) (put): none does
  above_maximum,    // price >= D F (call) or D K (put), the no-arbitrage bound (lognormal models
                    // only: a Bachelier price has no upper bound)
  zero_maturity,    // maturity == 0: the price carries no volatility
  invalid_input,    // a NaN, negative or infinite price, strike, maturity or underlying, or a
                    // non-finite rate, or dividend (black_scholes, the one model that reads it)
                    // (the CLI and Python refuse such rows before they get here)
};

/// The status's name as the CLI writes it: ok, below-intrinsic, above-maximum, zero-maturity,
/// invalid-input.
std::string_view status_name(ImpliedVolatilityStatus status);

/// Structure-of-arrays views of a book to invert; all pointers in host memory or all in device
/// memory.
template <class Real>
struct ImpliedVolatilityInputs {
  std::int64_t count = 0;
  const Real* price = nullptr;  // the option's present value, the quantity inverted
  /// The spot (black_scholes) or the forward (black76, bachelier).
  const Real* underlying = nullptr;
  const Real* strike = nullptr;
  const Real* maturity = nullptr;  // years
  PerOption<Real> rate;
  PerOption<Real> dividend;  // black_scholes only (a continuous yield); ignored otherwise
  /// Each row's side: a put where non-zero, a call where 0.
  PerOption<std::uint8_t> is_put;
};

/// Each row's implied volatility (NaN unless its status is ok) and status. Outputs must not alias
/// inputs; `status` may be null (not written).
template <class Real>
struct ImpliedVolatilityOutputs {
  Real* volatility = nullptr;
  ImpliedVolatilityStatus* status = nullptr;
};

struct ImpliedVolatilityOptions {
  VolatilityModel model = VolatilityModel::black_scholes;
  /// Rows per chunk on the host-memory CUDA path; 0 = automatic.
  std::int64_t chunk_rows = 0;
};

/// Inverts a book in host memory. CPU context: OpenMP over rows. CUDA context: the book streams
/// through pinned buffers in chunks, transfers overlapped with the kernel in both directions, so a
/// book larger than device memory streams through (as price_black_scholes does).
/// Determinism: each row is independent; the bits do not depend on threads, launch shape or chunk
/// size. CPU and GPU agree within the accuracy contract (the last bits of exp/log/erfc differ).
/// Throws DeviceUnavailable, OutOfMemory or CudaError; InvalidInput for count < 0.
template <class Real>
void implied_volatility(const Context& context, const ImpliedVolatilityInputs<Real>& host_inputs,
                        const ImpliedVolatilityOutputs<Real>& host_outputs,
                        const ImpliedVolatilityOptions& options = {});

/// The same on arrays already in device memory (the current device), enqueued on `stream`
/// without waiting (docs/design-notes.md); the arrays must stay valid until the stream has run it.
template <class Real>
void implied_volatility_on_device(const ImpliedVolatilityInputs<Real>& device_inputs,
                                  const ImpliedVolatilityOutputs<Real>& device_outputs,
                                  StreamHandle stream,
                                  const ImpliedVolatilityOptions& options = {});

/// A book of quotes to invert as read from a file: parallel double columns in host memory.
struct ImpliedVolatilityBookView {
  std::int64_t count = 0;
  const std::uint8_t* is_put = nullptr;  // 0 call, 1 put; null: every row a call
  const double* price = nullptr;
  const double* underlying = nullptr;  // spot (black_scholes) or forward (black76, bachelier)
  const double* strike = nullptr;
  const double* maturity = nullptr;
  PerOption<double> rate, dividend;
};

/// Rows [first, first + count) of `book` as a book of their own (book_rows' twin).
ImpliedVolatilityBookView implied_volatility_book_rows(const ImpliedVolatilityBookView& book,
                                                       std::int64_t first, std::int64_t count);

struct ImpliedVolatilityBookResult {
  std::vector<double> volatility;
  std::vector<ImpliedVolatilityStatus> status;
};

/// The operation behind `gpukit iv`: inverts `book` on `context` in `precision` (float32 rounds
/// the inputs to float first), results as double. Errors as implied_volatility().
ImpliedVolatilityBookResult implied_volatility_book(const Context& context,
                                                    const ImpliedVolatilityBookView& book,
                                                    Precision precision,
                                                    const ImpliedVolatilityOptions& options = {});

/// The count of rows of each status, indexed by the status's value.
std::vector<std::int64_t> count_statuses(std::span<const ImpliedVolatilityStatus> status);

}  // namespace gpukit::finance
