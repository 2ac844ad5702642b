// Poisson pass timing: the fused spectral solver's three passes timed one by one (cuFFT's
// real-to-complex row transforms, the fused column pass: forward transform along axis 0, the
// Poisson scaling and the inverse transform in one kernel, then cuFFT's complex-to-real rows), the
// whole solve, and the r2c variant's solve (the bar's reference) on the same f. The solution is
// checked against the library's CPU solver, every element within poisson_agreement_bound, before
// anything is timed. Column-pass GB/s counts one read and one write of the half spectrum.
// The pass-timing figures of docs/journal/poisson-notebook.md were taken with development drivers
// of this kind (which, like this one, compiled poisson_fused.cu into themselves to reach the
// passes).
//
//   gpukit_tune_poisson --shapes=4096x4096,8192x8192 --precision=float

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/core/context.hpp"
#include "gpukit/pde/poisson.hpp"
#include "tuning_common.hpp"

// The fused solver's source, compiled into this driver so that its passes (FusedSolver's
// forward_rows, columns and inverse_rows) can be launched one at a time. Its externally visible
// functions then come from this translation unit instead of the library's copy, which is the
// same source.
#include "pde/cuda/poisson_fused.cu"

namespace {

namespace pde = gpukit::pde;
namespace cd = gpukit::pde::cuda_detail;
using gpukit::tuning::Timing;

pde::PoissonGrid parse_shape(const std::string& text) {
  pde::PoissonGrid grid;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t x = text.find('x', start);
    const std::string part = text.substr(start, x == std::string::npos ? x : x - start);
    grid.shape.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    start = x + 1;
  }
  if (grid.rank() != 2 && grid.rank() != 3) throw std::invalid_argument("shape " + text);
  return grid;
}

template <class Real>
void run(const gpukit::tuning::Knobs& knobs) {
  using Complex = typename cd::FusedLayout<Real>::Complex;
  const int warmup = int(knobs.integer("warmup"));
  const int repeat = int(knobs.integer("repeat"));
  cudaStream_t stream;
  GPUKIT_TUNING_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  std::printf("%-14s %-7s %-16s %24s %9s %8s\n", "shape", "real", "pass", "median ms (min-max)",
              "GB/s", "% copy");
  for (const std::string& text : knobs.words("shapes")) {
    const pde::PoissonGrid grid = parse_shape(text);
    pde::validate_grid(grid);
    cd::GridShape shape;
    shape.rank = grid.rank();
    for (int a = 0; a < shape.rank; ++a) shape.n[a] = grid.shape[std::size_t(a)];
    if (!cd::fused_supports(shape))
      throw std::invalid_argument("the fused solver declines " + text);
    const std::int64_t n = grid.size();

    // f: uniform in [-1, 1]; the solvers remove its mean.
    std::vector<Real> f(static_cast<std::size_t>(n));
    const auto seed = static_cast<std::uint64_t>(knobs.integer("seed"));
    for (std::size_t i = 0; i < f.size(); ++i) {
      f[i] = static_cast<Real>(2 * gpukit::tuning::uniform01(seed, i) - 1);
    }
    std::vector<Real> reference(f.size());
    {
      pde::PoissonPlan<Real> cpu(gpukit::Context::cpu(), grid);
      cpu.solve(std::span<const Real>(f), std::span<Real>(reference));
    }

    const std::size_t bytes = f.size() * sizeof(Real);
    Real* d_f = nullptr;
    Real* d_u = nullptr;
    GPUKIT_TUNING_CHECK(cudaMalloc(&d_f, bytes));
    GPUKIT_TUNING_CHECK(cudaMalloc(&d_u, bytes));
    GPUKIT_TUNING_CHECK(cudaMemcpy(d_f, f.data(), bytes, cudaMemcpyHostToDevice));
    cd::FusedSolver<Real> fused(shape);
    const auto r2c = cd::make_r2c_solver<Real>(shape);

    // Checked first: the three passes in turn into a poisoned u, and the r2c solve, against the
    // CPU solver.
    auto check = [&](const char* what) {
      GPUKIT_TUNING_CHECK(cudaStreamSynchronize(stream));
      std::vector<Real> u(f.size());
      GPUKIT_TUNING_CHECK(cudaMemcpy(u.data(), d_u, bytes, cudaMemcpyDeviceToHost));
      double max_f = 0, max_u = 0, max_error = 0;
      for (std::size_t i = 0; i < u.size(); ++i) {
        max_f = std::max(max_f, std::abs(double(f[i])));
        max_u = std::max(max_u, std::abs(double(reference[i])));
        const double e = std::abs(double(u[i]) - double(reference[i]));
        max_error = std::isnan(e) ? INFINITY : std::max(max_error, e);
      }
      const double bound = pde::poisson_agreement_bound<Real>(grid, max_f, max_u);
      if (!(max_error <= bound)) {
        throw std::runtime_error(std::string(what) + " at " + text + ": max |GPU - CPU| " +
                                 std::to_string(max_error) + " above the bound " +
                                 std::to_string(bound));
      }
      std::printf("# %s %s: max |GPU - CPU| %.3g within the bound %.3g\n", text.c_str(), what,
                  max_error, bound);
    };
    GPUKIT_TUNING_CHECK(cudaMemsetAsync(d_u, 0xFF, bytes, stream));
    fused.forward_rows(d_f, stream);
    fused.columns(stream);
    fused.inverse_rows(d_u, stream);
    check("fused, pass by pass");
    GPUKIT_TUNING_CHECK(cudaMemsetAsync(d_u, 0xFF, bytes, stream));
    r2c->solve(d_f, d_u, stream);
    check("r2c");

    const cd::FusedLayout<Real> layout(shape);
    const double spectrum_bytes = 2.0 * double(layout.spectrum_elements()) * sizeof(Complex);
    const Timing copy = gpukit::tuning::time_copy(stream, bytes, warmup, repeat);
    // Each pass is timed alone, so the column pass runs again and again on the spectrum it left
    // (scaled down each time, towards zero): that changes the values, not the loads, stores and
    // arithmetic it issues.
    struct Line {
      const char* pass;
      Timing t;
      double bytes;  // moved per call, 0: not counted
    };
    const Line lines[] = {
        {"rows forward",
         gpukit::tuning::time_calls(stream, warmup, repeat,
                                    [&] { fused.forward_rows(d_f, stream); }),
         0},
        {"column pass",
         gpukit::tuning::time_calls(stream, warmup, repeat, [&] { fused.columns(stream); }),
         spectrum_bytes},
        {"rows inverse",
         gpukit::tuning::time_calls(stream, warmup, repeat,
                                    [&] { fused.inverse_rows(d_u, stream); }),
         0},
        {"fused solve",
         gpukit::tuning::time_calls(stream, warmup, repeat, [&] { fused.solve(d_f, d_u, stream); }),
         0},
        {"r2c solve",
         gpukit::tuning::time_calls(stream, warmup, repeat, [&] { r2c->solve(d_f, d_u, stream); }),
         0},
    };
    for (const Line& l : lines) {
      char range[64];
      std::snprintf(range, sizeof range, "%.4f (%.4f-%.4f)", l.t.median_ms, l.t.min_ms, l.t.max_ms);
      if (l.bytes > 0) {
        const double gbps = l.bytes / (l.t.median_ms * 1e6);
        const double copy_gbps = 2.0 * double(bytes) / (copy.median_ms * 1e6);
        std::printf("%-14s %-7s %-16s %24s %9.0f %7.1f%%\n", text.c_str(),
                    sizeof(Real) == 4 ? "float" : "double", l.pass, range, gbps,
                    100.0 * gbps / copy_gbps);
      } else {
        std::printf("%-14s %-7s %-16s %24s %9s %8s\n", text.c_str(),
                    sizeof(Real) == 4 ? "float" : "double", l.pass, range, "-", "-");
      }
    }
    std::printf("# %s: r2c / fused %.3fx\n", text.c_str(),
                lines[4].t.median_ms / lines[3].t.median_ms);
    GPUKIT_TUNING_CHECK(cudaFree(d_f));
    GPUKIT_TUNING_CHECK(cudaFree(d_u));
  }
  GPUKIT_TUNING_CHECK(cudaStreamDestroy(stream));
}

}  // namespace

int main(int argc, char** argv) {
  return gpukit::tuning::run_driver([&] {
    gpukit::tuning::Knobs knobs(argc, argv, "gpukit_tune_poisson",
                                {{"shapes",
                                  "4096x4096,8192x8192|grids (comma list; 512x512x512 "
                                  "for 3D)"},
                                 {"precision", "float|float or double"},
                                 {"warmup", "3|untimed calls before the samples"},
                                 {"repeat", "31|samples (the median is reported)"},
                                 {"seed", "1|seed of f"}});
    gpukit::tuning::print_device(knobs.summary());
    gpukit::tuning::for_precision(knobs.text("precision"),
                                  [&](auto zero) { run<decltype(zero)>(knobs); });
  });
}
