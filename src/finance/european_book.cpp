#include "gpukit/finance/european_book.hpp"

#include <string>

#include "gpukit/core/error.hpp"

namespace gpukit::finance {

namespace {

template <class Real>
std::vector<Real> as_real(const double* values, std::int64_t count) {
  return std::vector<Real>(values, values + count);
}

template <class Real>
EuropeanBookResult price_in(const Context& context, const OptionBookView& book, bool greeks,
                            const BlackScholesOptions& options) {
  const std::int64_t n = book.count;
  const auto un = static_cast<std::size_t>(n);
  const std::vector<Real> spot = as_real<Real>(book.spot, n),
                          strike = as_real<Real>(book.strike, n),
                          maturity = as_real<Real>(book.maturity, n);
  std::vector<Real> rate, volatility, dividend;
  auto parameter = [&](const PerOption<double>& p, std::vector<Real>& storage) {
    if (p.values == nullptr) return PerOption<Real>{nullptr, static_cast<Real>(p.scalar)};
    storage = as_real<Real>(p.values, n);
    return PerOption<Real>{storage.data(), 0};
  };
  const BlackScholesInputs<Real> in{n,
                                    spot.data(),
                                    strike.data(),
                                    maturity.data(),
                                    parameter(book.rate, rate),
                                    parameter(book.volatility, volatility),
                                    parameter(book.dividend, dividend)};
  // Calls and puts come out of one pass; each row then takes its own side.
  std::vector<Real> call(un), put(un);
  std::vector<Real> call_delta, put_delta, gamma, vega, call_theta, put_theta, call_rho, put_rho;
  BlackScholesOutputs<Real> out{call.data(), put.data()};
  if (greeks) {
    for (auto* v :
         {&call_delta, &put_delta, &gamma, &vega, &call_theta, &put_theta, &call_rho, &put_rho})
      v->resize(un);
    out.call_delta = call_delta.data(), out.put_delta = put_delta.data();
    out.gamma = gamma.data(), out.vega = vega.data();
    out.call_theta = call_theta.data(), out.put_theta = put_theta.data();
    out.call_rho = call_rho.data(), out.put_rho = put_rho.data();
  }
  price_black_scholes(context, in, out, options);

  EuropeanBookResult result;
  result.price.resize(un);
  for (std::size_t i = 0; i < un; ++i) result.price[i] = book.is_put[i] ? put[i] : call[i];
  if (greeks) {
    for (auto* v : {&result.delta, &result.gamma, &result.vega, &result.theta, &result.rho})
      v->resize(un);
    for (std::size_t i = 0; i < un; ++i) {
      const bool is_put = book.is_put[i] != 0;
      result.delta[i] = is_put ? put_delta[i] : call_delta[i];
      result.gamma[i] = gamma[i];
      result.vega[i] = vega[i];
      result.theta[i] = is_put ? put_theta[i] : call_theta[i];
      result.rho[i] = is_put ? put_rho[i] : call_rho[i];
    }
  }
  return result;
}

}  // namespace

EuropeanBookResult price_european_book(const Context& context, const OptionBookView& book,
                                       Precision precision, bool greeks,
                                       const BlackScholesOptions& options) {
  if (book.barrier_type != nullptr) {
    for (std::int64_t i = 0; i < book.count; ++i) {
      if (book.barrier_type[i] != BarrierType::none) {
        throw InvalidInput("Black-Scholes prices European options only: row " + std::to_string(i) +
                           " of the book is a barrier option (Monte Carlo prices those)");
      }
    }
  }
  return precision == Precision::float32 ? price_in<float>(context, book, greeks, options)
                                         : price_in<double>(context, book, greeks, options);
}

}  // namespace gpukit::finance
