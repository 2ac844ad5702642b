#include "bench/implied_volatility_bench.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"

namespace gpukit::bench {

namespace {

using finance::ImpliedVolatilityInputs;
using finance::ImpliedVolatilityOutputs;
using finance::ImpliedVolatilityStatus;

constexpr std::int64_t kDefaultRows = std::int64_t{1} << 26;
constexpr std::int64_t kMaxCpuRows = std::int64_t{1} << 22;
// Rows the independent check solves again per verified row (every k-th row of the book): its
// long double solve costs ~15 us a row on a core.
constexpr std::int64_t kCheckedRows = std::int64_t{1} << 14;
constexpr double kRate = 0.03, kDividend = 0.01;

// A quote read: price, spot, strike and maturity (4 values) and the side (a byte); written: the
// volatility (1 value) and the status (a byte). Rate and dividend are the book's.
constexpr VariantInfo kImpliedVolatilityInfo{
    .name = "lets-be-rational",
    .description = "one thread a row: Let's Be Rational's guess and Householder steps",
    .seed_reference = "beyond the seeds (issue 32)",
    .role = VariantRole::best,
    .traffic = {.reads_per_element = 4, .writes_per_element = 1, .extra_read_bytes_per_element = 2},
    .deterministic = true};

// The pricing kernel on the same book, the reference of the table: spot, strike, maturity and
// volatility read, the side read, the price written.
constexpr VariantInfo kPricingInfo{
    .name = "black-scholes-price",
    .description = "the Black-Scholes pricing kernel (default variant, erfc) on the same book",
    .seed_reference = "000 slides 3-15",
    .role = VariantRole::step,
    .traffic = {.reads_per_element = 4, .writes_per_element = 1, .extra_read_bytes_per_element = 1},
    .deterministic = true};

// A realistic chain: spots 10 to 500, expiries from 1 day to 5 years (log-uniform), strikes 0.5
// to 2 times the forward (log-uniform), volatilities 10% to 80%, calls and puts at random; the
// prices from the library's Black-Scholes pricing in double, then rounded to Real.
template <class Real>
struct Book {
  std::int64_t n = 0;
  std::vector<Real> price, spot, strike, maturity, volatility;
  std::vector<std::uint8_t> is_put;

  ImpliedVolatilityInputs<Real> inputs(const Real* p, const Real* s, const Real* k, const Real* t,
                                       const std::uint8_t* sides) const {
    return {n, p, s, k, t, {nullptr, Real(kRate)}, {nullptr, Real(kDividend)}, {sides, 0}};
  }
  finance::BlackScholesInputs<Real> pricing(const Real* s, const Real* k, const Real* t,
                                            const Real* v, const std::uint8_t* sides) const {
    return {n, s, k, t, {nullptr, Real(kRate)}, {v, 0}, {nullptr, Real(kDividend)}, {sides, 0}};
  }
};

template <class Real>
Book<Real> make_book(std::int64_t n, const Context& context) {
  const auto un = static_cast<std::size_t>(n);
  std::vector<double> spot(un), strike(un), maturity(un), volatility(un), price(un);
  Book<Real> book;
  book.n = n;
  book.is_put.resize(un);
  std::mt19937_64 rng(20260320);
  std::uniform_real_distribution<double> u(0, 1);
  const auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, u(rng)); };
  for (std::size_t i = 0; i < un; ++i) {
    // Rounded to Real first, so that the double prices are those of the inputs the rows see.
    const auto real = [](double v) { return static_cast<double>(static_cast<Real>(v)); };
    spot[i] = real(log_uniform(10, 500));
    maturity[i] = real(log_uniform(1.0 / 365, 5));
    const double forward = spot[i] * std::exp((kRate - kDividend) * maturity[i]);
    strike[i] = real(forward * log_uniform(0.5, 2));
    volatility[i] = real(0.1 + 0.7 * u(rng));
    book.is_put[i] = u(rng) < 0.5 ? 1 : 0;
  }
  finance::price_black_scholes(
      Context::cpu(context.cpu_threads),
      finance::BlackScholesInputs<double>{n,
                                          spot.data(),
                                          strike.data(),
                                          maturity.data(),
                                          {nullptr, static_cast<double>(Real(kRate))},
                                          {volatility.data(), 0},
                                          {nullptr, static_cast<double>(Real(kDividend))},
                                          {book.is_put.data(), 0}},
      finance::BlackScholesOutputs<double>{price.data()});
  const auto to_real = [](const std::vector<double>& v) {
    return std::vector<Real>(v.begin(), v.end());
  };
  book.price = to_real(price), book.spot = to_real(spot), book.strike = to_real(strike);
  book.maturity = to_real(maturity), book.volatility = to_real(volatility);
  return book;
}

// The independent check (implied_volatility_reference.hpp) on every k-th row of the book: the
// rows' volatilities and statuses against long double solves within the library's bound.
template <class Real>
Check check_volatilities(const Book<Real>& book, const std::vector<Real>& volatility,
                         const std::vector<ImpliedVolatilityStatus>& status, int threads) {
  const std::int64_t stride = std::max<std::int64_t>(1, book.n / kCheckedRows);
  std::vector<double> p, s, k, t, v;
  std::vector<std::uint8_t> sides;
  std::vector<ImpliedVolatilityStatus> st;
  for (std::int64_t i = 0; i < book.n; i += stride) {
    const auto j = static_cast<std::size_t>(i);
    p.push_back(book.price[j]), s.push_back(book.spot[j]), k.push_back(book.strike[j]);
    t.push_back(book.maturity[j]), v.push_back(volatility[j]), sides.push_back(book.is_put[j]);
    st.push_back(status[j]);
  }
  const finance::ImpliedVolatilityBookView view{static_cast<std::int64_t>(p.size()),
                                                sides.data(),
                                                p.data(),
                                                s.data(),
                                                k.data(),
                                                t.data(),
                                                {nullptr, static_cast<double>(Real(kRate))},
                                                {nullptr, static_cast<double>(Real(kDividend))}};
  const finance::ImpliedVolatilityCheck check = check_implied_volatility_book(
      view,
      sizeof(Real) == sizeof(float) ? finance::Precision::float32 : finance::Precision::float64,
      finance::VolatilityModel::black_scholes, v, st, threads);
  const std::vector<std::int64_t> counts = finance::count_statuses(st);
  return {check.passed,
          fmt::format("{} every {}th row ({} rows, {} ok) against the long double check: worst "
                      "{:.3f} of the bound, {} status mismatches",
                      check.passed ? "ok" : "MISMATCH", stride, p.size(), counts[0],
                      check.worst_ratio, check.status_mismatches)};
}

// The pricing row's prices against the long double closed form on every k-th row.
template <class Real>
Check check_prices(const Book<Real>& book, const std::vector<Real>& price) {
  const std::int64_t stride = std::max<std::int64_t>(1, book.n / kCheckedRows);
  double worst = 0;
  for (std::int64_t i = 0; i < book.n; i += stride) {
    const auto j = static_cast<std::size_t>(i);
    const finance::ReferencePrices r =
        finance::black_scholes_reference(book.spot[j], book.strike[j], book.maturity[j],
                                         Real(kRate), book.volatility[j], Real(kDividend));
    const double reference = static_cast<double>(book.is_put[j] ? r.put : r.call);
    const double bound = finance::black_scholes_price_bound<Real>(
        book.spot[j], book.strike[j], book.maturity[j], Real(kRate), Real(kDividend),
        finance::NormalCdf::erfc);
    const double ratio = std::fabs(static_cast<double>(price[j]) - reference) / bound;
    if (!(ratio <= worst)) worst = ratio;  // keeps a NaN
  }
  const bool ok = worst <= 1;
  return {ok, fmt::format("{} every {}th price against the long double closed form: worst {:.3f} "
                          "of the bound",
                          ok ? "ok" : "MISMATCH", stride, worst)};
}

template <class Real>
void poison(std::vector<Real>& v, std::vector<ImpliedVolatilityStatus>& s) {
  std::fill(v.begin(), v.end(), std::numeric_limits<Real>::quiet_NaN());
  std::fill(s.begin(), s.end(), static_cast<ImpliedVolatilityStatus>(0xFF));
}

template <class Real>
WorkloadShape shape_of(const Book<Real>& book) {
  return {.elements = static_cast<double>(book.n), .value_bytes = sizeof(Real)};
}

// Device-resident: the book in device memory, the pricing kernel and the implied volatility
// kernel timed on the same arrays; the ratio of implied volatilities to options priced per second
// in the implied volatility row's note.
template <class Real>
void device_resident_table(const BenchConfig& config, Report& report, const Book<Real>& book,
                           const char* precision) {
  const auto un = static_cast<std::size_t>(book.n);
  cuda::Stream stream;
  cuda::DeviceBuffer<Real> d_price(un), d_spot(un), d_strike(un), d_maturity(un), d_vol(un),
      d_out(un);
  cuda::DeviceBuffer<std::uint8_t> d_side(un);
  cuda::DeviceBuffer<ImpliedVolatilityStatus> d_status(un);
  d_price.copy_from_host(book.price);
  d_spot.copy_from_host(book.spot);
  d_strike.copy_from_host(book.strike);
  d_maturity.copy_from_host(book.maturity);
  d_vol.copy_from_host(book.volatility);
  d_side.copy_from_host(book.is_put);
  const ImpliedVolatilityInputs<Real> in =
      book.inputs(d_price.data(), d_spot.data(), d_strike.data(), d_maturity.data(), d_side.data());
  const ImpliedVolatilityOutputs<Real> out{d_out.data(), d_status.data()};
  const finance::BlackScholesInputs<Real> pricing =
      book.pricing(d_spot.data(), d_strike.data(), d_maturity.data(), d_vol.data(), d_side.data());
  const finance::BlackScholesOutputs<Real> priced{d_out.data()};

  Table table = device_table(
      report, fmt::format("Implied volatility {}: {} quotes of a realistic chain in device memory "
                          "(black-scholes), and the pricing kernel on the same book",
                          precision, book.n));
  table.element_name = "quotes";

  std::vector<Real> host_out(un);
  Row pricing_row = variant_row(kPricingInfo, shape_of(book));
  pricing_row.ladder = false;
  {
    cuda::fill_bytes_async(d_out.data(), 0xFF, un * sizeof(Real), stream.handle());
    finance::price_black_scholes_on_device(pricing, priced, stream.handle());
    stream.synchronize();
    d_out.copy_to_host(host_out);
    Check c = check_prices(book, host_out);
    pricing_row.verify(c.passed, std::move(c.note));
    pricing_row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, [&] {
      finance::price_black_scholes_on_device(pricing, priced, stream.handle());
    });
  }
  Row iv_row = variant_row(kImpliedVolatilityInfo, shape_of(book));
  iv_row.ladder = false;
  {
    finance::ImpliedVolatilityOptions options;
    cuda::fill_bytes_async(d_out.data(), 0xFF, un * sizeof(Real), stream.handle());
    cuda::fill_bytes_async(d_status.data(), 0xFF, un, stream.handle());
    finance::implied_volatility_on_device(in, out, stream.handle(), options);
    stream.synchronize();
    std::vector<ImpliedVolatilityStatus> status(un);
    d_out.copy_to_host(host_out);
    d_status.copy_to_host(status);
    Check c = check_volatilities(book, host_out, status,
                                 Context::cpu(config.context.cpu_threads).effective_cpu_threads());
    iv_row.verify(c.passed, std::move(c.note));
    iv_row.samples_ms = time_on_stream(stream.handle(), config.warmup, config.repeat, [&] {
      finance::implied_volatility_on_device(in, out, stream.handle(), options);
    });
  }
  iv_row.note += fmt::format("; {:.3f} implied volatilities per option priced (same book, run)",
                             pricing_row.median_ms() / iv_row.median_ms());
  table.rows.push_back(std::move(pricing_row));
  table.rows.push_back(std::move(iv_row));
  report.tables.push_back(std::move(table));
}

// Host-to-host: the book in pageable host memory through the chunked pinned pipeline.
template <class Real>
void host_table(const BenchConfig& config, Report& report, const Book<Real>& book,
                const char* precision) {
  const auto un = static_cast<std::size_t>(book.n);
  Table table;
  table.title =
      fmt::format("Implied volatility {}: {} quotes host to host (the chunked pinned pipeline)",
                  precision, book.n);
  table.element_name = "quotes";
  const TransferBandwidth& tb = *report.transfer;
  // Inputs travel host-to-device and outputs device-to-host, each at its measured pinned rate,
  // in parallel at best: that is the PCIe limit of a host-to-host pass.
  constexpr double kRead = 4.0 * sizeof(Real) + 1, kWritten = sizeof(Real) + 1;
  const double seconds_per_quote = std::max(kRead / (tb.host_to_device_pinned_gbps * 1e9),
                                            kWritten / (tb.device_to_host_pinned_gbps * 1e9));
  table.limit_gbps = (kRead + kWritten) / seconds_per_quote / 1e9;
  table.limit_name = "PCIe limit";
  std::vector<Real> volatility(un);
  std::vector<ImpliedVolatilityStatus> status(un);
  const ImpliedVolatilityInputs<Real> in =
      book.inputs(book.price.data(), book.spot.data(), book.strike.data(), book.maturity.data(),
                  book.is_put.data());
  const auto run = [&] {
    finance::implied_volatility(config.context, in, {volatility.data(), status.data()});
  };
  Row row = variant_row(kImpliedVolatilityInfo, shape_of(book), "chunked-pipeline");
  row.description = "pageable arrays staged through pinned double buffers, copies overlapped";
  row.ladder = false;
  poison(volatility, status);
  run();
  Check c = check_volatilities(book, volatility, status,
                               Context::cpu(config.context.cpu_threads).effective_cpu_threads());
  row.verify(c.passed, std::move(c.note));
  row.samples_ms = time_on_host(1, std::min(config.repeat, kHostRepeat), run);
  table.rows.push_back(std::move(row));
  report.tables.push_back(std::move(table));
}

// The CPU backend: the book in host memory on OpenMP threads.
template <class Real>
Row cpu_row(const BenchConfig& config, const Book<Real>& book, const char* precision) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  const auto un = static_cast<std::size_t>(book.n);
  std::vector<Real> volatility(un);
  std::vector<ImpliedVolatilityStatus> status(un);
  const ImpliedVolatilityInputs<Real> in =
      book.inputs(book.price.data(), book.spot.data(), book.strike.data(), book.maturity.data(),
                  book.is_put.data());
  const auto run = [&] {
    finance::implied_volatility(cpu, in, {volatility.data(), status.data()});
  };
  Row row =
      variant_row(kImpliedVolatilityInfo, shape_of(book), fmt::format("cpu-openmp-{}", precision));
  row.description = "OpenMP over rows, the shared arithmetic";
  row.seed_reference = "beyond the seeds (issue 32, CPU)";
  row.ladder = false;
  poison(volatility, status);
  run();
  const int threads = cpu.effective_cpu_threads();
  Check c = check_volatilities(book, volatility, status, threads);
  row.verify(c.passed, std::move(c.note));
  row.samples_ms =
      time_on_host(std::min(config.warmup, 1), std::min(config.repeat, kHostRepeat), run);
  row.note +=
      fmt::format("; {:.2f} M implied volatilities/s per core ({} threads)",
                  static_cast<double>(book.n) / (row.median_ms() * 1e-3) / threads / 1e6, threads);
  return row;
}

}  // namespace

void run_implied_volatility_bench(const BenchConfig& config, Report& report) {
  const std::int64_t n = config.size > 0 ? config.size : kDefaultRows;
  const bool want_float = config.precision != "double";
  const bool want_double = config.precision != "float";
  const bool gpu = config.context.backend == Backend::cuda;
  measure_limits(report, /*with_transfers=*/true);
  if (gpu) {
    cuda::set_device(config.context.cuda_device);
    if (want_float) {
      const Book<float> book = make_book<float>(n, config.context);
      device_resident_table(config, report, book, "float");
      host_table(config, report, book, "float");
    }
    if (want_double) {
      const Book<double> book = make_book<double>(n, config.context);
      device_resident_table(config, report, book, "double");
      host_table(config, report, book, "double");
    }
  }
  const std::int64_t cpu_n = std::min(n, kMaxCpuRows);
  Table cpu_table;
  cpu_table.title = fmt::format(
      "Implied volatility on the CPU backend: {} quotes of a realistic chain (black-scholes)",
      cpu_n);
  cpu_table.element_name = "quotes";
  if (want_float) {
    cpu_table.rows.push_back(cpu_row(config, make_book<float>(cpu_n, config.context), "float"));
  }
  if (want_double) {
    cpu_table.rows.push_back(cpu_row(config, make_book<double>(cpu_n, config.context), "double"));
  }
  report.tables.push_back(std::move(cpu_table));
}

}  // namespace gpukit::bench
