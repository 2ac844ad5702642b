// Option pricing and its inverse: the calls of `gpukit bs`, `gpukit mc` and `gpukit iv`
// (apps/gpukit/cmd_bs.cpp, cmd_mc.cpp, cmd_iv.cpp) on books given as arrays (on one device, or
// over a device list or the ranks of an MPI job through gpukit/scale_out), and the CSV book's
// rules for terms that arrive parsed.

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "arrays.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"
#include "gpukit/finance/choices.hpp"
#include "gpukit/finance/european_book.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/io/option_book.hpp"
#include "gpukit/io/steps_requirement.hpp"
#include "gpukit/scale_out/black_scholes.hpp"
#include "gpukit/scale_out/implied_volatility.hpp"
#include "gpukit/scale_out/monte_carlo.hpp"

namespace gpukit::python {

namespace {

// Black-Scholes options as `gpukit bs` takes them: a variant must be one of the registry's (the
// CLI's --variant rule), on every backend, although only a GPU runs one.
finance::BlackScholesOptions black_scholes_options(std::string_view cdf,
                                                   const std::string& variant) {
  finance::BlackScholesOptions options;
  options.cdf = finance::parse_normal_cdf("cdf", cdf);
  if (!variant.empty()) finance::find_black_scholes_variant(variant);
  options.variant = variant;
  return options;
}

finance::Precision parse_precision(std::string_view name) {
  return finance::parse_precision("precision", name);
}

// The arrays of one call, checked and kept alive, with their place: every array of a call is in
// one place (checked by place_call from the places collected here).
class Terms {
 public:
  explicit Terms(std::string_view what) : what_(what) {}

  /// A column of `count` elements of T (nullptr for None when `optional`).
  template <class T>
  const T* column(nb::handle value, std::string_view name, std::int64_t count,
                  std::string_view expected, bool optional = false) {
    if (value.is_none()) {
      if (!optional) throw InvalidInput(fmt::format("{}: {} is required", what_, name));
      return nullptr;
    }
    return checked_column<T>(keep(nb::cast<InArray>(value), name), name, count, expected);
  }

  /// The same for an array already taken from its Python object: a DLPack capsule (how CUDA
  /// arrays arrive, made for the call's stream) can be taken only once.
  template <class T>
  const T* column(const InArray& array, std::string_view name, std::int64_t count,
                  std::string_view expected) {
    return checked_column<T>(keep(array, name), name, count, expected);
  }

  /// A parameter given once (a float) or per option (an array).
  template <class Real>
  finance::PerOption<Real> per_option(nb::handle value, std::string_view name, std::int64_t count,
                                      std::string_view expected) {
    if (PyFloat_Check(value.ptr())) return {nullptr, static_cast<Real>(nb::cast<double>(value))};
    return {column<Real>(value, name, count, expected), 0};
  }

  /// Each option's side: a bool for the book, or a uint8 array (non-zero a put) per option.
  finance::PerOption<std::uint8_t> sides(nb::handle value, std::string_view name,
                                         std::int64_t count) {
    if (PyBool_Check(value.ptr())) {
      return {nullptr, static_cast<std::uint8_t>(value.ptr() == Py_True ? 1 : 0)};
    }
    return {column<std::uint8_t>(value, name, count, "uint8"), 0};
  }

  /// An output array of `count` elements of T.
  template <class T>
  T* output(nb::handle value, std::string_view name, std::int64_t count) {
    outputs_.push_back(nb::cast<OutArray>(value));
    const OutArray& array = outputs_.back();
    places_.emplace_back(name, place_of(array, name));
    require_like(array, count, nb::dtype<T>(), what_);
    return data_of<T>(array);
  }

  /// The job of the call when it spreads over several workers or ranks (spread_job's rule on
  /// every array collected so far), else std::nullopt.
  std::optional<scale_out::Job> spread_job(std::string_view device) const {
    std::vector<std::pair<std::string_view, ArrayPlace>> places;
    for (const auto& [name, place] : places_) places.emplace_back(name, place);
    return python::spread_job(device, places);
  }

  /// The placement of the call on every array collected so far.
  Placement placement(std::string_view device, std::uintptr_t stream) const {
    std::vector<std::pair<std::string_view, ArrayPlace>> places;
    for (const auto& [name, place] : places_) places.emplace_back(name, place);
    return place_call(device, places, stream);
  }

  /// A book's call on the host columns collected so far, without the GIL: spread(job) over a
  /// device list or the ranks of an MPI job (the call the CLI makes then: every rank gets the
  /// result), else one(context) on the one device. InvalidInput `host_only` for CUDA columns.
  template <class Spread, class One>
  auto run_book(std::string_view device, const char* host_only, Spread&& spread, One&& one) const {
    if (const std::optional<scale_out::Job> job = spread_job(device)) {
      nb::gil_scoped_release released;
      return spread(*job);
    }
    const Placement where = placement(device, 0);
    if (where.device_data) throw InvalidInput(host_only);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    return one(where.context);
  }

  /// A call on the arrays collected so far, on their one device, without the GIL:
  /// on_device(stream) for CUDA arrays (the device-data API on the caller's stream), else
  /// on_host(context). Host arrays over several devices or ranks go through the book's call
  /// instead: a device list is refused here with `spread_refusal` (with CUDA arrays, which run on
  /// their GPU, too).
  template <class OnDevice, class OnHost>
  void run_on_one_device(std::string_view device, std::uintptr_t stream, const char* spread_refusal,
                         OnDevice&& on_device, OnHost&& on_host) const {
    if (spread_job(device)) throw InvalidInput(spread_refusal);
    const Placement where = placement(device, stream);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      on_device(where.stream);
    } else {
      on_host(where.context);
    }
  }

 private:
  const InArray& keep(const InArray& array, std::string_view name) {
    inputs_.push_back(array);
    places_.emplace_back(name, place_of(inputs_.back(), name));
    return inputs_.back();
  }

  template <class T>
  const T* checked_column(const InArray& array, std::string_view name, std::int64_t count,
                          std::string_view expected) {
    require_dtype<T>(array, what_, name, expected);
    if (count_of(array) != count) {
      throw InvalidInput(
          fmt::format("{}: {} has {} elements, the book has {}", what_, name, array.size(), count));
    }
    return data_of<T>(array);
  }

  std::string what_;
  std::vector<InArray> inputs_;
  std::vector<OutArray> outputs_;
  std::vector<std::pair<std::string, ArrayPlace>> places_;
};

// Black-Scholes of arrays (host or device) in Real, each option on its own side (`put`), as
// price_european_book prices a book, so each option has the bits `gpukit bs` gives it.
template <class Real>
void black_scholes_in(Terms& terms, const InArray& spot, nb::handle strike, nb::handle maturity,
                      nb::handle rate, nb::handle volatility, nb::handle dividend, nb::handle put,
                      const nb::dict& outputs, const finance::BlackScholesOptions& options,
                      std::string_view device, std::uintptr_t stream) {
  const std::string_view expected = sizeof(Real) == 4 ? "float32" : "float64";
  const std::int64_t n = count_of(spot);
  finance::BlackScholesInputs<Real> in{
      n,
      terms.column<Real>(spot, "spot", n, expected),
      terms.column<Real>(strike, "strike", n, expected),
      terms.column<Real>(maturity, "maturity", n, expected),
      terms.per_option<Real>(rate, "rate", n, expected),
      terms.per_option<Real>(volatility, "volatility", n, expected),
      terms.per_option<Real>(dividend, "dividend", n, expected),
      terms.sides(put, "put", n)};
  finance::BlackScholesOutputs<Real> out;
  const std::pair<const char*, Real**> slots[] = {{"price", &out.price}, {"delta", &out.delta},
                                                  {"gamma", &out.gamma}, {"vega", &out.vega},
                                                  {"theta", &out.theta}, {"rho", &out.rho}};
  for (const auto& [name, slot] : slots) {
    if (outputs.contains(name)) *slot = terms.output<Real>(outputs[name], name, n);
  }
  // Host arrays over several devices or ranks go through price_european_book (the book's call).
  terms.run_on_one_device(
      device, stream, "black_scholes: arrays over several devices are priced as a book",
      [&](StreamHandle on) { finance::price_black_scholes_on_device(in, out, on, options); },
      [&](const Context& context) { finance::price_black_scholes(context, in, out, options); });
}

void black_scholes(nb::handle spot, nb::handle strike, nb::handle maturity, nb::handle rate,
                   nb::handle volatility, nb::handle dividend, nb::handle put,
                   const nb::dict& outputs, std::string_view cdf, const std::string& variant,
                   std::string_view device, std::uintptr_t stream) {
  const finance::BlackScholesOptions options = black_scholes_options(cdf, variant);
  Terms terms("black_scholes");
  // Taken once: a CUDA array arrives as a DLPack capsule, which can be consumed only once.
  const InArray spot_array = nb::cast<InArray>(spot);
  with_real_type(spot_array.dtype(), "black_scholes", [&](auto element) {
    using Real = decltype(element);
    black_scholes_in<Real>(terms, spot_array, strike, maturity, rate, volatility, dividend, put,
                           outputs, options, device, stream);
  });
}

// The terms of Asian, early-exercise and Heston rows (OptionBookView's later fields), as the
// Python module passes them: average, exercise and model a uint8 array of the enumeration's codes
// or None (every row the default); v0, kappa, theta, sigma_v and rho a float (the book's value) or
// a float64 array.
struct ProductTerms {
  nb::object average, exercise, model;
  nb::object v0, kappa, theta, sigma_v, rho;
};

ProductTerms product_terms(nb::handle average, nb::handle exercise, nb::handle model, nb::handle v0,
                           nb::handle kappa, nb::handle theta, nb::handle sigma_v, nb::handle rho) {
  return {nb::borrow(average), nb::borrow(exercise), nb::borrow(model),   nb::borrow(v0),
          nb::borrow(kappa),   nb::borrow(theta),    nb::borrow(sigma_v), nb::borrow(rho)};
}

// A European Black-Scholes book's product terms: no such column, every Heston parameter 0.
ProductTerms no_product_terms() {
  const nb::object zero = nb::float_(0.0);
  return {nb::none(), nb::none(), nb::none(), zero, zero, zero, zero, zero};
}

// The book of a Monte Carlo or Black-Scholes call on columns (host or device).
finance::OptionBookView book_view(Terms& terms, std::int64_t n, nb::handle is_put, nb::handle spot,
                                  nb::handle strike, nb::handle maturity, nb::handle rate,
                                  nb::handle volatility, nb::handle dividend,
                                  nb::handle barrier_type, nb::handle barrier, nb::handle steps,
                                  nb::handle stream_keys, const ProductTerms& products) {
  finance::OptionBookView view;
  view.count = n;
  view.is_put = terms.column<std::uint8_t>(is_put, "is_put", n, "uint8");
  view.spot = terms.column<double>(spot, "spot", n, "float64");
  view.strike = terms.column<double>(strike, "strike", n, "float64");
  view.maturity = terms.column<double>(maturity, "maturity", n, "float64");
  view.rate = terms.per_option<double>(rate, "rate", n, "float64");
  view.volatility = terms.per_option<double>(volatility, "volatility", n, "float64");
  view.dividend = terms.per_option<double>(dividend, "dividend", n, "float64");
  static_assert(sizeof(finance::BarrierType) == 1);
  view.barrier_type = reinterpret_cast<const finance::BarrierType*>(
      terms.column<std::uint8_t>(barrier_type, "barrier_type", n, "uint8", true));
  view.barrier = terms.column<double>(barrier, "barrier", n, "float64", true);
  view.steps = terms.column<std::uint32_t>(steps, "steps", n, "uint32", true);
  view.stream = terms.column<std::uint64_t>(stream_keys, "stream_keys", n, "uint64", true);
  static_assert(sizeof(finance::AverageType) == 1 && sizeof(finance::ExerciseStyle) == 1 &&
                sizeof(finance::AssetModel) == 1);
  view.average = reinterpret_cast<const finance::AverageType*>(
      terms.column<std::uint8_t>(products.average, "average", n, "uint8", true));
  view.exercise = reinterpret_cast<const finance::ExerciseStyle*>(
      terms.column<std::uint8_t>(products.exercise, "exercise", n, "uint8", true));
  view.model = reinterpret_cast<const finance::AssetModel*>(
      terms.column<std::uint8_t>(products.model, "model", n, "uint8", true));
  view.v0 = terms.per_option<double>(products.v0, "v0", n, "float64");
  view.kappa = terms.per_option<double>(products.kappa, "kappa", n, "float64");
  view.theta = terms.per_option<double>(products.theta, "theta", n, "float64");
  view.sigma_v = terms.per_option<double>(products.sigma_v, "sigma_v", n, "float64");
  view.rho = terms.per_option<double>(products.rho, "rho", n, "float64");
  return view;
}

nb::dict price_european_book(std::int64_t n, nb::handle is_put, nb::handle spot, nb::handle strike,
                             nb::handle maturity, nb::handle rate, nb::handle volatility,
                             nb::handle dividend, std::string_view precision, bool greeks,
                             std::string_view cdf, const std::string& variant,
                             std::string_view device) {
  Terms terms("price_book");
  const finance::OptionBookView view =
      book_view(terms, n, is_put, spot, strike, maturity, rate, volatility, dividend, nb::none(),
                nb::none(), nb::none(), nb::none(), no_product_terms());
  const finance::BlackScholesOptions options = black_scholes_options(cdf, variant);
  const finance::Precision p = parse_precision(precision);
  finance::EuropeanBookResult result = terms.run_book(
      device, "price_book: the book's columns must be host arrays",
      [&](const scale_out::Job& job) {
        return scale_out::price_black_scholes_book(job, view, p, greeks, options,
                                                   scale_out::Results::on_every_rank);
      },
      [&](const Context& context) {
        return finance::price_european_book(context, view, p, greeks, options);
      });
  nb::dict columns;
  columns["price"] = to_numpy(std::move(result.price));
  if (greeks) {
    columns["delta"] = to_numpy(std::move(result.delta));
    columns["gamma"] = to_numpy(std::move(result.gamma));
    columns["vega"] = to_numpy(std::move(result.vega));
    columns["theta"] = to_numpy(std::move(result.theta));
    columns["rho"] = to_numpy(std::move(result.rho));
  }
  return columns;
}

nb::dict monte_carlo(std::int64_t n, nb::handle is_put, nb::handle spot, nb::handle strike,
                     nb::handle maturity, nb::handle rate, nb::handle volatility,
                     nb::handle dividend, nb::handle barrier_type, nb::handle barrier,
                     nb::handle steps, nb::handle stream_keys, nb::handle average,
                     nb::handle exercise, nb::handle model, nb::handle v0, nb::handle kappa,
                     nb::handle theta, nb::handle sigma_v, nb::handle rho, const nb::dict& outputs,
                     std::int64_t paths, std::uint64_t seed, std::string_view monitoring,
                     bool antithetic, bool control_variate, bool greeks, std::string_view precision,
                     std::string_view sampler, std::int64_t replicates, std::string_view device,
                     std::uintptr_t stream) {
  finance::MonteCarloOptions options = finance::monte_carlo_options(
      {.paths = paths,
       .seed = seed,
       .monitoring = finance::parse_barrier_monitoring("monitoring", monitoring),
       .antithetic = antithetic,
       .control_variate = control_variate,
       .greeks = greeks,
       .precision = parse_precision(precision),
       .sampler = finance::parse_monte_carlo_sampler("sampler", sampler),
       .replicates = replicates});
  // A long pricing stops on Ctrl-C between blocks, with KeyboardInterrupt.
  options.progress = signal_check();
  Terms terms("monte_carlo");
  const finance::OptionBookView view = book_view(
      terms, n, is_put, spot, strike, maturity, rate, volatility, dividend, barrier_type, barrier,
      steps, stream_keys, product_terms(average, exercise, model, v0, kappa, theta, sigma_v, rho));
  finance::MonteCarloDeviceOutputs device_outputs;
  const std::pair<const char*, double**> slots[] = {
      {"price", &device_outputs.price},
      {"std_error", &device_outputs.std_error},
      {"ci_low", &device_outputs.ci_low},
      {"ci_high", &device_outputs.ci_high},
      {"paths", &device_outputs.paths},
      {"delta", &device_outputs.delta},
      {"gamma", &device_outputs.gamma},
      {"vega", &device_outputs.vega},
      {"vrf_antithetic", &device_outputs.vrf_antithetic},
      {"vrf_control", &device_outputs.vrf_control}};
  for (const auto& [name, slot] : slots) {
    if (outputs.contains(name)) *slot = terms.output<double>(outputs[name], name, n);
  }
  nb::dict columns;
  finance::MonteCarloBookResult result;
  std::vector<std::int64_t> breached, unpaid;
  const std::optional<scale_out::Job> job = terms.spread_job(device);
  const Placement where = job ? Placement{} : terms.placement(device, stream);
  {
    nb::gil_scoped_release released;
    if (job) {
      // A device list, or the ranks of an MPI job: the call `gpukit mc` makes then, every rank
      // getting the result. (Ctrl-C is checked on this thread about twice a second.)
      result =
          scale_out::price_monte_carlo_book(*job, view, options, scale_out::Results::on_every_rank);
    } else {
      const DeviceGuard guard(where.context);
      if (where.device_data) {
        finance::price_monte_carlo_book_on_device(view, device_outputs, where.stream, options);
      } else {
        result = finance::price_monte_carlo_book(where.context, view, options);
      }
    }
    if (where.device_data) return columns;  // the outputs given were written
    // The rows the CLI warns about, for monte_carlo's and price_book's RuntimeWarnings.
    breached = finance::monte_carlo_rows_breached_at_start(view, options.precision);
    unpaid = finance::monte_carlo_rows_without_paying_path(view, options, result);
  }
  nb::list breached_notes;
  for (const std::int64_t row : breached) {
    breached_notes.append(finance::monte_carlo_breached_at_start_note(view, row));
  }
  columns["_breached_at_start"] = to_numpy(std::move(breached));
  columns["_breached_notes"] = breached_notes;
  columns["_no_paying_path"] = to_numpy(std::move(unpaid));
  columns["price"] = to_numpy(std::move(result.price));
  columns["std_error"] = to_numpy(std::move(result.std_error));
  columns["ci_low"] = to_numpy(std::move(result.ci_low));
  columns["ci_high"] = to_numpy(std::move(result.ci_high));
  columns["paths"] = to_numpy(std::move(result.paths));
  if (greeks) {
    columns["delta"] = to_numpy(std::move(result.delta));
    columns["gamma"] = to_numpy(std::move(result.gamma));
    columns["vega"] = to_numpy(std::move(result.vega));
  }
  if (antithetic) columns["vrf_antithetic"] = to_numpy(std::move(result.vrf_antithetic));
  if (control_variate) columns["vrf_control"] = to_numpy(std::move(result.vrf_control));
  return columns;
}

std::optional<std::tuple<std::int64_t, std::string, std::string>> book_term_problem(
    std::int64_t n, nb::handle is_put, nb::handle spot, nb::handle strike, nb::handle maturity,
    nb::handle rate, nb::handle volatility, nb::handle dividend, nb::handle barrier_type,
    nb::handle barrier, nb::handle steps, nb::handle average, nb::handle exercise, nb::handle model,
    nb::handle v0, nb::handle kappa, nb::handle theta, nb::handle sigma_v, nb::handle rho,
    std::string_view precision) {
  const finance::Precision p = parse_precision(precision);
  Terms terms("book");
  const finance::OptionBookView view = book_view(
      terms, n, is_put, spot, strike, maturity, rate, volatility, dividend, barrier_type, barrier,
      steps, nb::none(), product_terms(average, exercise, model, v0, kappa, theta, sigma_v, rho));
  if (terms.placement("cpu", 0).device_data) {
    throw InvalidInput("the book's terms are checked in host memory");
  }
  std::optional<io::BookTermProblem> problem;
  {
    nb::gil_scoped_release released;
    problem = io::find_book_term_problem(view, p);
  }
  if (!problem) return std::nullopt;
  return std::make_tuple(problem->row, problem->column, problem->what);
}

// io::find_non_finite_output of priced host columns (float64, C-contiguous; the caller converts
// a float32 column only once it knows one of its values is not finite), in `precision`'s words.
std::optional<std::tuple<std::int64_t, std::string, std::string>> non_finite_output(
    const std::vector<std::pair<std::string, nb::ndarray<nb::ro, nb::numpy, double, nb::c_contig>>>&
        columns,
    std::string_view precision, bool as_float) {
  const finance::Precision p = parse_precision(precision);
  std::vector<io::OutputColumn> outputs;
  for (const auto& [name, values] : columns) {
    outputs.push_back({name, std::span<const double>(values.data(), values.size()), as_float});
  }
  const std::optional<io::OutputProblem> problem = io::find_non_finite_output(outputs);
  if (!problem) return std::nullopt;
  return std::make_tuple(problem->row, problem->column, problem->what(p));
}

std::tuple<nb::ndarray<nb::numpy, std::uint64_t>, std::int64_t, std::int64_t> stream_keys(
    const std::vector<std::string>& ids) {
  finance::MonteCarloStreamKeys keys = finance::monte_carlo_stream_keys(
      static_cast<std::int64_t>(ids.size()),
      [&ids](std::int64_t row) { return std::string_view(ids[static_cast<std::size_t>(row)]); });
  return {to_numpy(std::move(keys.keys)), keys.repeated_ids, keys.rows_with_repeated_ids};
}

// Implied volatilities of arrays (host or device) in Real, as implied_volatility_book inverts a
// book, into `volatility` (Real) and `status` (uint8: finance::ImpliedVolatilityStatus).
template <class Real>
void implied_volatility_in(Terms& terms, const InArray& price, nb::handle underlying,
                           nb::handle strike, nb::handle maturity, nb::handle rate,
                           nb::handle dividend, nb::handle put, nb::handle volatility,
                           nb::handle status, const finance::ImpliedVolatilityOptions& options,
                           std::string_view device, std::uintptr_t stream) {
  const std::string_view expected = sizeof(Real) == 4 ? "float32" : "float64";
  const std::int64_t n = count_of(price);
  const finance::ImpliedVolatilityInputs<Real> in{
      n,
      terms.column<Real>(price, "price", n, expected),
      terms.column<Real>(underlying, "underlying", n, expected),
      terms.column<Real>(strike, "strike", n, expected),
      terms.column<Real>(maturity, "maturity", n, expected),
      terms.per_option<Real>(rate, "rate", n, expected),
      terms.per_option<Real>(dividend, "dividend", n, expected),
      terms.sides(put, "put", n)};
  static_assert(sizeof(finance::ImpliedVolatilityStatus) == sizeof(std::uint8_t));
  const finance::ImpliedVolatilityOutputs<Real> out{
      terms.output<Real>(volatility, "volatility", n),
      reinterpret_cast<finance::ImpliedVolatilityStatus*>(
          terms.output<std::uint8_t>(status, "status", n))};
  // Host arrays over several devices or ranks go through implied_volatility_book.
  terms.run_on_one_device(
      device, stream, "implied_volatility: arrays over several devices are inverted as a book",
      [&](StreamHandle on) { finance::implied_volatility_on_device(in, out, on, options); },
      [&](const Context& context) { finance::implied_volatility(context, in, out, options); });
}

void implied_volatility(nb::handle price, nb::handle underlying, nb::handle strike,
                        nb::handle maturity, nb::handle rate, nb::handle dividend, nb::handle put,
                        nb::handle volatility, nb::handle status, std::string_view model,
                        std::string_view device, std::uintptr_t stream) {
  finance::ImpliedVolatilityOptions options;
  options.model = finance::parse_volatility_model("model", model);
  Terms terms("implied_volatility");
  // Taken once: a CUDA array arrives as a DLPack capsule, which can be consumed only once.
  const InArray price_array = nb::cast<InArray>(price);
  with_real_type(price_array.dtype(), "implied_volatility", [&](auto element) {
    using Real = decltype(element);
    implied_volatility_in<Real>(terms, price_array, underlying, strike, maturity, rate, dividend,
                                put, volatility, status, options, device, stream);
  });
}

// The quotes of an implied volatility call on host float64 columns (underlying: the spot or the
// forward, as the model reads).
finance::ImpliedVolatilityBookView quote_book_view(Terms& terms, std::int64_t n, nb::handle is_put,
                                                   nb::handle price, nb::handle underlying,
                                                   nb::handle strike, nb::handle maturity,
                                                   nb::handle rate, nb::handle dividend) {
  finance::ImpliedVolatilityBookView view;
  view.count = n;
  view.is_put = terms.column<std::uint8_t>(is_put, "is_put", n, "uint8");
  view.price = terms.column<double>(price, "price", n, "float64");
  view.underlying = terms.column<double>(underlying, "underlying", n, "float64");
  view.strike = terms.column<double>(strike, "strike", n, "float64");
  view.maturity = terms.column<double>(maturity, "maturity", n, "float64");
  view.rate = terms.per_option<double>(rate, "rate", n, "float64");
  view.dividend = terms.per_option<double>(dividend, "dividend", n, "float64");
  return view;
}

std::tuple<nb::ndarray<nb::numpy, double>, nb::ndarray<nb::numpy, std::uint8_t>>
implied_volatility_book(std::int64_t n, nb::handle is_put, nb::handle price, nb::handle underlying,
                        nb::handle strike, nb::handle maturity, nb::handle rate,
                        nb::handle dividend, std::string_view model, std::string_view precision,
                        std::string_view device) {
  Terms terms("implied_volatility");
  const finance::ImpliedVolatilityBookView view =
      quote_book_view(terms, n, is_put, price, underlying, strike, maturity, rate, dividend);
  finance::ImpliedVolatilityOptions options;
  options.model = finance::parse_volatility_model("model", model);
  const finance::Precision p = parse_precision(precision);
  finance::ImpliedVolatilityBookResult result = terms.run_book(
      device, "implied_volatility: the book must be host arrays",
      [&](const scale_out::Job& job) {
        return scale_out::implied_volatility_book(job, view, p, options,
                                                  scale_out::Results::on_every_rank);
      },
      [&](const Context& context) {
        return finance::implied_volatility_book(context, view, p, options);
      });
  std::vector<std::uint8_t> codes(result.status.size());
  for (std::size_t i = 0; i < codes.size(); ++i)
    codes[i] = static_cast<std::uint8_t>(result.status[i]);
  return {to_numpy(std::move(result.volatility)), to_numpy(std::move(codes))};
}

std::optional<std::tuple<std::int64_t, std::string, std::string>> quote_term_problem(
    std::int64_t n, nb::handle is_put, nb::handle price, nb::handle underlying, nb::handle strike,
    nb::handle maturity, nb::handle rate, nb::handle dividend, std::string_view model,
    std::string_view precision) {
  const io::BookColumns columns =
      io::quote_columns(finance::parse_volatility_model("model", model));
  const finance::Precision p = parse_precision(precision);
  Terms terms("quotes");
  const finance::ImpliedVolatilityBookView view =
      quote_book_view(terms, n, is_put, price, underlying, strike, maturity, rate, dividend);
  if (terms.placement("cpu", 0).device_data) {
    throw InvalidInput("the quotes are checked in host memory");
  }
  std::optional<io::BookTermProblem> problem;
  {
    nb::gil_scoped_release released;
    problem = io::find_quote_term_problem(view, columns, p);
  }
  if (!problem) return std::nullopt;
  return std::make_tuple(problem->row, problem->column, problem->what);
}

// The column (and Python argument) holding the underlying `model` inverts on: "spot" or
// "forward" (io::quote_columns).
std::string quote_underlying(std::string_view model) {
  return io::quote_columns(finance::parse_volatility_model("model", model)) ==
                 io::BookColumns::quotes_on_spot
             ? "spot"
             : "forward";
}

std::vector<std::string> iv_status_names() {
  std::vector<std::string> names;
  for (auto s = finance::ImpliedVolatilityStatus::ok;;
       s = static_cast<finance::ImpliedVolatilityStatus>(static_cast<int>(s) + 1)) {
    names.emplace_back(finance::status_name(s));
    if (s == finance::ImpliedVolatilityStatus::invalid_input) break;
  }
  return names;
}

std::optional<bool> option_type(std::string_view text) { return io::parse_option_type(text); }

// finance::parse_precision of `precision`, as numpy names the dtype it prices in.
std::string precision_dtype(std::string_view precision) {
  return parse_precision(precision) == finance::Precision::float32 ? "float32" : "float64";
}

std::string no_paying_path_note(const std::vector<std::string>& locations,
                                std::int64_t rows_without, std::int64_t rows, std::int64_t paths,
                                bool antithetic) {
  finance::MonteCarloOptions options;
  options.paths = paths;
  options.antithetic = antithetic;
  return finance::monte_carlo_no_paying_path_note(locations, rows_without, rows, options);
}

std::optional<std::string> nearest_column_name(std::string_view missing,
                                               const std::vector<std::string>& names) {
  return io::nearest_column_name(missing, names);
}

// A word read by one of the CSV reader's parsers, as an int (the enumeration's code), or nullopt.
template <class Enum>
std::optional<int> code_of(const std::optional<Enum>& value) {
  if (!value) return std::nullopt;
  return static_cast<int>(*value);
}

std::optional<int> barrier_type(std::string_view text) {
  return code_of(io::parse_barrier_type(text));
}
std::optional<int> average_type(std::string_view text) {
  return code_of(io::parse_average_type(text));
}
std::optional<int> exercise_style(std::string_view text) {
  return code_of(io::parse_exercise_style(text));
}
std::optional<int> asset_model(std::string_view text) {
  return code_of(io::parse_asset_model(text));
}

// io::steps_requirement of a row's codes (BarrierType, AverageType, ExerciseStyle, AssetModel).
std::optional<std::string> steps_requirement(int barrier, int average, int exercise, int model) {
  const std::optional<std::string_view> needs = io::steps_requirement(
      static_cast<finance::BarrierType>(barrier), static_cast<finance::AverageType>(average),
      static_cast<finance::ExerciseStyle>(exercise), static_cast<finance::AssetModel>(model));
  if (!needs) return std::nullopt;
  return std::string(*needs);
}

}  // namespace

void bind_finance(nb::module_& m) {
  m.attr("monte_carlo_max_paths") = finance::kMonteCarloMaxPaths;
  m.attr("monte_carlo_max_replicates") = finance::kMonteCarloMaxReplicates;
  m.def("black_scholes", &black_scholes, nb::arg("spot"), nb::arg("strike"), nb::arg("maturity"),
        nb::arg("rate"), nb::arg("volatility"), nb::arg("dividend"), nb::arg("put"),
        nb::arg("outputs"), nb::arg("cdf"), nb::arg("variant"), nb::arg("device"),
        nb::arg("stream"),
        "finance::price_black_scholes (host arrays) or price_black_scholes_on_device (CUDA "
        "arrays, queued on `stream`, not waited for) into the arrays of `outputs` (names of "
        "BlackScholesOutputs' fields), each option on its own side. rate, volatility and "
        "dividend: a float or an array; put: a bool or a uint8 array (non-zero a put).");
  m.def("price_european_book", &price_european_book, nb::arg("count"), nb::arg("is_put"),
        nb::arg("spot"), nb::arg("strike"), nb::arg("maturity"), nb::arg("rate"),
        nb::arg("volatility"), nb::arg("dividend"), nb::arg("precision"), nb::arg("greeks"),
        nb::arg("cdf"), nb::arg("variant"), nb::arg("device"),
        "finance::price_european_book, the call of `gpukit bs`, on host float64 columns (or "
        "scale_out::price_black_scholes_book with a device list or under mpirun: every rank the "
        "result); a dict of the output columns (price, and delta, gamma, vega, theta, rho with "
        "greeks).");
  m.def("monte_carlo", &monte_carlo, nb::arg("count"), nb::arg("is_put"), nb::arg("spot"),
        nb::arg("strike"), nb::arg("maturity"), nb::arg("rate"), nb::arg("volatility"),
        nb::arg("dividend"), nb::arg("barrier_type").none(), nb::arg("barrier").none(),
        nb::arg("steps").none(), nb::arg("stream_keys").none(), nb::arg("average").none(),
        nb::arg("exercise").none(), nb::arg("model").none(), nb::arg("v0"), nb::arg("kappa"),
        nb::arg("theta"), nb::arg("sigma_v"), nb::arg("rho"), nb::arg("outputs"), nb::arg("paths"),
        nb::arg("seed"), nb::arg("monitoring"), nb::arg("antithetic"), nb::arg("control_variate"),
        nb::arg("greeks"), nb::arg("precision"), nb::arg("sampler"), nb::arg("replicates"),
        nb::arg("device"), nb::arg("stream"),
        "finance::price_monte_carlo_book (host columns: returns a dict of the output columns; "
        "scale_out::price_monte_carlo_book with a device list or under mpirun) or "
        "price_monte_carlo_book_on_device (CUDA columns: writes the arrays of `outputs`, waits "
        "for `stream`), with the options `gpukit mc` sets. average, exercise, model: uint8 "
        "arrays of the enumerations' codes or None; v0, kappa, theta, sigma_v, rho: a float or "
        "an array.");
  m.def("book_term_problem", &book_term_problem, nb::arg("count"), nb::arg("is_put"),
        nb::arg("spot"), nb::arg("strike"), nb::arg("maturity"), nb::arg("rate"),
        nb::arg("volatility"), nb::arg("dividend"), nb::arg("barrier_type").none(),
        nb::arg("barrier").none(), nb::arg("steps").none(), nb::arg("average").none(),
        nb::arg("exercise").none(), nb::arg("model").none(), nb::arg("v0"), nb::arg("kappa"),
        nb::arg("theta"), nb::arg("sigma_v"), nb::arg("rho"), nb::arg("precision"),
        "io::find_book_term_problem of host columns: (row, column, what) of the first value a "
        "CSV book priced in `precision` may not hold, or None.");
  m.def("non_finite_output", &non_finite_output, nb::arg("columns"), nb::arg("precision"),
        nb::arg("as_float"),
        "io::find_non_finite_output of (name, float64 array) pairs, each written as a float when "
        "`as_float`: (row, column, what) of the first value that is no price, or None.");
  m.def("stream_keys", &stream_keys, nb::arg("ids"),
        "finance::monte_carlo_stream_keys of trade ids (each id's bytes): the keys, the ids "
        "found on several rows and the rows that carry them.");
  m.def("nearest_column_name", &nearest_column_name, nb::arg("missing"), nb::arg("names"),
        "io::nearest_column_name: the name of `names` probably meant for the known column "
        "`missing`, or None.");
  m.def("no_paying_path_note", &no_paying_path_note, nb::arg("locations"), nb::arg("rows_without"),
        nb::arg("rows"), nb::arg("paths"), nb::arg("antithetic"),
        "finance::monte_carlo_no_paying_path_note: the warning about rows none of whose paths "
        "paid, naming the first `locations`.");
  m.def("precision_dtype", &precision_dtype, nb::arg("precision"),
        "finance::parse_precision: 'float64' for double, 'float32' for float; ValueError "
        "otherwise, naming precision.");
  m.def("implied_volatility", &implied_volatility, nb::arg("price"), nb::arg("underlying"),
        nb::arg("strike"), nb::arg("maturity"), nb::arg("rate"), nb::arg("dividend"),
        nb::arg("put"), nb::arg("volatility"), nb::arg("status"), nb::arg("model"),
        nb::arg("device"), nb::arg("stream"),
        "finance::implied_volatility (host arrays) or implied_volatility_on_device (CUDA arrays, "
        "queued on `stream`, not waited for) into `volatility` (price's dtype) and `status` "
        "(uint8: ImpliedVolatilityStatus). rate and dividend: a float or an array; put: a bool "
        "or a uint8 array (non-zero a put).");
  m.def("implied_volatility_book", &implied_volatility_book, nb::arg("count"), nb::arg("is_put"),
        nb::arg("price"), nb::arg("underlying"), nb::arg("strike"), nb::arg("maturity"),
        nb::arg("rate"), nb::arg("dividend"), nb::arg("model"), nb::arg("precision"),
        nb::arg("device"),
        "finance::implied_volatility_book, the call of `gpukit iv`, on host float64 columns (or "
        "scale_out::implied_volatility_book with a device list or under mpirun: every rank the "
        "result): (volatility float64, status uint8).");
  m.def("quote_term_problem", &quote_term_problem, nb::arg("count"), nb::arg("is_put"),
        nb::arg("price"), nb::arg("underlying"), nb::arg("strike"), nb::arg("maturity"),
        nb::arg("rate"), nb::arg("dividend"), nb::arg("model"), nb::arg("precision"),
        "io::find_quote_term_problem of host columns: (row, column, what) of the first value a "
        "CSV book of quotes for `model` in `precision` may not hold, or None.");
  m.def("quote_underlying", &quote_underlying, nb::arg("model"),
        "io::quote_columns: 'spot' or 'forward', the underlying `model` inverts on; ValueError "
        "naming model for another word.");
  m.def("iv_status_names", &iv_status_names,
        "finance::status_name of every ImpliedVolatilityStatus, indexed by its value.");
  m.def("option_type", &option_type, nb::arg("text"),
        "io::parse_option_type: True for a put, False for a call, None for another word.");
  m.def("barrier_type", &barrier_type, nb::arg("text"),
        "io::parse_barrier_type as an int (finance::BarrierType), None for another word.");
  m.def("average_type", &average_type, nb::arg("text"),
        "io::parse_average_type as an int (finance::AverageType), None for another word.");
  m.def("exercise_style", &exercise_style, nb::arg("text"),
        "io::parse_exercise_style as an int (finance::ExerciseStyle), None for another word.");
  m.def("asset_model", &asset_model, nb::arg("text"),
        "io::parse_asset_model as an int (finance::AssetModel), None for another word.");
  m.def("steps_requirement", &steps_requirement, nb::arg("barrier_type"), nb::arg("average"),
        nb::arg("exercise"), nb::arg("model"),
        "io::steps_requirement of a row's codes: why the row needs its steps ('an Asian option "
        "needs its number of fixings'), or None for a European Black-Scholes row.");
}

}  // namespace gpukit::python
