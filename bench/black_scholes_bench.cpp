#include "bench/black_scholes_bench.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "bench/black_scholes_seed_demo.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/core/verify.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/black_scholes_variants.hpp"

namespace gpukit::bench {

namespace {

using finance::BlackScholesInputs;
using finance::BlackScholesOutputs;
using finance::NormalCdf;

constexpr std::int64_t kDefaultOptions = std::int64_t{1} << 26;
constexpr std::int64_t kMaxCpuOptions = std::int64_t{1} << 24;

const char* cdf_name(NormalCdf cdf) {
  switch (cdf) {
    case NormalCdf::erfc:
      return "erfc";
    case NormalCdf::hull_polynomial:
      return "hull-polynomial";
    case NormalCdf::hull_polynomial_fast_math:
      return "hull-polynomial with fast math";
  }
  return "?";
}

// Bytes a priced option moves: spot, strike and maturity read, its side (a byte) read, its price
// written (rate and volatility are the book's).
template <class Real>
constexpr double kBytesPerOption = 3 * sizeof(Real) + 1 + sizeof(Real);

// A book in one precision (calls and puts alternating), with its long-double reference prices.
template <class Real>
struct Workload {
  std::int64_t n = 0;
  std::vector<Real> spot, strike, maturity;
  std::vector<std::uint8_t> is_put;
  Real rate = 0, volatility = 0;
  std::vector<double> reference;        // each option's own side
  double max_spot = 0, max_strike = 0;  // the magnitudes rounding errors scale with

  BlackScholesInputs<Real> inputs(const Real* s, const Real* x, const Real* t,
                                  const std::uint8_t* sides) const {
    return {n, s, x, t, {nullptr, rate}, {nullptr, volatility}, {}, {sides, 0}};
  }
};

template <class Real>
Workload<Real> make_workload(std::int64_t n, const Context& context) {
  const GeneratedBook book = generate_seed_book(n, 20081001);
  Workload<Real> w;
  w.n = n;
  w.spot.assign(book.spot.begin(), book.spot.end());
  w.strike.assign(book.strike.begin(), book.strike.end());
  w.maturity.assign(book.maturity.begin(), book.maturity.end());
  w.is_put = book.is_put;
  w.rate = static_cast<Real>(book.rate);
  w.volatility = static_cast<Real>(book.volatility);
  // The reference prices the very (rounded) inputs the kernels see.
  w.reference.resize(static_cast<std::size_t>(n));
  const int threads = Context::cpu(context.cpu_threads).effective_cpu_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    // The library's independent reference (long double, N from erfc), which no row runs.
    const finance::ReferencePrices r = finance::black_scholes_reference(
        w.spot[k], w.strike[k], w.maturity[k], w.rate, w.volatility, 0.0L);
    w.reference[k] = static_cast<double>(w.is_put[k] ? r.put : r.call);
  }
  w.max_spot = 30.0, w.max_strike = 100.0;  // the generated book's ranges (slide 12)
  return w;
}

// Verification against the long-double reference (computed once per workload): whether the max
// error is within finance::black_scholes_price_bound for this precision and CND, and the note.
struct Verdict {
  bool ok;
  std::string what;
};

template <class Real>
Verdict verify(const Workload<Real>& w, const std::vector<Real>& price, NormalCdf cdf) {
  const ErrorMetrics e = compare<double, Real>(w.reference, price);
  // The library's bound at maturity 0 and zero rates: its scale is then max(S) + max(X), at least
  // every option's own scale.
  const double bound =
      finance::black_scholes_price_bound<Real>(w.max_spot, w.max_strike, 0, 0, 0, cdf);
  const bool ok = e.max_abs <= bound;  // false for NaN
  return {ok,
          fmt::format("{} max|err| {:.2e} L1 {:.2e} vs the long-double reference (bound {:.1e})",
                      ok ? "ok" : "MISMATCH", e.max_abs, e.relative_l1, bound)};
}

// Poison for host outputs: every price NaN, so that an option nobody wrote fails the check.
template <class Real>
void poison(std::vector<Real>& v) {
  std::fill(v.begin(), v.end(), std::numeric_limits<Real>::quiet_NaN());
}

// The book in device memory, priced by each variant with the table's CND: once into poisoned
// outputs (0xFF bytes are NaN, so an option a kernel fails to write fails the check), compared with
// the long-double reference, then timed.
template <class Real>
class DeviceBookWorkload {
 public:
  DeviceBookWorkload(const Workload<Real>& w, cuda::Stream& stream)
      : w_(w),
        stream_(stream),
        spot_(size()),
        strike_(size()),
        maturity_(size()),
        price_(size()),
        is_put_(size()),
        in_(w.inputs(spot_.data(), strike_.data(), maturity_.data(), is_put_.data())),
        out_{price_.data()} {
    spot_.copy_from_host(w.spot);
    strike_.copy_from_host(w.strike);
    maturity_.copy_from_host(w.maturity);
    is_put_.copy_from_host(w.is_put);
  }

  NormalCdf cdf = NormalCdf::erfc;

  StreamHandle stream() const { return stream_.handle(); }
  WorkloadShape shape() const {
    return {.elements = static_cast<double>(w_.n), .value_bytes = sizeof(Real)};
  }
  void launch(const finance::BlackScholesVariant& v) { v.launch(in_, out_, cdf, stream_.handle()); }
  Check check(const finance::BlackScholesVariant& v) {
    cuda::fill_bytes_async(price_.data(), 0xFF, size() * sizeof(Real), stream_.handle());
    launch(v);
    stream_.synchronize();
    std::vector<Real> price(size());
    price_.copy_to_host(price);
    const Verdict verdict = verify(w_, price, cdf);
    return {verdict.ok, verdict.what};
  }

 private:
  std::size_t size() const { return static_cast<std::size_t>(w_.n); }

  const Workload<Real>& w_;
  cuda::Stream& stream_;
  cuda::DeviceBuffer<Real> spot_, strike_, maturity_, price_;
  cuda::DeviceBuffer<std::uint8_t> is_put_;
  BlackScholesInputs<Real> in_;
  BlackScholesOutputs<Real> out_;
};

template <class Real>
void device_tables(const BenchConfig& config, Report& report, const Workload<Real>& w,
                   const char* precision) {
  cuda::Stream stream;
  DeviceBookWorkload<Real> book(w, stream);
  for (NormalCdf cdf :
       {NormalCdf::erfc, NormalCdf::hull_polynomial, NormalCdf::hull_polynomial_fast_math}) {
    // Double has no fast-math intrinsics: that table would repeat the hull-polynomial one.
    if (sizeof(Real) == 8 && cdf == NormalCdf::hull_polynomial_fast_math) continue;
    Table table;
    table.title = fmt::format(
        "Black-Scholes {}: {} options in device memory, calls and puts, each its own side, CND {} "
        "({} bytes/option)",
        precision, w.n, cdf_name(cdf), kBytesPerOption<Real>);
    table.element_name = "options";
    table.limit_gbps = report.copy_bandwidth_gbps;
    table.limit_name = "D2D copy";
    book.cdf = cdf;
    for (const finance::BlackScholesVariant& v : finance::black_scholes_variants()) {
      if (!variant_selected(config, v.info.name)) continue;
      table.rows.push_back(time_variant(config, v, book));
    }
    report.tables.push_back(std::move(table));
  }
}

template <class Real>
void host_table(const BenchConfig& config, Report& report, const Workload<Real>& w,
                const char* precision) {
  const std::int64_t n = w.n;
  const auto un = static_cast<std::size_t>(n);
  const std::size_t bytes = un * sizeof(Real);
  const int repeat = std::min(config.repeat, 5);
  Table table;
  table.title = fmt::format(
      "Black-Scholes {}: {} options host to host (slides 12-15 and the chunked pipeline, {} "
      "bytes/option)",
      precision, n, kBytesPerOption<Real>);
  table.element_name = "options";
  const TransferBandwidth& tb = *report.transfer;
  // Inputs travel host-to-device and outputs device-to-host, each at its measured pinned rate,
  // in parallel at best: that is the PCIe limit of a host-to-host pass.
  constexpr double kReadBytes = 3.0 * sizeof(Real) + 1, kWrittenBytes = sizeof(Real);
  const double seconds_per_option = std::max(kReadBytes / (tb.host_to_device_pinned_gbps * 1e9),
                                             kWrittenBytes / (tb.device_to_host_pinned_gbps * 1e9));
  table.limit_gbps = kBytesPerOption<Real> / seconds_per_option / 1e9;
  table.limit_name = "PCIe limit";

  cuda::DeviceBuffer<Real> d_spot(un), d_strike(un), d_maturity(un), d_price(un);
  cuda::DeviceBuffer<std::uint8_t> d_is_put(un);
  const BlackScholesInputs<Real> d_in =
      w.inputs(d_spot.data(), d_strike.data(), d_maturity.data(), d_is_put.data());
  const BlackScholesOutputs<Real> d_out{d_price.data()};
  std::vector<Real> price(un);
  cuda::Stream stream;

  auto synchronous_pass = [&](const Real* s, const Real* x, const Real* t,
                              const std::uint8_t* sides, Real* p) {
    cuda::copy_to_device(d_spot.data(), s, bytes);
    cuda::copy_to_device(d_strike.data(), x, bytes);
    cuda::copy_to_device(d_maturity.data(), t, bytes);
    cuda::copy_to_device(d_is_put.data(), sides, un);
    finance::price_black_scholes_on_device(d_in, d_out, stream.handle());
    stream.synchronize();
    cuda::copy_to_host(p, d_price.data(), bytes);
  };

  auto add_row = [&](std::string name, std::string description, std::string seed_ref,
                     std::vector<double> samples) {
    Row row;
    row.variant = std::move(name);
    row.description = std::move(description);
    row.seed_reference = std::move(seed_ref);
    row.elements = static_cast<double>(n);
    row.bytes = kBytesPerOption<Real> * static_cast<double>(n);
    row.samples_ms = std::move(samples);
    const Verdict verdict = verify(w, price, NormalCdf::erfc);
    row.verify(verdict.ok, verdict.what);
    table.rows.push_back(std::move(row));
    poison(price);  // the next row starts from poison
  };
  poison(price);

  add_row("pageable-sync", "blocking copies from pageable memory, kernel, copies back",
          "000 slide 12", time_on_host(1, repeat, [&] {
            synchronous_pass(w.spot.data(), w.strike.data(), w.maturity.data(), w.is_put.data(),
                             price.data());
          }));
  {
    cuda::PinnedBuffer<Real> pinned(4 * un);
    cuda::PinnedBuffer<std::uint8_t> pinned_sides(un);
    std::fill(pinned.data() + 3 * un, pinned.data() + 4 * un,
              std::numeric_limits<Real>::quiet_NaN());
    std::copy(w.spot.begin(), w.spot.end(), pinned.data());
    std::copy(w.strike.begin(), w.strike.end(), pinned.data() + un);
    std::copy(w.maturity.begin(), w.maturity.end(), pinned.data() + 2 * un);
    std::copy(w.is_put.begin(), w.is_put.end(), pinned_sides.data());
    const auto samples = time_on_host(1, repeat, [&] {
      synchronous_pass(pinned.data(), pinned.data() + un, pinned.data() + 2 * un,
                       pinned_sides.data(), pinned.data() + 3 * un);
    });
    std::copy(pinned.data() + 3 * un, pinned.data() + 4 * un, price.begin());
    add_row("pinned-sync", "the same blocking copies from page-locked memory", "000 slide 15",
            samples);
  }
  add_row("chunked-pipeline",
          "pageable arrays staged through pinned double buffers, copies overlapped with compute",
          "beyond the seed", time_on_host(1, repeat, [&] {
            finance::price_black_scholes(
                config.context,
                w.inputs(w.spot.data(), w.strike.data(), w.maturity.data(), w.is_put.data()),
                BlackScholesOutputs<Real>{price.data()});
          }));
  report.tables.push_back(std::move(table));
}

// The CPU backend's row, in the registry shape (harness.hpp, HostVariant): the book in host
// memory priced on OpenMP threads with the accurate CND.
template <class Real>
using CpuPricer = void (*)(const Context&, const BlackScholesInputs<Real>&,
                           const BlackScholesOutputs<Real>&);

template <class Real>
void cpu_price(const Context& cpu, const BlackScholesInputs<Real>& in,
               const BlackScholesOutputs<Real>& out) {
  finance::price_black_scholes(cpu, in, out);
}

template <class Real>
constexpr HostVariant<CpuPricer<Real>> kCpuOpenmp = {
    .info = {.name = "cpu-openmp",
             .description = "OpenMP over options, the shared arithmetic, erfc CND",
             .seed_reference = "000 slide 12 (CPU)",
             .traffic = {.reads_per_element = 3,
                         .writes_per_element = 1,
                         .extra_read_bytes_per_element = 1},
             .deterministic = true},
    .launch = cpu_price<Real>,
};

// The book in host memory, priced once into poisoned outputs and compared with the long-double
// reference, then timed.
template <class Real>
class CpuBookWorkload {
 public:
  CpuBookWorkload(const Workload<Real>& w, const Context& cpu)
      : w_(w), cpu_(cpu), price_(static_cast<std::size_t>(w.n)) {}

  WorkloadShape shape() const {
    return {.elements = static_cast<double>(w_.n), .value_bytes = sizeof(Real)};
  }
  void launch(const HostVariant<CpuPricer<Real>>& v) {
    v.launch(cpu_,
             w_.inputs(w_.spot.data(), w_.strike.data(), w_.maturity.data(), w_.is_put.data()),
             BlackScholesOutputs<Real>{price_.data()});
  }
  Check check(const HostVariant<CpuPricer<Real>>& v) {
    poison(price_);
    launch(v);
    const Verdict verdict = verify(w_, price_, NormalCdf::erfc);
    return {verdict.ok, verdict.what};
  }

 private:
  const Workload<Real>& w_;
  Context cpu_;
  std::vector<Real> price_;
};

template <class Real>
Row cpu_row(const BenchConfig& config, const Workload<Real>& w, const char* precision) {
  const Context cpu = Context::cpu(config.context.cpu_threads);
  CpuBookWorkload<Real> work(w, cpu);
  Row row = time_variant(config, kCpuOpenmp<Real>, work, fmt::format("cpu-openmp-{}", precision));
  const int threads = cpu.effective_cpu_threads();
  row.note += fmt::format("; {:.1f} M options/s per core ({} threads)",
                          w.n / (row.median_ms() * 1e-3) / threads / 1e6, threads);
  return row;
}

}  // namespace

void run_black_scholes_bench(const BenchConfig& config, Report& report) {
  const std::int64_t n = config.size > 0 ? config.size : kDefaultOptions;
  const bool want_float = config.precision != "double";
  const bool want_double = config.precision != "float";
  const bool gpu = config.context.backend == Backend::cuda;
  measure_limits(report, /*with_transfers=*/true);

  if (gpu) {
    cuda::set_device(config.context.cuda_device);
    if (want_float) {
      const Workload<float> w = make_workload<float>(n, config.context);
      device_tables(config, report, w, "float");
      host_table(config, report, w, "float");
    }
    if (want_double) {
      const Workload<double> w = make_workload<double>(n, config.context);
      device_tables(config, report, w, "double");
      host_table(config, report, w, "double");
    }
  }
  const std::int64_t cpu_n = std::min(n, kMaxCpuOptions);
  Table cpu_table;
  cpu_table.title = fmt::format(
      "Black-Scholes on the CPU backend: {} options, calls and puts, each its own side", cpu_n);
  cpu_table.element_name = "options";
  if (want_float)
    cpu_table.rows.push_back(cpu_row(config, make_workload<float>(cpu_n, config.context), "float"));
  if (want_double)
    cpu_table.rows.push_back(
        cpu_row(config, make_workload<double>(cpu_n, config.context), "double"));
  report.tables.push_back(std::move(cpu_table));
}

}  // namespace gpukit::bench
