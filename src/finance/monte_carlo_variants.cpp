#include "gpukit/finance/monte_carlo_variants.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "finance/cuda/monte_carlo_curand_reference.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::finance {

namespace {

#if GPUKIT_HAVE_CUDA

void refuse_greeks_and_large_books(const MonteCarloBookView& book,
                                   const MonteCarloOptions& options) {
  if (options.greeks) {
    throw InvalidInput(
        "monte carlo variants price the base book only; Greeks need price_monte_carlo_book");
  }
  if (book.count > kMonteCarloDevicePartRows) {
    throw InvalidInput("monte carlo variants hold the whole book on the device: at most 2^20 rows");
  }
}

// gpukit's kernels in one launch shape: the parameters of price_monte_carlo_book's CUDA path (the
// same host preparation, so the same bits), the whole book on the device at once.
template <class Real>
class PathsRun final : public MonteCarloDeviceRun {
 public:
  PathsRun(const MonteCarloBookView& book, const MonteCarloOptions& options, mc::LaunchShape shape)
      : options_(options),
        rows_(mc::book_inputs<Real>(book)),
        params_(rows_.size()),
        moments_(rows_.size()) {
    options_.progress = {};
    const std::vector<mc::PathParams<Real>> host = mc::book_path_params<Real>(book, rows_, options);
    params_.copy_from_host(host);
    run_ = {static_cast<std::int64_t>(rows_.size()),
            mc::samples_per_option(options),
            options.seed,
            options.antithetic,
            options.control_variate,
            mc::common_path_kind(host.data(), host.size())};
    workspace_ =
        cuda::DeviceBuffer<unsigned char>(static_cast<std::size_t>(mc::workspace_bytes(run_)));
    config_.shape = shape;
  }

  void launch(StreamHandle stream) override {
    mc::launch_monte_carlo<Real>(params_.data(), run_, moments_.data(), workspace_.data(), stream,
                                 config_);
  }

  void poison(StreamHandle stream) override {
    cuda::fill_bytes_async(moments_.data(), 0xFF, moments_.size() * sizeof(mc::Moments<double>),
                           stream);
  }

  MonteCarloBookResult result(StreamHandle stream) override {
    cuda::synchronize_stream(stream);
    std::vector<mc::Moments<double>> moments(rows_.size());
    moments_.copy_to_host(moments);
    std::vector<mc::Estimate> estimates(rows_.size());
    for (std::size_t i = 0; i < rows_.size(); ++i) {
      estimates[i] =
          mc::estimate(moments[i], rows_[i], options_.antithetic, options_.control_variate);
    }
    return mc::book_result(estimates, options_);
  }

 private:
  MonteCarloOptions options_;
  std::vector<mc::OptionInputs> rows_;
  cuda::DeviceBuffer<mc::PathParams<Real>> params_;
  cuda::DeviceBuffer<mc::Moments<double>> moments_;
  cuda::DeviceBuffer<unsigned char> workspace_;
  mc::DeviceRun run_;
  mc::LaunchConfig config_;
};

template <class Real, mc::LaunchShape kShape>
std::unique_ptr<MonteCarloDeviceRun> prepare_paths(const MonteCarloBookView& book,
                                                   const MonteCarloOptions& options) {
  mc::check_book_and_options(book, options);
  refuse_greeks_and_large_books(book, options);
  return std::make_unique<PathsRun<Real>>(book, options, kShape);
}

// cuRAND's device API in the plain kernel of monte_carlo_curand_reference.hpp: one float call,
// European or down-and-out on the book's steps, sums of the payoff and of its square.
class CurandRun final : public MonteCarloDeviceRun {
 public:
  CurandRun(const mc::OptionInputs& row, const MonteCarloOptions& options) : row_(row), sums_(2) {
    const mc::PathParams<float> p = mc::path_params<float>(row, 0, BarrierMonitoring::discrete);
    problem_.paths = options.paths;
    problem_.seed = options.seed;
    problem_.drift_dt = p.drift_dt, problem_.vol_sqrt_dt = p.vol_sqrt_dt;
    problem_.strike_over_spot = p.strike_over_spot;
    problem_.steps = row.steps;
    problem_.down_and_out = row.barrier_type == BarrierType::down_out;
    problem_.log_barrier = p.log_barrier;
  }

  void launch(StreamHandle stream) override {
    cuda::fill_bytes_async(sums_.data(), 0, mc::kCurandReferenceSumsBytes, stream);
    mc::launch_curand_reference(problem_, sums_.data(), stream);
  }

  void poison(StreamHandle stream) override {
    cuda::fill_bytes_async(sums_.data(), 0xFF, mc::kCurandReferenceSumsBytes, stream);
  }

  MonteCarloBookResult result(StreamHandle stream) override {
    cuda::synchronize_stream(stream);
    std::vector<double> sums(2);
    sums_.copy_to_host(sums);
    // The sample's estimator: the sum of squares differenced (its cancellation is the vendor's).
    const double n = static_cast<double>(problem_.paths / 4 * 4);
    const double mean = sums[0] / n;
    const double variance = std::max(0.0, (sums[1] - sums[0] * mean) / (n - 1));
    const double scale = row_.spot * std::exp(-row_.rate * row_.maturity);
    const double price = scale * mean, std_error = scale * std::sqrt(variance / n);
    MonteCarloBookResult r;
    r.price = {price}, r.std_error = {std_error}, r.paths = {n};
    r.ci_low = {price - 1.96 * std_error}, r.ci_high = {price + 1.96 * std_error};
    return r;
  }

 private:
  mc::OptionInputs row_;
  mc::CurandReferenceProblem problem_;
  cuda::DeviceBuffer<double> sums_;
};

template <class Real>
std::unique_ptr<MonteCarloDeviceRun> prepare_curand(const MonteCarloBookView& book,
                                                    const MonteCarloOptions& options) {
  mc::check_book_and_options(book, options);
  refuse_greeks_and_large_books(book, options);
  const auto refuse = [](const char* what) {
    throw InvalidInput(std::string("the cuRAND reference prices one float call, European or "
                                   "down-and-out with discrete monitoring: ") +
                       what);
  };
  if (book.count != 1) refuse("the book must have one row");
  if constexpr (!std::is_same_v<Real, float>) refuse("the precision must be float");
  if (options.antithetic || options.control_variate) refuse("no variance reduction");
  // The inputs as given (double): the kernel's float parameters are rounded from them once.
  const mc::OptionInputs row = mc::option_inputs<double>(book, 0);
  if (row.is_put) refuse("the row is a put");
  if (row.barrier_type != BarrierType::none &&
      (row.barrier_type != BarrierType::down_out ||
       options.monitoring != BarrierMonitoring::discrete)) {
    refuse("the barrier is not a discretely monitored down-and-out");
  }
  return std::make_unique<CurandRun>(row, options);
}

// An element is a path-step. Per path-step: one standard normal (Box-Muller on two uniforms: the
// two uniforms' conversions, a log, a multiply, a square root, a multiply-add for the angle, a
// sine or cosine and a multiply, 12 per pair of normals, 6 per normal) and the log-price step (a
// multiply-add and an add, 3), plus a barrier's running minimum (1): 10. The payoff and the
// statistics (about 10 per path) are not counted: a one-step European path does about twice this.
constexpr TrafficModel kPathSteps{
    .reads_per_element = 0, .writes_per_element = 0, .flops_per_element = 10};

// deterministic: the bits depend on neither the launch shape nor the run and equal the API's on a
// CUDA context; they share the CPU backend's random numbers and summation tree, and differ from
// its bits only by the last bits of exp/log/sin/cos (monte_carlo.hpp).
using Preparers = PerType<MonteCarloPrepare, RealTypes>;

constexpr MonteCarloVariant kVariants[] = {
    {.info = {.name = "per-option",
              .description = "one block per option computes its tiles and merges them (one kernel)",
              .seed_reference = "000 slides 34-37 (one block per option)",
              .role = VariantRole::step,
              .traffic = kPathSteps,
              .deterministic = true},
     .preparers = Preparers::of(
         []<class Real> { return &prepare_paths<Real, mc::LaunchShape::per_option>; })},
    {.info = {.name = "multi-block",
              .description = "warps over every (option, tile) in a grid-stride loop, then a merge "
                             "kernel",
              .seed_reference = "000 slides 34-37 (several blocks and a reduction)",
              .role = VariantRole::step,
              .traffic = kPathSteps,
              .deterministic = true},
     .preparers = Preparers::of(
         []<class Real> { return &prepare_paths<Real, mc::LaunchShape::multi_block>; })},
    {.info = {.name = "staged",
              .description = "a block of 16 warps per tile (one quad of each lane per warp), then "
                             "the merge kernel: long paths on few tiles",
              .seed_reference = "beyond the seed",
              .role = VariantRole::step,
              .traffic = kPathSteps,
              .deterministic = true},
     .preparers =
         Preparers::of([]<class Real> { return &prepare_paths<Real, mc::LaunchShape::staged>; })},
    {.info = {.name = "automatic",
              .description = "staged for long paths on few tiles, else per-option where an "
                             "option's tiles fill a block twice over, else multi-block",
              .seed_reference = "beyond the seed",
              .role = VariantRole::best,
              .traffic = kPathSteps,
              .deterministic = true},
     .preparers = Preparers::of(
         []<class Real> { return &prepare_paths<Real, mc::LaunchShape::automatic>; })},
    {.info = {.name = "curand-philox",
              .description = "cuRAND device API (Philox4_32_10, curand_normal4, fast math) in a "
                             "plain kernel, one atomic per block",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kPathSteps,
              .deterministic = false},
     .preparers = Preparers::of([]<class Real> { return &prepare_curand<Real>; }),
     .prices_any_book = false},
};
constexpr std::string_view kDefaultVariant = "automatic";
#endif

}  // namespace

std::span<const MonteCarloVariant> monte_carlo_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const MonteCarloVariant& default_monte_carlo_variant() {
#if GPUKIT_HAVE_CUDA
  return find_monte_carlo_variant(kDefaultVariant);
#else
  throw DeviceUnavailable("Monte Carlo CUDA variants: this gpukit was built without CUDA");
#endif
}

const MonteCarloVariant& find_monte_carlo_variant(std::string_view name) {
  return find_variant(monte_carlo_variants(), name, "Monte Carlo");
}

}  // namespace gpukit::finance
