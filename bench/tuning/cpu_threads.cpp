// The CPU thread rule's measurements (core/cpu_threads.hpp): what a parallel region costs, what
// each CPU backend's loop costs an item on one thread (the per-item figures kept beside the loops),
// and the in-process time of small and large library calls, to compare wait policies and thread
// rules. Host wall clocks (steady_clock), median of --repeat after one untimed call; a pause of
// --gap-us between calls, so that each starts as a separate call would (libgomp's default policy
// spins a few milliseconds after a region; a shorter gap times threads still spinning).
//
//   gpukit_tune_cpu_threads region [--threads=2] [--repeat=2000] [--gap-us=1000]
//   gpukit_tune_cpu_threads costs  [--repeat=9]
//   gpukit_tune_cpu_threads calls  [--threads=0] [--repeat=101] [--gap-us=5000] [--large=1]
//
// Run it under OMP_WAIT_POLICY=passive to see what the CLI and Python get (README "Threads"); the
// numbers quoted are in docs/journal/small-calls-notebook.md. Needs no GPU.

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/parallel_copy.hpp"
#include "gpukit/blas/gemm.hpp"
#include "gpukit/blas/saxpy.hpp"
#include "gpukit/blas/saxpy_reference.hpp"
#include "gpukit/core/context.hpp"
#include "gpukit/finance/black_scholes.hpp"
#include "gpukit/finance/black_scholes_reference.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/primitives/compact.hpp"
#include "gpukit/primitives/reduce.hpp"
#include "gpukit/primitives/scan.hpp"
#include "gpukit/rng/generate.hpp"
#include "gpukit/rng/mt19937_streams.hpp"

namespace {

using namespace gpukit;
using Clock = std::chrono::steady_clock;

struct Knobs {
  std::string mode;
  int threads = -1;
  int repeat = -1;
  double gap_us = -1;
  bool large = true;
};

Knobs parse(int argc, char** argv) {
  Knobs k;
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::puts(
        "gpukit_tune_cpu_threads region|costs|calls [--threads=N] [--repeat=R] [--gap-us=G] "
        "[--large=0|1]");
    std::exit(argc < 2 ? 2 : 0);
  }
  k.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const auto eq = arg.find('=');
    if (arg.rfind("--", 0) != 0 || eq == std::string::npos) {
      throw std::invalid_argument("expected --knob=value, got " + arg);
    }
    const std::string name = arg.substr(2, eq - 2), value = arg.substr(eq + 1);
    if (name == "threads") {
      k.threads = std::stoi(value);
    } else if (name == "repeat") {
      k.repeat = std::stoi(value);
    } else if (name == "gap-us") {
      k.gap_us = std::stod(value);
    } else if (name == "large") {
      k.large = value != "0";
    } else {
      throw std::invalid_argument("unknown knob --" + name);
    }
  }
  return k;
}

/// Median, 10th and 90th percentile of `repeat` timings of `call` (microseconds), after one
/// untimed call, with a pause of gap_us after each call.
struct Timing {
  double median_us, p10_us, p90_us;
};
Timing time_call(const std::function<void()>& call, int repeat, double gap_us) {
  call();
  std::vector<double> us;
  for (int r = 0; r < repeat; ++r) {
    const auto start = Clock::now();
    call();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    const auto until = Clock::now() + std::chrono::duration<double, std::micro>(gap_us);
    // Sleeping, not spinning: the pause should leave the cores to whoever else runs.
    if (gap_us > 0) std::this_thread::sleep_until(until);
  }
  std::sort(us.begin(), us.end());
  const auto at = [&](double q) { return us[static_cast<std::size_t>(q * double(us.size() - 1))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

const char* policy() {
  const char* p = std::getenv("OMP_WAIT_POLICY");
  return p != nullptr ? p : "(unset)";
}

// The cost of one empty `parallel for` of `threads` iterations on `threads` threads.
void region(const Knobs& k) {
  const int threads = k.threads > 0 ? k.threads : 2;
  volatile int sink = 0;
  const Timing t = time_call(
      [&] {
#pragma omp parallel for num_threads(threads)
        for (int i = 0; i < threads; ++i) sink = sink + i;
      },
      k.repeat > 0 ? k.repeat : 2000, k.gap_us >= 0 ? k.gap_us : 1000);
  std::printf("region: %d threads, OMP_WAIT_POLICY %s: median %.2f us (p10 %.2f, p90 %.2f)\n",
              threads, policy(), t.median_us, t.p10_us, t.p90_us);
}

// Book, grid and array builders for the calls below.
struct Book {
  std::vector<double> spot, strike, maturity;
  std::vector<std::uint8_t> is_put;
  explicit Book(std::size_t n) : spot(n), strike(n), maturity(n), is_put(n) {
    for (std::size_t i = 0; i < n; ++i) {
      spot[i] = 80 + double(i % 41);
      strike[i] = 70 + double(i % 61);
      maturity[i] = 0.25 + double(i % 8) * 0.25;
      is_put[i] = i % 2;
    }
  }
  finance::BlackScholesInputs<double> inputs() const {
    finance::BlackScholesInputs<double> in;
    in.count = static_cast<std::int64_t>(spot.size());
    in.spot = spot.data(), in.strike = strike.data(), in.maturity = maturity.data();
    in.rate.scalar = 0.02, in.volatility.scalar = 0.3;
    in.is_put.values = is_put.data();
    return in;
  }
  finance::MonteCarloBookView view() const {
    finance::MonteCarloBookView v;
    v.count = static_cast<std::int64_t>(spot.size());
    v.is_put = is_put.data(), v.spot = spot.data(), v.strike = strike.data();
    v.maturity = maturity.data();
    v.rate.scalar = 0.02, v.volatility.scalar = 0.3;
    return v;
  }
};

std::vector<double> grid_values(std::int64_t n) {
  std::vector<double> f(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = std::sin(0.37 * double(i));
  const double mean = std::accumulate(f.begin(), f.end(), 0.0) / double(f.size());
  for (double& x : f) x -= mean;
  return f;
}

struct Case {
  std::string name;
  double items;  // for costs: what the per-item figure divides by
  std::function<void()> call;
};

// One thread's cost an item of every loop the thread rule sizes (the figures beside the loops).
void costs(const Knobs& k) {
  const Context one = Context::cpu(1);
  const int repeat = k.repeat > 0 ? k.repeat : 9;
  const std::int64_t options = 1 << 16;
  static const Book book(static_cast<std::size_t>(options));
  static std::vector<double> price(options), delta(options), gamma(options);
  const auto bs_in = book.inputs();
  finance::BlackScholesOutputs<double> plain;
  plain.price = price.data();
  finance::BlackScholesOutputs<double> greeks = plain;
  greeks.delta = delta.data(), greeks.gamma = gamma.data();

  const std::int64_t elements = 1 << 22;
  static std::vector<double> x(static_cast<std::size_t>(elements)), y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = std::sin(double(i));
  static std::vector<float> xf(x.begin(), x.end()), yf(xf.size()), outf(xf.size());
  static std::vector<std::uint32_t> words(1 << 20);

  const pde::PoissonGrid grid{{256, 256}, {}};
  static const std::vector<double> f = grid_values(grid.size());
  static std::vector<double> u(f.size());
  static pde::PoissonPlan<double> plan(one, grid);
  const pde::PoissonGrid small_grid{{64, 64}, {}};
  static const std::vector<double> small_f = grid_values(small_grid.size());

  const std::int64_t mc_paths = 1 << 16;
  finance::MonteCarloOptions mc;
  mc.paths = mc_paths;
  finance::MonteCarloOptions mc_reference = mc;
  mc_reference.paths = 1 << 12;
  static const Book one_option(1);
  static finance::MonteCarloBookResult mc_result;

  blas::GemmProblem gemm;
  gemm.m = gemm.n = gemm.k = 256;
  static std::vector<float> a(65536, 1.0f), b(65536, 0.5f), c(65536);
  blas::GemmProblem gemm_small;
  gemm_small.m = gemm_small.n = gemm_small.k = 32;

  const std::vector<Case> cases = {
      {"black_scholes option (erfc, its own side)", double(options),
       [&] { finance::price_black_scholes(one, bs_in, plain); }},
      {"black_scholes option with delta and gamma", double(options),
       [&] { finance::price_black_scholes(one, bs_in, greeks); }},
      {"black_scholes check, a price (long double)", double(options),
       [&] {
         finance::check_black_scholes_prices<double>(bs_in, price, finance::NormalCdf::erfc, 1);
       }},
      {"monte_carlo path-step (European, double)", double(mc_paths),
       [&] { mc_result = finance::price_monte_carlo_book(one, one_option.view(), mc); }},
      {"monte_carlo reference path-step (long double)", double(mc_reference.paths),
       [&] { finance::monte_carlo_reference(one_option.view(), mc_reference, 1); }},
      {"reduce sum, a double", double(elements),
       [&] { primitives::reduce<double>(one, x, primitives::ReduceOp::sum); }},
      {"reduce accurate sum, a double", double(elements),
       [&] {
         primitives::ReduceOptions accurate;
         accurate.accurate_sum = true;
         primitives::reduce<double>(one, x, primitives::ReduceOp::sum, accurate);
       }},
      {"scan sum, a double", double(elements),
       [&] {
         primitives::scan<double>(one, x, y, primitives::ScanOp::sum,
                                  primitives::ScanKind::inclusive);
       }},
      {"compact positive, a double", double(elements),
       [&] { primitives::compact<double>(one, x, y, primitives::KeepPredicate::positive); }},
      {"copy, a byte (parallel_copy)", double(elements) * 8,
       [&] { gpukit::detail::parallel_copy(y.data(), x.data(), x.size() * 8, 1); }},
      {"saxpy, a float (out = y: in place)", double(elements),
       [&] { blas::axpy<float>(one, 2.0f, xf, yf, yf); }},
      {"saxpy, a float (out apart: with the copy of y)", double(elements),
       [&] { blas::axpy<float>(one, 2.0f, xf, yf, outf); }},
      {"saxpy check, a float", double(elements) / 16,
       [&] {
         blas::check_axpy_result<float>(
             2.0f, std::span(xf).first(xf.size() / 16), std::span(yf).first(xf.size() / 16),
             std::span(outf).first(xf.size() / 16), blas::AxpyRounding::fused_or_separate);
       }},
      {"gemm float 256^3, a multiply-add", 256.0 * 256 * 256,
       [&] { blas::gemm<float>(one, gemm, 1.0f, a, b, 0.0f, c); }},
      {"gemm reference 32^3, a multiply-add (long double)", 32.0 * 32 * 32,
       [&] {
         blas::gemm_reference<float>(gemm_small, 1.0f, std::span(a).first(1024),
                                     std::span(b).first(1024), 0.0f, {}, 1);
       }},
      {"poisson 256^2 solve (double), a grid point", double(grid.size()),
       [&] { plan.solve(f, u); }},
      {"poisson 64^2 plan + solve (double), a grid point", double(small_grid.size()),
       [&] {
         std::vector<double> out(small_f.size());
         pde::PoissonPlan<double>(one, small_grid).solve(small_f, out);
       }},
      {"poisson reference 64^2 (long double), a grid point", double(small_grid.size()),
       [&] { pde::poisson_reference_solution<double>(small_grid, small_f, pde::Gauge::mean, 1); }},
      {"philox uniform, a double", double(elements),
       [&] { rng::generate_uniform<double>(one, x, 7); }},
      {"mt19937, a word (2^10 streams of 2^10)", double(words.size()),
       [&] { rng::generate_mt19937_streams(one, words, 1 << 10, 7); }},
      {"mt19937, a stream of 1 word", double(1 << 14),
       [&] { rng::generate_mt19937_streams(one, std::span(words).first(1 << 14), 1, 7); }},
  };
  std::printf("costs on one thread (median of %d), OMP_WAIT_POLICY %s\n", repeat, policy());
  std::printf("%-52s %12s %12s\n", "item", "ns/item", "call ms");
  for (const Case& item : cases) {
    const Timing t = time_call(item.call, repeat, 0);
    std::printf("%-52s %12.3f %12.3f\n", item.name.c_str(), t.median_us * 1000 / item.items,
                t.median_us / 1000);
  }
}

// The in-process time of the calls issue 30 names and a few more, small and large.
void calls(const Knobs& k) {
  const Context context = Context::cpu(k.threads > 0 ? k.threads : 0);
  const int repeat = k.repeat > 0 ? k.repeat : 101;
  const double gap_us = k.gap_us >= 0 ? k.gap_us : 5000;
  static const Book one_option(1), large_book(1 << 20);
  static std::vector<double> price(1 << 20);
  finance::BlackScholesOutputs<double> out;
  out.price = price.data();
  static const std::vector<double> thousand = grid_values(1000), large = grid_values(1 << 24);
  const pde::PoissonGrid tiny{{8, 8}, {}}, big{{512, 512}, {}};
  static const std::vector<double> f_tiny = grid_values(64), f_big = grid_values(big.size());
  static std::vector<double> u(f_big.size());
  finance::MonteCarloOptions few;
  few.paths = 1000;

  std::vector<Case> cases = {
      {"poisson 8x8 (plan + solve)", 1,
       [&] { pde::PoissonPlan<double>(context, tiny).solve(f_tiny, std::span(u).first(64)); }},
      {"black_scholes 1 option", 1,
       [&] { finance::price_black_scholes(context, one_option.inputs(), out); }},
      {"reduce 1000 doubles", 1,
       [&] { primitives::reduce<double>(context, thousand, primitives::ReduceOp::sum); }},
      {"monte_carlo 1 option, 1000 paths", 1,
       [&] { finance::price_monte_carlo_book(context, one_option.view(), few); }},
  };
  if (k.large) {
    cases.push_back({"reduce 2^24 doubles", 1, [&] {
                       primitives::reduce<double>(context, large, primitives::ReduceOp::sum);
                     }});
    cases.push_back({"poisson 512x512 (plan + solve)", 1,
                     [&] { pde::PoissonPlan<double>(context, big).solve(f_big, u); }});
    cases.push_back({"black_scholes 2^20 options", 1,
                     [&] { finance::price_black_scholes(context, large_book.inputs(), out); }});
  }
  std::printf("calls on %s, OMP_WAIT_POLICY %s, median of %d with %.0f us between\n",
              context.describe().c_str(), policy(), repeat, gap_us);
  std::printf("%-36s %12s %12s %12s\n", "call", "median ms", "p10 ms", "p90 ms");
  for (const Case& item : cases) {
    const Timing t = time_call(item.call, repeat, gap_us);
    std::printf("%-36s %12.4f %12.4f %12.4f\n", item.name.c_str(), t.median_us / 1000,
                t.p10_us / 1000, t.p90_us / 1000);
  }
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Knobs k = parse(argc, argv);
    if (k.mode == "region") {
      region(k);
    } else if (k.mode == "costs") {
      costs(k);
    } else if (k.mode == "calls") {
      calls(k);
    } else {
      throw std::invalid_argument("unknown mode " + k.mode + " (region, costs or calls)");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpukit_tune_cpu_threads: %s\n", e.what());
    return 1;
  }
  return 0;
}
