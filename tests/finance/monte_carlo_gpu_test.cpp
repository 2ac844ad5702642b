// Monte Carlo on the GPU alone (the scenarios of both backends are in monte_carlo_test.cpp): the
// same random numbers as the CPU (prices equal within a stated rounding bound), the same bits for
// every launch shape, block size and grid size and for every registry variant, the vendor
// reference, and prices within 4 standard errors of the closed forms at large path counts.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/cuda/monte_carlo_curand_reference.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/finance/monte_carlo_variants.hpp"
#include "monte_carlo_test_support.hpp"

namespace gpukit::finance {
namespace {

using testing::barrier_rows;
using testing::McBook;
using testing::McRow;
using testing::mixed_rows;
using testing::random_european_rows;
using testing::same_bits;

// CPU vs GPU on the same numbers. Double: the paths differ only by the last bits of exp, log,
// sin and cos, so prices agree to about 1e-13 relative (bound 1e-10 of price + 1e-12). Float: the
// GPU uses the hardware's approximate log2 / sqrt / sin / cos / exp2 (about 2^-21), the CPU the
// correctly rounded transform; a discrete barrier decision can flip for a path that ends a step
// within that rounding of the barrier. Bound: 2e-4 of the price + 0.02 standard errors.
TEST(MonteCarloGpu, SameRandomNumbersAsTheCpu) {
  GPUKIT_REQUIRE_GPU();
  const std::vector<McRow> rows = mixed_rows();
  const McBook book(rows);
  for (Precision precision : {Precision::float64, Precision::float32}) {
    for (BarrierMonitoring monitoring :
         {BarrierMonitoring::discrete, BarrierMonitoring::continuous}) {
      for (int variant = 0; variant < 3; ++variant) {
        MonteCarloOptions options;
        options.paths = 20000 + 6;
        options.precision = precision;
        options.monitoring = monitoring;
        options.antithetic = variant >= 1;
        options.control_variate = variant == 2;
        options.greeks = variant == 2;
        const MonteCarloBookResult cpu =
            price_monte_carlo_book(Context::cpu(), book.view(), options);
        const MonteCarloBookResult gpu =
            price_monte_carlo_book(Context::cuda(0), book.view(), options);
        double worst_relative = 0, worst_in_se = 0;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const double diff = std::abs(gpu.price[i] - cpu.price[i]);
          const double bound = precision == Precision::float64
                                   ? 1e-10 * std::abs(cpu.price[i]) + 1e-12
                                   : 2e-4 * std::abs(cpu.price[i]) + 0.02 * cpu.std_error[i];
          EXPECT_LE(diff, bound) << "row " << i << " cpu " << cpu.price[i] << " gpu "
                                 << gpu.price[i];
          EXPECT_NEAR(gpu.std_error[i], cpu.std_error[i], bound + 1e-3 * cpu.std_error[i]);
          if (cpu.price[i] > 0) worst_relative = std::max(worst_relative, diff / cpu.price[i]);
          if (cpu.std_error[i] > 0) worst_in_se = std::max(worst_in_se, diff / cpu.std_error[i]);
          if (options.greeks && precision == Precision::float64) {
            // The Greeks' books differ as the prices do; gamma's second difference of barrier
            // prices divides that by h^2 = 1: within 1e-9 in double.
            EXPECT_NEAR(gpu.delta[i], cpu.delta[i], 1e-9) << "row " << i;
            EXPECT_NEAR(gpu.gamma[i], cpu.gamma[i], 1e-9) << "row " << i;
            EXPECT_NEAR(gpu.vega[i], cpu.vega[i], 1e-9) << "row " << i;
          }
        }
        std::printf(
            "cpu-vs-gpu %s %s antithetic=%d control=%d: max |gpu-cpu|/price %.3e, "
            "max |gpu-cpu|/std_error %.3e\n",
            precision == Precision::float64 ? "double" : "float",
            monitoring == BarrierMonitoring::discrete ? "discrete" : "continuous",
            int(options.antithetic), int(options.control_variate), worst_relative, worst_in_se);
      }
    }
  }
}

template <class Real>
std::vector<mc::Moments<double>> device_moments(const std::vector<mc::PathParams<Real>>& params,
                                                const mc::DeviceRun& run,
                                                const mc::LaunchConfig& config) {
  cuda::DeviceBuffer<mc::PathParams<Real>> device_params(params.size());
  device_params.copy_from_host(params);
  cuda::DeviceBuffer<mc::Moments<double>> moments(params.size());
  cuda::fill_bytes_async(moments.data(), 0xA5, params.size() * sizeof(mc::Moments<double>),
                         nullptr);
  cuda::synchronize_device();  // the poison lands before the kernels of the non-blocking stream
  cuda::DeviceBuffer<unsigned char> workspace(static_cast<std::size_t>(
      std::max<std::int64_t>(1, mc::workspace_bytes(run, config.workspace_tiles))));
  cuda::Stream stream;
  mc::launch_monte_carlo<Real>(device_params.data(), run, moments.data(), workspace.data(),
                               stream.handle(), config);
  stream.synchronize();
  std::vector<mc::Moments<double>> host(params.size());
  moments.copy_to_host(host);
  return host;
}

template <class Real>
void check_launch_shapes() {
  const std::vector<McRow> rows = mixed_rows();
  const McBook book(rows);
  std::vector<mc::PathParams<Real>> params;
  for (std::size_t i = 0; i < rows.size(); i += 7) {  // a few of each kind
    const mc::OptionInputs in = mc::option_inputs<Real>(book.view(), std::int64_t(i));
    params.push_back(
        mc::path_params<Real>(in, static_cast<std::uint32_t>(i),
                              i % 2 ? BarrierMonitoring::continuous : BarrierMonitoring::discrete));
  }
  const std::vector<std::int64_t> sizes =
      gpukit::testing::quick_tests() ? std::vector<std::int64_t>{1, 33, 5000}
                                     : std::vector<std::int64_t>{1, 31, 32, 1023, 1025, 20001};
  const mc::LaunchConfig configs[] = {
      {mc::LaunchShape::per_option, 32, 0},
      {mc::LaunchShape::per_option, 96, 0},
      {mc::LaunchShape::per_option, 256, 0},
      {mc::LaunchShape::multi_block, 256, 0},
      {mc::LaunchShape::multi_block, 64, 1},
      {mc::LaunchShape::multi_block, 128, 0},
      {mc::LaunchShape::multi_block, 160, 7},
      {mc::LaunchShape::automatic, 256, 0},
      {mc::LaunchShape::staged, 256, 0},
      {mc::LaunchShape::staged, 256, 2},
      // A workspace of a few tiles: options in groups, or one option's tiles in aligned chunks
      // merged to their tree nodes (issue 18: memory bounded whatever the paths), same bits.
      {mc::LaunchShape::automatic, 256, 0, 1},
      {mc::LaunchShape::multi_block, 128, 0, 2},
      {mc::LaunchShape::staged, 256, 0, 4},
      {mc::LaunchShape::automatic, 256, 0, 16}};
  for (std::int64_t samples : sizes) {
    for (int flags = 0; flags < 4; ++flags) {
      const mc::DeviceRun run{static_cast<std::int64_t>(params.size()), samples, 77,
                              (flags & 1) != 0, (flags & 2) != 0};
      const std::vector<mc::Moments<double>> reference = device_moments(params, run, configs[0]);
      for (const mc::LaunchConfig& config : configs) {
        const std::vector<mc::Moments<double>> other = device_moments(params, run, config);
        EXPECT_EQ(std::memcmp(reference.data(), other.data(),
                              reference.size() * sizeof(mc::Moments<double>)),
                  0)
            << "samples " << samples << " flags " << flags << " shape " << int(config.shape)
            << " threads " << config.threads_per_block << " max blocks " << config.max_blocks;
      }
      // And the moments are the CPU's up to rounding (counts exactly).
      const std::vector<mc::Moments<double>> cpu =
          mc::cpu_moments(params, samples, 77, run.antithetic, run.control, 0);
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_EQ(cpu[i].count, reference[i].count);
        EXPECT_NEAR(cpu[i].mean_x, reference[i].mean_x,
                    (sizeof(Real) == 8 ? 1e-12 : 2e-4) * (std::abs(cpu[i].mean_x) + 1e-3))
            << "samples " << samples << " option " << i;
      }
    }
  }
}

TEST(MonteCarloGpu, SameBitsForEveryLaunchShapeBlockAndGridSize) {
  GPUKIT_REQUIRE_GPU();
  check_launch_shapes<double>();
  check_launch_shapes<float>();
}

// The kernels specialized for one path kind (DeviceRun::kind) give the bits of the kernel that
// dispatches per tile, in every shape.
template <class Real>
void check_kind_specializations() {
  std::vector<McRow> european = random_european_rows(3, 11);
  std::vector<McRow> several_steps = random_european_rows(3, 12);
  for (McRow& r : several_steps) r.steps = 5;
  std::vector<McRow> barriers = barrier_rows(7);
  for (McRow& r : barriers) r.steps = 9;
  const std::int64_t samples = gpukit::testing::quick_tests() ? 4100 : 20001;
  for (const auto& [rows, monitoring] : {std::pair{european, BarrierMonitoring::discrete},
                                         std::pair{several_steps, BarrierMonitoring::discrete},
                                         std::pair{barriers, BarrierMonitoring::discrete},
                                         std::pair{barriers, BarrierMonitoring::continuous}}) {
    const McBook book(rows);
    std::vector<mc::PathParams<Real>> params;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const mc::OptionInputs in = mc::option_inputs<Real>(book.view(), std::int64_t(i));
      params.push_back(mc::path_params<Real>(in, static_cast<std::uint32_t>(i), monitoring));
    }
    const mc::PathKind kind = mc::common_path_kind(params.data(), params.size());
    ASSERT_NE(kind, mc::PathKind::mixed);
    for (int flags = 0; flags < 4; ++flags) {
      mc::DeviceRun run{static_cast<std::int64_t>(params.size()), samples, 5, (flags & 1) != 0,
                        (flags & 2) != 0};
      const std::vector<mc::Moments<double>> reference =
          device_moments(params, run, {mc::LaunchShape::per_option, 128, 0});
      run.kind = kind;
      for (const mc::LaunchConfig& config :
           {mc::LaunchConfig{mc::LaunchShape::multi_block, 256, 0},
            mc::LaunchConfig{mc::LaunchShape::staged, 256, 0},
            mc::LaunchConfig{mc::LaunchShape::automatic, 256, 0}}) {
        const std::vector<mc::Moments<double>> other = device_moments(params, run, config);
        EXPECT_EQ(std::memcmp(reference.data(), other.data(),
                              reference.size() * sizeof(mc::Moments<double>)),
                  0)
            << "kind " << int(kind) << " flags " << flags << " shape " << int(config.shape);
      }
    }
  }
}

TEST(MonteCarloGpu, KernelsSpecializedForAPathKindGiveTheSameBits) {
  GPUKIT_REQUIRE_GPU();
  check_kind_specializations<double>();
  check_kind_specializations<float>();
}

// The benchmark's vendor reference (cuRAND device API) prices correctly: within 5 standard errors
// of Black-Scholes, and of the BGK-shifted closed form (with 0.5% for the shift) for a 252-date
// down-and-out call.
TEST(MonteCarloGpu, CurandReferenceKernelPricesCorrectly) {
  GPUKIT_REQUIRE_GPU();
  McRow row;  // S = K = 100, T = 1, r = 5%, q = 2%, sigma = 25%
  for (const bool barrier : {false, true}) {
    row.type = barrier ? BarrierType::down_out : BarrierType::none;
    row.barrier = 90;
    row.steps = barrier ? 252 : 1;
    const McBook book({row});
    const mc::OptionInputs in = mc::option_inputs<float>(book.view(), 0);
    const mc::PathParams<float> p = mc::path_params<float>(in, 0, BarrierMonitoring::discrete);
    mc::CurandReferenceProblem problem;
    const bool quick = gpukit::testing::quick_tests();
    problem.paths = (barrier ? (quick ? 1 << 14 : 1 << 18) : (quick ? 1 << 18 : 1 << 22)) +
                    3;  // not a multiple of 4: rounded down
    problem.seed = 99;
    problem.drift_dt = p.drift_dt, problem.vol_sqrt_dt = p.vol_sqrt_dt;
    problem.strike_over_spot = p.strike_over_spot;
    problem.steps = row.steps;
    problem.down_and_out = barrier;
    problem.log_barrier = p.log_barrier;
    cuda::DeviceBuffer<double> sums(2);
    cuda::fill_bytes_async(sums.data(), 0, mc::kCurandReferenceSumsBytes, nullptr);
    cuda::synchronize_device();
    mc::launch_curand_reference(problem, sums.data(), nullptr);
    cuda::synchronize_device();
    std::vector<double> host(2);
    sums.copy_to_host(host);
    const double n = static_cast<double>(problem.paths / 4 * 4);
    const double scale = in.spot * std::exp(-in.rate * in.maturity);
    const double price = scale * host[0] / n;
    const double std_error =
        scale * std::sqrt((host[1] / n - (host[0] / n) * (host[0] / n)) / (n - 1));
    const double shifted = barrier ? discrete_barrier_shift(row.type, row.barrier, row.volatility,
                                                            row.maturity, row.steps)
                                   : 0.0;
    const double reference =
        barrier_price_analytic(row.type, row.put, row.spot, row.strike, shifted, row.maturity,
                               row.rate, row.dividend, row.volatility);
    EXPECT_GT(std_error, 0);
    EXPECT_LE(std::abs(price - reference), 5 * std_error + (barrier ? 5e-3 * reference : 0))
        << (barrier ? "barrier " : "european ") << price << " +- " << std_error << " vs "
        << reference;
  }
}

TEST(MonteCarloGpu, ManyPathsWithinFourStandardErrorsOfTheClosedForms) {
  GPUKIT_REQUIRE_GPU();
  const std::int64_t paths = gpukit::testing::quick_tests() ? 1 << 16 : 1 << 22;
  std::vector<McRow> rows = barrier_rows(1);
  for (McRow& r : rows) r.steps = 64;
  for (Precision precision : {Precision::float64, Precision::float32}) {
    MonteCarloOptions options;
    options.paths = paths;
    options.precision = precision;
    options.monitoring = BarrierMonitoring::continuous;
    const McBook book(rows);
    const MonteCarloBookResult r = price_monte_carlo_book(Context::cuda(0), book.view(), options);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const McRow& row = rows[i];
      const double reference =
          barrier_price_analytic(row.type, row.put, row.spot, row.strike, row.barrier, row.maturity,
                                 row.rate, row.dividend, row.volatility);
      EXPECT_LE(std::abs(r.price[i] - reference), 4 * r.std_error[i] + 1e-5 * reference)
          << "row " << i << " " << r.price[i] << " +- " << r.std_error[i] << " vs " << reference;
    }
  }
}

// Every registry variant that prices any book gives price_monte_carlo_book's bits on a CUDA
// context (the launch shape never changes a bit), each result poisoned before its launch, on a
// mixed book keyed by ids, in both precisions, plain and with both variance reductions.
TEST(MonteCarloGpu, EveryVariantGivesTheBitsOfTheApi) {
  GPUKIT_REQUIRE_GPU();
  const std::vector<McRow> rows = mixed_rows();
  McBook book(rows);
  std::vector<std::uint64_t> streams;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    streams.push_back(monte_carlo_stream_key("trade-" + std::to_string(i)));
  }
  MonteCarloBookView view = book.view();
  view.stream = streams.data();
  cuda::Stream stream;
  int variants_checked = 0;
  for (const MonteCarloVariant& variant : monte_carlo_variants()) {
    if (!variant.prices_any_book) continue;
    ++variants_checked;
    for (Precision precision : {Precision::float64, Precision::float32}) {
      for (const bool reduced : {false, true}) {
        MonteCarloOptions options;
        options.paths = 20000 + 6;
        options.precision = precision;
        options.antithetic = reduced;
        options.control_variate = reduced;
        options.variance_reduction_factors = reduced;
        const MonteCarloBookResult api = price_monte_carlo_book(Context::cuda(0), view, options);
        const std::unique_ptr<MonteCarloDeviceRun> run = variant.prepare(view, options);
        run->poison(stream.handle());
        run->launch(stream.handle());
        const MonteCarloBookResult r = run->result(stream.handle());
        const std::string what = std::string(variant.info.name) +
                                 (precision == Precision::float64 ? " double" : " float") +
                                 (reduced ? " antithetic+control" : "");
        ASSERT_EQ(r.price.size(), rows.size()) << what;
        testing::expect_same_result(r, api, what);
      }
    }
  }
  EXPECT_EQ(variants_checked, 4);  // per-option, multi-block, staged, automatic
}

// The registry's vendor row prices its one problem within 5 standard errors of Black-Scholes and
// refuses any other book.
TEST(MonteCarloGpu, TheVendorVariantPricesItsProblemAndRefusesOthers) {
  GPUKIT_REQUIRE_GPU();
  const MonteCarloVariant& vendor = find_monte_carlo_variant("curand-philox");
  ASSERT_TRUE(vendor.info.vendor());
  McRow row;  // S = K = 100, T = 1, r = 5%, q = 2%, sigma = 25%
  McBook book({row});
  MonteCarloOptions options;
  options.paths = gpukit::testing::quick_tests() ? 1 << 18 : 1 << 22;
  options.precision = Precision::float32;
  cuda::Stream stream;
  const std::unique_ptr<MonteCarloDeviceRun> run = vendor.prepare(book.view(), options);
  run->poison(stream.handle());
  run->launch(stream.handle());
  const MonteCarloBookResult r = run->result(stream.handle());
  const double reference =
      barrier_price_analytic(BarrierType::none, false, row.spot, row.strike, 0, row.maturity,
                             row.rate, row.dividend, row.volatility);
  ASSERT_EQ(r.price.size(), 1u);
  EXPECT_GT(r.std_error[0], 0);
  EXPECT_LE(std::abs(r.price[0] - reference), 5 * r.std_error[0])
      << r.price[0] << " +- " << r.std_error[0] << " vs " << reference;

  MonteCarloOptions in_double = options;
  in_double.precision = Precision::float64;
  EXPECT_THROW(vendor.prepare(book.view(), in_double), InvalidInput);
  row.put = true;
  const McBook puts({row});
  EXPECT_THROW(vendor.prepare(puts.view(), options), InvalidInput);
  const McBook two({McRow{}, McRow{}});
  EXPECT_THROW(vendor.prepare(two.view(), options), InvalidInput);
}

// ---- The device-data API --------------------------------------------------------------------

// A book's arrays copied to device memory, and the view of them (market parameters given once
// stay scalars).
class DeviceMcBook {
 public:
  explicit DeviceMcBook(const MonteCarloBookView& host) : count_(host.count), view_(host) {
    view_.is_put = to_device(host.is_put);
    view_.spot = to_device(host.spot);
    view_.strike = to_device(host.strike);
    view_.maturity = to_device(host.maturity);
    view_.rate.values = to_device(host.rate.values);
    view_.volatility.values = to_device(host.volatility.values);
    view_.dividend.values = to_device(host.dividend.values);
    view_.barrier_type = to_device(host.barrier_type);
    view_.barrier = to_device(host.barrier);
    view_.steps = to_device(host.steps);
    view_.stream = to_device(host.stream);
  }
  const MonteCarloBookView& view() const { return view_; }

 private:
  template <class T>
  const T* to_device(const T* host) {
    if (host == nullptr) return nullptr;
    const std::size_t bytes = static_cast<std::size_t>(count_) * sizeof(T);
    cuda::DeviceBuffer<unsigned char>& buffer =
        buffers_.emplace_back(std::max<std::size_t>(bytes, 1));
    cuda::copy_to_device(buffer.data(), host, bytes);
    return reinterpret_cast<const T*>(buffer.data());
  }

  std::int64_t count_;
  std::vector<cuda::DeviceBuffer<unsigned char>> buffers_;
  MonteCarloBookView view_;
};

// Every output of price_monte_carlo_book_on_device in one device allocation of `rows` entries
// each (at least one, so that a book of zero rows still has arrays to leave untouched).
class DeviceMcOutputs {
 public:
  static constexpr int kArrays = 10;
  explicit DeviceMcOutputs(std::int64_t rows)
      : rows_(std::max<std::int64_t>(rows, 1)), all_(static_cast<std::size_t>(kArrays * rows_)) {}

  /// The arrays `options` computes; the others null.
  MonteCarloDeviceOutputs outputs(const MonteCarloOptions& options) const {
    MonteCarloDeviceOutputs out;
    out.price = array(0), out.std_error = array(1), out.ci_low = array(2), out.ci_high = array(3);
    out.paths = array(4);
    if (options.greeks) out.delta = array(5), out.vega = array(6), out.gamma = array(9);
    if (options.variance_reduction_factors && options.antithetic) out.vrf_antithetic = array(7);
    if (options.variance_reduction_factors && options.control_variate) out.vrf_control = array(8);
    return out;
  }
  /// 0xFF bytes (a NaN) in every element of every array.
  void poison(StreamHandle stream) const {
    cuda::fill_bytes_async(all_.data(), 0xFF, all_.size_bytes(), stream);
  }
  /// Array `k`, read after everything queued so far on any stream (a poison queued on a
  /// non-blocking stream before a call that threw included).
  std::vector<double> read(int k) const {
    cuda::synchronize_device();
    std::vector<double> host(static_cast<std::size_t>(rows_));
    cuda::copy_to_host(host.data(), array(k), host.size() * sizeof(double));
    return host;
  }

 private:
  double* array(int k) const { return all_.data() + k * rows_; }
  std::int64_t rows_;
  cuda::DeviceBuffer<double> all_;
};

bool all_poison(const std::vector<double>& values) {
  std::vector<double> poison(values.size());
  std::memset(poison.data(), 0xFF, poison.size() * sizeof(double));
  return same_bits(values, poison);
}

// Array k of `out` against the host API's field: bitwise equal, every element (poisoned before the
// call, so an element never written fails); an array the options do not compute stays poisoned.
void expect_outputs_are_the_host_apis(const DeviceMcOutputs& out, const MonteCarloBookResult& api,
                                      const std::string& what) {
  const std::vector<double>* fields[DeviceMcOutputs::kArrays] = {
      &api.price, &api.std_error, &api.ci_low,         &api.ci_high,     &api.paths,
      &api.delta, &api.vega,      &api.vrf_antithetic, &api.vrf_control, &api.gamma};
  const std::size_t rows = api.price.size();
  for (int k = 0; k < DeviceMcOutputs::kArrays; ++k) {
    std::vector<double> device = out.read(k);
    device.resize(rows);
    if (fields[k]->empty()) {
      EXPECT_TRUE(all_poison(device)) << what << ": array " << k << " written but not asked for";
      continue;
    }
    ASSERT_EQ(fields[k]->size(), rows) << what;
    for (std::size_t i = 0; i < rows; ++i) {
      EXPECT_FALSE(std::isnan((*fields[k])[i])) << what << ": array " << k << " row " << i;
    }
    EXPECT_TRUE(same_bits(device, *fields[k])) << what << ": array " << k;
  }
}

// The device-data API gives the host API's bits on a CUDA context, for every output: a book of
// every path kind (European calls and puts, the four barrier types on calls and puts, a barrier
// breached at the start), both monitorings and precisions, plain and with each variance reduction,
// the variance reduction factors and the Greeks, rows keyed by their number or by trade ids, per
// option or book-wide market parameters; on a non-blocking stream of the caller's.
TEST(MonteCarloGpu, DeviceDataApiGivesTheBitsOfTheHostApi) {
  GPUKIT_REQUIRE_GPU();
  const std::vector<McRow> rows = mixed_rows();
  const McBook book(rows);
  std::vector<std::uint64_t> streams;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    streams.push_back(monte_carlo_stream_key("trade-" + std::to_string(i)));
  }
  cuda::Stream stream;
  const DeviceMcOutputs out(static_cast<std::int64_t>(rows.size()));
  for (const bool keyed : {false, true}) {
    MonteCarloBookView view = book.view();
    if (keyed) {
      view.stream = streams.data();
      view.rate = {nullptr, 0.03};  // book-wide
      view.dividend = {nullptr, 0.01};
    }
    const DeviceMcBook device_book(view);
    for (Precision precision : {Precision::float64, Precision::float32}) {
      for (BarrierMonitoring monitoring :
           {BarrierMonitoring::discrete, BarrierMonitoring::continuous}) {
        for (int mode = 0; mode < 4; ++mode) {
          MonteCarloOptions options;
          options.paths = 20000 + 6;
          options.seed = 11 + static_cast<std::uint64_t>(mode);
          options.precision = precision;
          options.monitoring = monitoring;
          options.antithetic = mode == 1 || mode == 3;
          options.control_variate = mode >= 2;
          options.greeks = mode >= 2;
          options.variance_reduction_factors = mode >= 1;
          options.first_option_index = mode == 3 ? 7 : 0;
          const std::string what =
              std::string(keyed ? "ids, book-wide rate" : "row numbers") +
              (precision == Precision::float64 ? " double" : " float") +
              (monitoring == BarrierMonitoring::continuous ? " continuous" : " discrete") +
              " mode " + std::to_string(mode);
          const MonteCarloBookResult api = price_monte_carlo_book(Context::cuda(0), view, options);
          out.poison(stream.handle());
          price_monte_carlo_book_on_device(device_book.view(), out.outputs(options),
                                           stream.handle(), options);
          expect_outputs_are_the_host_apis(out, api, what);
        }
      }
    }
  }
}

// On the legacy default stream too, and after the work queued before it on the caller's stream:
// the spots are written by an asynchronous copy from pinned memory just before the call, over a
// poisoned array, so a read that did not wait for the stream would price NaN spots.
TEST(MonteCarloGpu, DeviceDataApiRunsAfterTheWorkQueuedOnTheStream) {
  GPUKIT_REQUIRE_GPU();
  const std::vector<McRow> rows = mixed_rows();
  const McBook book(rows);
  MonteCarloOptions options;
  options.paths = 20000 + 6;
  options.greeks = true;
  const MonteCarloBookResult api = price_monte_carlo_book(Context::cuda(0), book.view(), options);
  const DeviceMcBook device_book(book.view());
  const DeviceMcOutputs out(static_cast<std::int64_t>(rows.size()));
  cuda::PinnedBuffer<double> spots(rows.size());
  std::copy(book.spot.begin(), book.spot.end(), spots.data());
  cuda::Stream own;
  for (const StreamHandle stream : {StreamHandle{nullptr}, own.handle()}) {
    const std::string what = stream == nullptr ? "default stream" : "non-blocking stream";
    auto* device_spot = const_cast<double*>(device_book.view().spot);
    cuda::fill_bytes_async(device_spot, 0xFF, rows.size() * sizeof(double), stream);
    cuda::copy_to_device_async(device_spot, spots.data(), rows.size() * sizeof(double), stream);
    out.poison(stream);
    price_monte_carlo_book_on_device(device_book.view(), out.outputs(options), stream, options);
    expect_outputs_are_the_host_apis(out, api, what);
  }
}

// A book of zero rows: nothing is read or written (the outputs keep their poison) and nothing
// thrown, as the host API returns an empty result.
TEST(MonteCarloGpu, DeviceDataApiOnZeroOptionsWritesNothing) {
  GPUKIT_REQUIRE_GPU();
  const McBook empty(std::vector<McRow>{});
  ASSERT_EQ(empty.view().count, 0);
  const DeviceMcBook device_book(empty.view());
  const DeviceMcOutputs out(0);
  cuda::Stream stream;
  MonteCarloOptions options;
  options.greeks = true;
  out.poison(stream.handle());
  price_monte_carlo_book_on_device(device_book.view(), out.outputs(options), stream.handle(),
                                   options);
  for (int k = 0; k < DeviceMcOutputs::kArrays; ++k) EXPECT_TRUE(all_poison(out.read(k))) << k;
}

std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "no InvalidInput";
}

// A bad row in device memory (a barrier row whose barrier is not > 0, a step count of 0) and bad
// options give the host API's InvalidInput, message for message; an output the options do not
// compute is refused; the outputs stay untouched.
TEST(MonteCarloGpu, DeviceDataApiRefusesWhatTheHostApiRefuses) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  McRow barrier_row;
  barrier_row.type = BarrierType::up_out, barrier_row.barrier = 120;
  std::vector<std::vector<McRow>> bad_books(3, {McRow{}, barrier_row, McRow{}});
  bad_books[0][1].barrier = 0;
  bad_books[1][1].barrier = -5;
  bad_books[2][2].steps = 0;
  MonteCarloOptions options;
  options.paths = 1000;
  for (const std::vector<McRow>& rows : bad_books) {
    const McBook book(rows);
    const DeviceMcBook device_book(book.view());
    const DeviceMcOutputs out(3);
    out.poison(stream.handle());
    const std::string host =
        message_of([&] { price_monte_carlo_book(Context::cuda(0), book.view(), options); });
    const std::string device = message_of([&] {
      price_monte_carlo_book_on_device(device_book.view(), out.outputs(options), stream.handle(),
                                       options);
    });
    EXPECT_NE(host, "no InvalidInput");
    EXPECT_EQ(device, host);
    for (int k = 0; k < DeviceMcOutputs::kArrays; ++k) EXPECT_TRUE(all_poison(out.read(k))) << k;
  }

  const McBook book({McRow{}, barrier_row});
  const DeviceMcBook device_book(book.view());
  const DeviceMcOutputs out(2);
  MonteCarloOptions odd = options;
  odd.paths = 1001;
  odd.antithetic = true;
  EXPECT_EQ(message_of([&] {
              price_monte_carlo_book_on_device(device_book.view(), out.outputs(odd),
                                               stream.handle(), odd);
            }),
            message_of([&] { price_monte_carlo_book(Context::cuda(0), book.view(), odd); }));
  MonteCarloOptions with_greeks = options;
  with_greeks.greeks = true;
  with_greeks.variance_reduction_factors = true;
  with_greeks.antithetic = with_greeks.control_variate = true;
  const MonteCarloDeviceOutputs every_output = out.outputs(with_greeks);
  EXPECT_THROW(
      price_monte_carlo_book_on_device(device_book.view(), every_output, stream.handle(), options),
      InvalidInput);
  MonteCarloOptions no_vrf = with_greeks;
  no_vrf.variance_reduction_factors = false;
  EXPECT_THROW(
      price_monte_carlo_book_on_device(device_book.view(), every_output, stream.handle(), no_vrf),
      InvalidInput);
}

// MonteCarloOptions::progress may stop the call by throwing (Python's Ctrl-C): on the caller's
// stream, the device-data API then leaves no work in flight on it, writes no output (they keep
// their poison), frees what it allocated, and the next call gives the host API's bits.
TEST(MonteCarloGpu, DeviceDataApiStoppedByItsProgressLeavesNothingBehind) {
  GPUKIT_REQUIRE_GPU();
  struct Stopped {};
  const std::vector<McRow> rows = mixed_rows();
  const McBook book(rows);
  const DeviceMcBook device_book(book.view());
  const DeviceMcOutputs out(static_cast<std::int64_t>(rows.size()));
  cuda::Stream stream;
  MonteCarloOptions options;
  options.paths = 3 * kMonteCarloTileSamples + 6;
  options.greeks = true;  // five books, one after the other: five calls of progress at least
  const MonteCarloBookResult api = price_monte_carlo_book(Context::cuda(0), book.view(), options);
  int calls = 0;
  MonteCarloOptions counted = options;
  counted.progress = [&calls](double) { ++calls; };
  price_monte_carlo_book_on_device(device_book.view(), out.outputs(options), stream.handle(),
                                   counted);
  ASSERT_GE(calls, 5);
  cuda::synchronize_device();
  std::size_t free_before = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);

  for (const int stop_at : {1, calls / 2, calls}) {
    const std::string what = "stopped at call " + std::to_string(stop_at);
    int seen = 0;
    MonteCarloOptions stopped = options;
    stopped.progress = [&seen, stop_at](double) {
      if (++seen == stop_at) throw Stopped{};
    };
    out.poison(stream.handle());
    EXPECT_THROW(price_monte_carlo_book_on_device(device_book.view(), out.outputs(options),
                                                  stream.handle(), stopped),
                 Stopped)
        << what;
    EXPECT_EQ(seen, stop_at) << what;
    EXPECT_EQ(cudaStreamQuery(stream.handle()), cudaSuccess) << what << ": work left in flight";
    for (int k = 0; k < DeviceMcOutputs::kArrays; ++k) {
      EXPECT_TRUE(all_poison(out.read(k))) << what << ": array " << k << " written";
    }
    std::size_t free_after = 0;
    ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
    EXPECT_EQ(free_after, free_before) << what << ": device memory not released";
    out.poison(stream.handle());
    price_monte_carlo_book_on_device(device_book.view(), out.outputs(options), stream.handle(),
                                     options);
    expect_outputs_are_the_host_apis(out, api, what + ", then priced again");
  }
}

}  // namespace
}  // namespace gpukit::finance
