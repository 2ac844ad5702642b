// The Sobol sampler of price_monte_carlo_book: checks, the replicates' rows and tables, the
// backend dispatch and the randomized-QMC estimate (monte_carlo_sobol.hpp).

#include "finance/monte_carlo_sobol.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/rng/sobol.hpp"

#if GPUKIT_HAVE_CUDA
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::finance::mc {

namespace {

// Whether a row's path is built date by date through the Brownian bridge (barrier, Asian and
// heston rows, even of one date); a European row under Black-Scholes of any step count reads one
// coordinate, the terminal value (with the bridge only W(T) matters).
bool walks_bridge(const OptionInputs& in) {
  return in.barrier_type != BarrierType::none || in.average != AverageType::none ||
         in.model == AssetModel::heston;
}

// The Sobol dimensions a row's path reads: one a date of its bridge (two on a heston row, the
// variance's and the spot's), in 64 bits (2 * steps may pass 2^32).
std::uint64_t sobol_dimensions(const OptionInputs& in) {
  if (!walks_bridge(in)) return 1;
  return in.model == AssetModel::heston ? 2 * std::uint64_t{in.steps} : in.steps;
}

// merge() with the statistics the options keep.
Moments<double> merge_in_mode(const Moments<double>& a, const Moments<double>& b,
                              const MonteCarloOptions& options) {
  if (options.antithetic) {
    return options.control_variate ? merge<Mode<true, true>>(a, b) : merge<Mode<true, false>>(a, b);
  }
  return options.control_variate ? merge<Mode<false, true>>(a, b) : merge<Mode<false, false>>(a, b);
}

#if GPUKIT_HAVE_CUDA
// The moments of each replicate on the current device, on `stream` (waited for): the kernel's
// tiles, a workspace at a time, merged here in the fixed tree with the device's fused rounding.
template <class M, class Real>
std::vector<Moments<double>> device_sobol_in(const SobolBook<Real>& book, StreamHandle stream,
                                             const WorkDone& work_done) {
  const std::int64_t tiles = tiles_for(book.samples);
  const std::int64_t all = static_cast<std::int64_t>(book.rows.size()) * tiles;
  const std::int64_t chunk = std::min(all, kMonteCarloDeviceWorkspaceTiles);
  cuda::DeviceBuffer<SobolRow<Real>> rows(book.rows.size());
  cuda::DeviceBuffer<std::uint32_t> directions(book.directions.size());
  cuda::DeviceBuffer<rng::BrownianBridgeNode<Real>> bridge(
      std::max<std::size_t>(book.bridge.size(), 1));
  cuda::DeviceBuffer<Moments<double>> workspace(static_cast<std::size_t>(chunk));
  cuda::copy_to_device_async(rows.data(), book.rows.data(),
                             book.rows.size() * sizeof(SobolRow<Real>), stream);
  cuda::copy_to_device_async(directions.data(), book.directions.data(),
                             book.directions.size() * sizeof(std::uint32_t), stream);
  if (!book.bridge.empty()) {
    cuda::copy_to_device_async(bridge.data(), book.bridge.data(),
                               book.bridge.size() * sizeof(rng::BrownianBridgeNode<Real>), stream);
  }
  const SobolTables<Real> tables{directions.data(), bridge.data()};
  std::vector<Moments<double>> host(static_cast<std::size_t>(chunk));
  std::vector<Moments<double>> result(book.rows.size());
  TileTree<M, FusedMulAdd> tree;
  for (std::int64_t first = 0; first < all; first += chunk) {
    const std::int64_t count = std::min(chunk, all - first);
    launch_sobol_tiles<Real>(rows.data(), tables, book.samples, first, count, M::antithetic,
                             M::control, workspace.data(), stream);
    cuda::copy_to_host_async(host.data(), workspace.data(),
                             static_cast<std::size_t>(count) * sizeof(Moments<double>), stream);
    cuda::synchronize_stream(stream);
    double steps_done = 0;
    for (std::int64_t j = 0; j < count; ++j) {
      const std::int64_t row = (first + j) / tiles, tile = (first + j) % tiles;
      tree.push(host[static_cast<std::size_t>(j)]);
      if (tile == tiles - 1) result[static_cast<std::size_t>(row)] = tree.finish();
      steps_done += book.rows[static_cast<std::size_t>(row)].params.steps;
    }
    if (work_done) work_done(steps_done * double(kMonteCarloTileSamples));
  }
  return result;
}

template <class Real>
std::vector<Moments<double>> device_sobol_moments(const SobolBook<Real>& book, bool antithetic,
                                                  bool control, StreamHandle stream,
                                                  const WorkDone& work_done) {
  if (antithetic && control) return device_sobol_in<Mode<true, true>>(book, stream, work_done);
  if (antithetic) return device_sobol_in<Mode<true, false>>(book, stream, work_done);
  if (control) return device_sobol_in<Mode<false, true>>(book, stream, work_done);
  return device_sobol_in<Mode<false, false>>(book, stream, work_done);
}
#endif

}  // namespace

void check_sobol_options(const MonteCarloOptions& options) {
  if (options.sampler != MonteCarloSampler::sobol) return;
  if (options.replicates < 2 || options.replicates > kMonteCarloMaxReplicates) {
    throw InvalidInput(fmt::format(
        "monte carlo: replicates must be in [2, {}] with the sobol sampler (their spread is the "
        "standard error), got {}",
        kMonteCarloMaxReplicates, options.replicates));
  }
  const std::int64_t samples = samples_per_option(options);
  if (samples % options.replicates != 0) {
    throw InvalidInput(fmt::format(
        "monte carlo: with the sobol sampler the {} must be a multiple of the replicates ({}), "
        "got {}",
        options.antithetic ? "antithetic pairs (paths / 2)" : "paths", options.replicates,
        samples));
  }
  if (samples / options.replicates > (std::int64_t{1} << 32)) {
    throw InvalidInput(
        "monte carlo: at most 2^32 paths a replicate with the sobol sampler (the Sobol sequence's "
        "length)");
  }
}

void check_sobol_row(const OptionInputs& in, std::int64_t i) {
  if (sobol_dimensions(in) > static_cast<std::uint64_t>(rng::kSobolMaxDimensions)) {
    const bool heston = in.model == AssetModel::heston;
    throw InvalidInput(fmt::format(
        "monte carlo: option {}: steps must be <= {} with the sobol sampler (a path takes {} "
        "Sobol dimension{} a date), got {}",
        i, rng::kSobolMaxDimensions / (heston ? 2 : 1), heston ? "two" : "one", heston ? "s" : "",
        in.steps));
  }
}

void check_philox_sampler(const MonteCarloOptions& options, std::string_view what) {
  if (options.sampler == MonteCarloSampler::sobol) {
    throw InvalidInput(
        fmt::format("monte carlo: {} takes the philox sampler only, not sobol (yet)", what));
  }
}

double padded_samples_per_row(const MonteCarloOptions& options) {
  const std::int64_t samples = samples_per_option(options);
  if (options.sampler != MonteCarloSampler::sobol) {
    return double(tiles_for(samples)) * double(kMonteCarloTileSamples);
  }
  return double(options.replicates) * double(tiles_for(samples / options.replicates)) *
         double(kMonteCarloTileSamples);
}

template <class Real>
SobolBook<Real> sobol_book(const std::vector<OptionInputs>& rows,
                           const std::vector<PathParams<Real>>& params,
                           const MonteCarloOptions& options) {
  SobolBook<Real> book;
  book.samples = samples_per_option(options) / options.replicates;
  std::uint32_t dimensions = 1;
  std::map<std::uint32_t, std::uint32_t> bridge_of_steps;  // step count -> offset
  for (std::size_t i = 0; i < rows.size(); ++i) {
    check_sobol_row(rows[i], static_cast<std::int64_t>(i));
    const std::uint64_t needed = sobol_dimensions(rows[i]);
    dimensions = std::max(dimensions, static_cast<std::uint32_t>(needed));
    if (walks_bridge(rows[i]) && !bridge_of_steps.contains(rows[i].steps)) {
      bridge_of_steps[rows[i].steps] = static_cast<std::uint32_t>(book.bridge.size());
      // On unit steps: B(m) at date m, scaled per row by vol_sqrt_dt.
      const auto nodes = rng::brownian_bridge_nodes<Real>(rows[i].steps, rows[i].steps);
      book.bridge.insert(book.bridge.end(), nodes.begin(), nodes.end());
    }
  }
  book.directions = rng::sobol_direction_numbers(static_cast<int>(dimensions));
  const auto replicates = static_cast<std::uint32_t>(options.replicates);
  book.rows.reserve(rows.size() * replicates);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const OptionInputs& in = rows[i];
    const double sigma = in.volatility;
    const std::uint64_t stream_key =
        (std::uint64_t{params[i].stream_high} << 32) | params[i].option_index;
    for (std::uint32_t r = 0; r < replicates; ++r) {
      SobolRow<Real> row;
      row.params = params[i];
      row.terminal_drift =
          static_cast<Real>((in.rate - in.dividend - 0.5 * sigma * sigma) * in.maturity);
      row.terminal_vol = static_cast<Real>(sigma * std::sqrt(in.maturity));
      row.replicate_key = rng::sobol_replicate_key(options.seed, stream_key, r);
      if (walks_bridge(in)) row.bridge_offset = bridge_of_steps[in.steps];
      book.rows.push_back(row);
    }
  }
  return book;
}

std::vector<Estimate> sobol_estimates(const std::vector<OptionInputs>& rows,
                                      const std::vector<Moments<double>>& moments,
                                      const MonteCarloOptions& options) {
  const auto replicates = static_cast<std::size_t>(options.replicates);
  std::vector<Estimate> estimates(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    // The replicates' prices are independent and identically distributed: their mean and its
    // standard error, in a fixed order (Welford's update).
    double mean = 0, m2 = 0;
    Moments<double> pooled;
    for (std::size_t r = 0; r < replicates; ++r) {
      const Moments<double>& m = moments[i * replicates + r];
      const double price = estimate(m, rows[i], options.antithetic, options.control_variate).price;
      const double delta = price - mean;
      mean += delta / double(r + 1);
      m2 += delta * (price - mean);
      pooled = merge_in_mode(pooled, m, options);
    }
    const Estimate whole = estimate(pooled, rows[i], options.antithetic, options.control_variate);
    Estimate& e = estimates[i];
    e.price = mean;
    e.std_error = std::sqrt(m2 / double(replicates - 1) / double(replicates));
    e.vrf_antithetic = whole.vrf_antithetic;
    e.vrf_control = whole.vrf_control;
  }
  return estimates;
}

template <class Real>
std::vector<Moments<double>> sobol_moments_on(const Context& context, const SobolBook<Real>& book,
                                              const MonteCarloOptions& options,
                                              const WorkDone& work_done,
                                              const StreamHandle* callers_stream) {
  if (book.rows.empty()) return {};
  if (context.backend == Backend::cpu) {
    return cpu_sobol_moments(book, options.antithetic, options.control_variate,
                             context.effective_cpu_threads(), work_done);
  }
#if GPUKIT_HAVE_CUDA
  std::optional<cuda::Stream> own_stream;
  if (callers_stream == nullptr) {
    cuda::set_device(context.cuda_device);
    own_stream.emplace();
  }
  return device_sobol_moments(book, options.antithetic, options.control_variate,
                              callers_stream != nullptr ? *callers_stream : own_stream->handle(),
                              work_done);
#else
  (void)callers_stream;
  throw DeviceUnavailable("monte carlo: this build has no CUDA backend");
#endif
}

template <class Real>
std::vector<Estimate> sobol_estimates_on(const Context& context,
                                         const std::vector<OptionInputs>& rows,
                                         const std::vector<PathParams<Real>>& params,
                                         const MonteCarloOptions& options,
                                         const WorkDone& work_done,
                                         const StreamHandle* callers_stream) {
  if (rows.empty()) return {};
  const SobolBook<Real> book = sobol_book(rows, params, options);
  return sobol_estimates(rows, sobol_moments_on(context, book, options, work_done, callers_stream),
                         options);
}

#define GPUKIT_MC_SOBOL_INSTANTIATE(Real)                                                     \
  template SobolBook<Real> sobol_book<Real>(const std::vector<OptionInputs>&,                 \
                                            const std::vector<PathParams<Real>>&,             \
                                            const MonteCarloOptions&);                        \
  template std::vector<Moments<double>> sobol_moments_on<Real>(                               \
      const Context&, const SobolBook<Real>&, const MonteCarloOptions&, const WorkDone&,      \
      const StreamHandle*);                                                                   \
  template std::vector<Estimate> sobol_estimates_on<Real>(                                    \
      const Context&, const std::vector<OptionInputs>&, const std::vector<PathParams<Real>>&, \
      const MonteCarloOptions&, const WorkDone&, const StreamHandle*);
GPUKIT_MC_SOBOL_INSTANTIATE(float)
GPUKIT_MC_SOBOL_INSTANTIATE(double)
#undef GPUKIT_MC_SOBOL_INSTANTIATE

}  // namespace gpukit::finance::mc
