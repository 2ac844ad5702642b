// Implied volatility: argument checks and dispatch, to the CPU backend (cpu/) or the CUDA kernel
// (cuda/), for host data through the finance books' chunked host pipeline; and the book-level
// operation behind `gpukit iv`.

#include "gpukit/finance/implied_volatility.hpp"

#include <algorithm>
#include <type_traits>

#include "finance/book_columns.hpp"
#include "finance/cpu/implied_volatility_launchers.hpp"
#include "finance/cuda/book_host_pipeline.hpp"
#include "gpukit/core/error.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/implied_volatility_launchers.hpp"
#endif

namespace gpukit::finance {

namespace {

// Rows per chunk on the host-memory CUDA path (4Mi: about 200 MB of double staging a direction
// pair, as Black-Scholes).
constexpr std::int64_t kDefaultChunkRows = std::int64_t{1} << 22;

template <class Real>
void check_count(const ImpliedVolatilityInputs<Real>& in) {
  if (in.count < 0) throw InvalidInput("implied volatility: negative row count");
}

template <class Real>
void invert_through_device(const Context& context, const ImpliedVolatilityInputs<Real>& in,
                           const ImpliedVolatilityOutputs<Real>& out,
                           const ImpliedVolatilityOptions& options) {
  // The arrays that travel, in a fixed order; scalar parameters and a book-wide side travel inside
  // the views. The sides, a byte a row, travel last.
  std::vector<detail::BookInputColumn> inputs = {{in.price, sizeof(Real)},
                                                 {in.underlying, sizeof(Real)},
                                                 {in.strike, sizeof(Real)},
                                                 {in.maturity, sizeof(Real)}};
  for (const PerOption<Real>* p : {&in.rate, &in.dividend})
    if (p->values != nullptr) inputs.push_back({p->values, sizeof(Real)});
  if (in.is_put.values != nullptr) inputs.push_back({in.is_put.values, 1});
  std::vector<detail::BookOutputColumn> outputs = {{out.volatility, sizeof(Real)}};
  if (out.status != nullptr) outputs.push_back({out.status, sizeof(ImpliedVolatilityStatus)});
  detail::stream_book_through_device(
      context, in.count, options.chunk_rows > 0 ? options.chunk_rows : kDefaultChunkRows, inputs,
      outputs, [&](const detail::BookDeviceChunk& chunk) {
        ImpliedVolatilityInputs<Real> d_in = in;
        d_in.count = chunk.rows;
        std::size_t a = 0;
        const auto next = [&] { return static_cast<const Real*>(chunk.inputs[a++]); };
        d_in.price = next();
        d_in.underlying = next();
        d_in.strike = next();
        d_in.maturity = next();
        for (PerOption<Real>* p : {&d_in.rate, &d_in.dividend})
          if (p->values != nullptr) p->values = next();
        if (in.is_put.values != nullptr)
          d_in.is_put.values = static_cast<const std::uint8_t*>(chunk.inputs[a++]);
        ImpliedVolatilityOutputs<Real> d_out{static_cast<Real*>(chunk.outputs[0]), nullptr};
        if (out.status != nullptr)
          d_out.status = static_cast<ImpliedVolatilityStatus*>(chunk.outputs[1]);
        implied_volatility_on_device(d_in, d_out, chunk.stream, options);
      });
}

}  // namespace

std::string_view status_name(ImpliedVolatilityStatus status) {
  switch (status) {
    case ImpliedVolatilityStatus::ok:
      return "ok";
    case ImpliedVolatilityStatus::below_intrinsic:
      return "below-intrinsic";
    case ImpliedVolatilityStatus::above_maximum:
      return "above-maximum";
    case ImpliedVolatilityStatus::zero_maturity:
      return "zero-maturity";
    case ImpliedVolatilityStatus::invalid_input:
      return "invalid-input";
  }
  return "unknown";
}

template <class Real>
void implied_volatility(const Context& context, const ImpliedVolatilityInputs<Real>& host_inputs,
                        const ImpliedVolatilityOutputs<Real>& host_outputs,
                        const ImpliedVolatilityOptions& options) {
  check_count(host_inputs);
  if (context.backend == Backend::cpu) {
    cpu_detail::implied_volatility_on_cpu(host_inputs, host_outputs, options.model,
                                          context.effective_cpu_threads());
  } else {
    invert_through_device(context, host_inputs, host_outputs, options);
  }
}

template <class Real>
void implied_volatility_on_device(const ImpliedVolatilityInputs<Real>& device_inputs,
                                  const ImpliedVolatilityOutputs<Real>& device_outputs,
                                  StreamHandle stream, const ImpliedVolatilityOptions& options) {
  check_count(device_inputs);
#if GPUKIT_HAVE_CUDA
  if (device_inputs.count == 0) return;
  cuda_detail::launch_implied_volatility(device_inputs, device_outputs, options.model, stream);
#else
  (void)device_outputs, (void)stream, (void)options;
  throw DeviceUnavailable("implied volatility on a device: this gpukit was built without CUDA");
#endif
}

ImpliedVolatilityBookView implied_volatility_book_rows(const ImpliedVolatilityBookView& book,
                                                       std::int64_t first, std::int64_t count) {
  const auto at = [first](const auto* p) { return p != nullptr ? p + first : p; };
  ImpliedVolatilityBookView rows = book;
  rows.count = count;
  rows.is_put = at(book.is_put);
  rows.price = at(book.price);
  rows.underlying = at(book.underlying);
  rows.strike = at(book.strike);
  rows.maturity = at(book.maturity);
  rows.rate.values = at(book.rate.values);
  rows.dividend.values = at(book.dividend.values);
  return rows;
}

namespace {

// The book's columns in Real: a double book's own arrays (nothing copied), a float book's rounded
// copies (the rounding is what inverting in float means).
template <class Real>
struct ImpliedVolatilityColumns {
  std::vector<Real> price, underlying, strike, maturity, rate, dividend;  // float only
  ImpliedVolatilityInputs<Real> inputs;

  ImpliedVolatilityColumns(const ImpliedVolatilityColumns&) = delete;
  ImpliedVolatilityColumns& operator=(const ImpliedVolatilityColumns&) = delete;
  explicit ImpliedVolatilityColumns(const ImpliedVolatilityBookView& book) {
    const std::int64_t n = book.count;
    inputs = {n,
              detail::book_column(book.price, n, price),
              detail::book_column(book.underlying, n, underlying),
              detail::book_column(book.strike, n, strike),
              detail::book_column(book.maturity, n, maturity),
              detail::book_parameter(book.rate, n, rate),
              detail::book_parameter(book.dividend, n, dividend),
              {book.is_put, 0}};
  }
};

template <class Real>
ImpliedVolatilityBookResult invert_book_in(const Context& context,
                                           const ImpliedVolatilityBookView& book,
                                           const ImpliedVolatilityOptions& options) {
  const auto n = static_cast<std::size_t>(book.count);
  const ImpliedVolatilityColumns<Real> columns(book);
  ImpliedVolatilityBookResult result;
  result.volatility.resize(n);
  result.status.resize(n);
  if constexpr (std::is_same_v<Real, double>) {
    implied_volatility(context, columns.inputs, {result.volatility.data(), result.status.data()},
                       options);
  } else {
    std::vector<Real> volatility(n);
    implied_volatility(context, columns.inputs, {volatility.data(), result.status.data()}, options);
    std::copy(volatility.begin(), volatility.end(), result.volatility.begin());
  }
  return result;
}

}  // namespace

ImpliedVolatilityBookResult implied_volatility_book(const Context& context,
                                                    const ImpliedVolatilityBookView& book,
                                                    Precision precision,
                                                    const ImpliedVolatilityOptions& options) {
  if (book.count < 0) throw InvalidInput("implied volatility: negative row count");
  return precision == Precision::float32 ? invert_book_in<float>(context, book, options)
                                         : invert_book_in<double>(context, book, options);
}

std::vector<std::int64_t> count_statuses(std::span<const ImpliedVolatilityStatus> status) {
  std::vector<std::int64_t> counts(
      static_cast<std::size_t>(ImpliedVolatilityStatus::invalid_input) + 1);
  for (const ImpliedVolatilityStatus s : status) {
    const auto k = static_cast<std::size_t>(s);
    if (k < counts.size()) ++counts[k];
  }
  return counts;
}

template void implied_volatility<float>(const Context&, const ImpliedVolatilityInputs<float>&,
                                        const ImpliedVolatilityOutputs<float>&,
                                        const ImpliedVolatilityOptions&);
template void implied_volatility<double>(const Context&, const ImpliedVolatilityInputs<double>&,
                                         const ImpliedVolatilityOutputs<double>&,
                                         const ImpliedVolatilityOptions&);
template void implied_volatility_on_device<float>(const ImpliedVolatilityInputs<float>&,
                                                  const ImpliedVolatilityOutputs<float>&,
                                                  StreamHandle, const ImpliedVolatilityOptions&);
template void implied_volatility_on_device<double>(const ImpliedVolatilityInputs<double>&,
                                                   const ImpliedVolatilityOutputs<double>&,
                                                   StreamHandle, const ImpliedVolatilityOptions&);

}  // namespace gpukit::finance
