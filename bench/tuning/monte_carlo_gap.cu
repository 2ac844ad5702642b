// The Monte Carlo gap to cuRAND: gpukit's float kernels (the one-step European call on 2^28
// paths, the 252-date down-and-out call on 4M paths) under each launch shape of the launcher
// (automatic, per-option block, multi-block plus merge, staged) and block size, against cuRAND's
// device API in a plain kernel on the same problem, in one process. Each shape is first checked
// against the library's CPU backend on the same random numbers (mc::cpu_moments, the same Philox
// stream: price within 2e-4 price + 0.02 standard errors, the bound of the GPU tests'
// SameRandomNumbersAsTheCpu) on --check-paths paths, and cuRAND's price against the CPU's within
// 6 combined standard errors (independent numbers). The gap analysis of
// docs/journal/monte_carlo-notebook.md ("Why these kernels are fast") is what this driver
// measures.
//
//   gpukit_tune_monte_carlo --problems=european,barrier
//       --shapes=automatic,per_option,multi_block,staged   (one command line)

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "finance/cpu/monte_carlo_launchers.hpp"
#include "finance/cuda/monte_carlo_curand_reference.hpp"
#include "finance/cuda/monte_carlo_launchers.hpp"
#include "finance/monte_carlo_internal.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "tuning_common.hpp"

namespace {

namespace fin = gpukit::finance;
namespace mc = gpukit::finance::mc;
using gpukit::tuning::Timing;

constexpr std::uint64_t kSeed = 2008;

// An at-the-money call (S = K = 100, T = 1, r = 5%, q = 2%, sigma = 25%), as `gpukit bench
// monte_carlo` prices it; the barrier problem adds a down-and-out barrier at 90 on 252 dates.
mc::OptionInputs option(bool barrier) {
  mc::OptionInputs in;
  in.spot = 100, in.strike = 100, in.maturity = 1, in.rate = 0.05, in.volatility = 0.25;
  in.dividend = 0.02;
  if (barrier) in.barrier_type = fin::BarrierType::down_out, in.barrier = 90, in.steps = 252;
  return in;
}

mc::LaunchShape parse_shape(const std::string& s) {
  if (s == "automatic") return mc::LaunchShape::automatic;
  if (s == "per_option") return mc::LaunchShape::per_option;
  if (s == "multi_block") return mc::LaunchShape::multi_block;
  if (s == "staged") return mc::LaunchShape::staged;
  throw std::invalid_argument("unknown shape " + s +
                              " (automatic, per_option, multi_block, staged)");
}

// One option's run on the device: its parameters, moments and workspace.
struct DeviceOption {
  mc::DeviceRun run;
  mc::PathParams<float>* params = nullptr;
  mc::Moments<double>* moments = nullptr;
  void* workspace = nullptr;

  DeviceOption(const mc::PathParams<float>& p, std::int64_t samples) {
    run.options = 1;
    run.samples = samples;
    run.seed = kSeed;
    run.kind = mc::common_path_kind(&p, 1);
    GPUKIT_TUNING_CHECK(cudaMalloc(&params, sizeof p));
    GPUKIT_TUNING_CHECK(cudaMemcpy(params, &p, sizeof p, cudaMemcpyHostToDevice));
    GPUKIT_TUNING_CHECK(cudaMalloc(&moments, sizeof(mc::Moments<double>)));
    GPUKIT_TUNING_CHECK(cudaMalloc(&workspace, std::size_t(mc::workspace_bytes(run))));
  }
  ~DeviceOption() {
    cudaFree(params);
    cudaFree(moments);
    cudaFree(workspace);
  }
  DeviceOption(const DeviceOption&) = delete;
  DeviceOption& operator=(const DeviceOption&) = delete;

  void launch(cudaStream_t stream, const mc::LaunchConfig& config) {
    mc::launch_monte_carlo<float>(params, run, moments, workspace, stream, config);
  }
  mc::Estimate estimate(const mc::OptionInputs& in, cudaStream_t stream) const {
    GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
    mc::Moments<double> m;
    GPUKIT_TUNING_CHECK(cudaMemcpy(&m, moments, sizeof m, cudaMemcpyDeviceToHost));
    return mc::estimate(m, in, false, false);
  }
};

// cuRAND's plain kernel on the same option: the estimate from its two sums.
struct Curand {
  mc::CurandReferenceProblem problem;
  double* sums = nullptr;
  Curand(const mc::OptionInputs& in, const mc::PathParams<float>& p, std::int64_t paths) {
    problem.paths = paths;
    problem.seed = kSeed;
    problem.drift_dt = p.drift_dt, problem.vol_sqrt_dt = p.vol_sqrt_dt;
    problem.strike_over_spot = p.strike_over_spot;
    problem.steps = in.steps;
    problem.down_and_out = in.barrier_type == fin::BarrierType::down_out;
    problem.log_barrier = p.log_barrier;
    GPUKIT_TUNING_CHECK(cudaMalloc(&sums, mc::kCurandReferenceSumsBytes));
  }
  ~Curand() { cudaFree(sums); }
  Curand(const Curand&) = delete;
  Curand& operator=(const Curand&) = delete;
  void launch(cudaStream_t stream) {
    GPUKIT_TUNING_CHECK(cudaMemsetAsync(sums, 0, mc::kCurandReferenceSumsBytes, stream));
    mc::launch_curand_reference(problem, sums, stream);
  }
  mc::Estimate estimate(const mc::OptionInputs& in, cudaStream_t stream) const {
    GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
    double host[2];
    GPUKIT_TUNING_CHECK(cudaMemcpy(host, sums, sizeof host, cudaMemcpyDeviceToHost));
    const double n = double(problem.paths / 4 * 4);
    const double mean = host[0] / n;
    const double variance = std::max(0.0, (host[1] - host[0] * mean) / (n - 1));
    const double scale = in.spot * std::exp(-in.rate * in.maturity);  // payoffs in units of spot
    mc::Estimate e;
    e.price = scale * mean;
    e.std_error = scale * std::sqrt(variance / n);
    return e;
  }
};

void run_problem(const gpukit::tuning::Knobs& knobs, bool barrier, cudaStream_t stream) {
  const mc::OptionInputs in = option(barrier);
  const mc::PathParams<float> p = mc::path_params<float>(in, 0, fin::BarrierMonitoring::discrete);
  const std::int64_t paths = knobs.integer(barrier ? "barrier-paths" : "european-paths");
  const std::int64_t check_paths = knobs.integer("check-paths");
  const int warmup = int(knobs.integer("warmup"));
  const int repeat = int(knobs.integer("repeat"));
  const char* name = barrier ? "barrier" : "european";

  // The CPU backend on the same random numbers.
  const std::vector<mc::Moments<double>> cpu_result =
      mc::cpu_moments<float>({p}, check_paths, kSeed, false, false, 0);
  const mc::Estimate cpu = mc::estimate(cpu_result[0], in, false, false);
  std::printf("# %s, CPU on %lld paths: %.6f +- %.2e\n", name, static_cast<long long>(check_paths),
              cpu.price, cpu.std_error);

  std::printf("%-9s %-12s %7s %12s %24s %16s\n", "problem", "shape", "threads", "paths",
              "median ms (min-max)", "G path-steps/s");
  double curand_ms = 0;
  {
    Curand check(in, p, check_paths);
    check.launch(stream);
    const mc::Estimate e = check.estimate(in, stream);
    const double bound = 6 * std::hypot(e.std_error, cpu.std_error);
    if (!(std::abs(e.price - cpu.price) <= bound)) {
      throw std::runtime_error(std::string(name) + ", curand: price " + std::to_string(e.price) +
                               " more than 6 combined standard errors from the CPU's");
    }
    Curand timed(in, p, paths);
    const Timing t =
        gpukit::tuning::time_calls(stream, warmup, repeat, [&] { timed.launch(stream); });
    curand_ms = t.median_ms;
    char range[64];
    std::snprintf(range, sizeof range, "%.4f (%.4f-%.4f)", t.median_ms, t.min_ms, t.max_ms);
    std::printf("%-9s %-12s %7s %12lld %24s %16.1f  1.000x curand\n", name, "curand", "-",
                static_cast<long long>(paths), range,
                double(paths) * in.steps / (t.median_ms * 1e6));
  }
  for (const std::string& shape_name : knobs.words("shapes")) {
    for (const std::int64_t threads : knobs.sizes("threads-per-block")) {
      mc::LaunchConfig config;
      config.shape = parse_shape(shape_name);
      config.threads_per_block = int(threads);
      config.max_blocks = int(knobs.integer("max-blocks"));
      {
        // Checked first, from poisoned moments, on the CPU's paths and random numbers.
        DeviceOption check(p, check_paths);
        GPUKIT_TUNING_CHECK(
            cudaMemsetAsync(check.moments, 0xFF, sizeof(mc::Moments<double>), stream));
        check.launch(stream, config);
        const mc::Estimate e = check.estimate(in, stream);
        const double bound = 2e-4 * std::abs(cpu.price) + 0.02 * cpu.std_error;
        if (!(std::abs(e.price - cpu.price) <= bound)) {
          throw std::runtime_error(std::string(name) + ", " + shape_name + ": price " +
                                   std::to_string(e.price) + " differs from the CPU's " +
                                   std::to_string(cpu.price) + " by more than " +
                                   std::to_string(bound));
        }
      }
      DeviceOption timed(p, paths);
      const Timing t =
          gpukit::tuning::time_calls(stream, warmup, repeat, [&] { timed.launch(stream, config); });
      char range[64];
      std::snprintf(range, sizeof range, "%.4f (%.4f-%.4f)", t.median_ms, t.min_ms, t.max_ms);
      std::printf("%-9s %-12s %7lld %12lld %24s %16.1f  %.3fx curand\n", name, shape_name.c_str(),
                  static_cast<long long>(threads), static_cast<long long>(paths), range,
                  double(paths) * in.steps / (t.median_ms * 1e6), curand_ms / t.median_ms);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(
        argc, argv, "gpukit_tune_monte_carlo",
        {{"problems", "european,barrier|european (1 step), barrier (252 dates, down-and-out)"},
         {"shapes", "automatic,per_option,multi_block,staged|launch shapes (LaunchShape)"},
         {"threads-per-block", "256|comma list (multiples of 32; staged always uses 512)"},
         {"max-blocks", "0|multi_block grid cap (0: fill the device)"},
         {"european-paths", "2^28|paths of the European problem"},
         {"barrier-paths", "2^22|paths of the barrier problem"},
         {"check-paths", "2^20|paths of the checks against the CPU"},
         {"warmup", "3|untimed calls before the samples"},
         {"repeat", "21|samples (the median is reported)"}});
    gpukit::tuning::print_device(knobs.summary());
    cudaStream_t stream;
    GPUKIT_TUNING_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    for (const std::string& problem : knobs.words("problems")) {
      if (problem != "european" && problem != "barrier")
        throw std::invalid_argument("unknown problem " + problem);
      run_problem(knobs, problem == "barrier", stream);
    }
    GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
  });
}
