// The Poisson and Helmholtz solver: the call of `gpukit poisson` (apps/gpukit/cmd_poisson.cpp), a
// PoissonPlan and one solve, on a grid in host memory or on a CUDA device; or the distributed
// solve (gpukit/scale_out/poisson.hpp) over a device list or the ranks of an MPI job.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "arrays.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/pde/poisson.hpp"
#include "gpukit/scale_out/poisson.hpp"

namespace gpukit::python {

namespace {

// What makes two solves share a plan.
struct PlanKey {
  Context context;
  std::vector<std::int64_t> shape;
  std::vector<double> lengths;
  std::vector<pde::Boundary> boundaries;
  pde::Gauge gauge;
  bool strict;
  std::string variant;
  pde::Operator op;
  double helmholtz;

  bool operator==(const PlanKey& other) const {
    return context.backend == other.context.backend &&
           context.cuda_device == other.context.cuda_device && shape == other.shape &&
           lengths == other.lengths && boundaries == other.boundaries && gauge == other.gauge &&
           strict == other.strict && variant == other.variant && op == other.op &&
           helmholtz == other.helmholtz;
  }

  pde::PoissonGrid grid() const { return {shape, lengths, boundaries}; }
  pde::PoissonOptions options() const {
    pde::PoissonOptions o;
    o.gauge = gauge;
    o.strict = strict;
    o.variant = variant;
    o.op = op;
    o.helmholtz = helmholtz;
    return o;
  }
};

// The calling thread's last plan of each precision, kept so that a loop of solves on one grid
// plans once (a plan is made of FFT plans, wave-number tables and buffers; it is not used by two
// threads at once, hence one per thread). A device solve is queued, not waited for: before the
// plan serves a solve on another stream, or is replaced, the stream of its last solve is waited
// for, so that no solve in flight loses its buffers.
template <class Real>
struct PlanCache {
  std::optional<PlanKey> key;
  std::unique_ptr<pde::PoissonPlan<Real>> plan;
  bool in_flight = false;
  StreamHandle last_stream = {};

  pde::PoissonPlan<Real>& plan_for(const PlanKey& wanted, StreamHandle stream) {
    if (in_flight && (!(key && *key == wanted) || stream != last_stream)) {
      cuda::synchronize_stream(last_stream);
      in_flight = false;
    }
    if (!(key && *key == wanted)) {
      plan.reset();
      key.reset();
      plan =
          std::make_unique<pde::PoissonPlan<Real>>(wanted.context, wanted.grid(), wanted.options());
      key = wanted;
    }
    return *plan;
  }
};

template <class Real>
PlanCache<Real>& thread_plan_cache() {
  thread_local PlanCache<Real> cache;
  return cache;
}

// What a solve found out about f, for the Python layer (mean, mean_abs, mean_tolerance,
// mean_removed, the CLI's warning to issue as a RuntimeWarning) and the variant or engine used.
nb::dict solve_info(const pde::PoissonResult& result, const std::string& variant_used,
                    const std::vector<pde::Boundary>& boundaries) {
  nb::dict info;
  info["mean"] = result.mean;
  info["mean_abs"] = result.mean_abs;
  info["mean_tolerance"] = result.mean_tolerance;
  info["mean_removed"] = result.mean_removed;
  info["variant"] = variant_used;
  info["warning"] =
      result.mean_removed ? pde::describe_removed_mean(result, boundaries) : std::string();
  return info;
}

// The solve over a device list or the ranks of an MPI job (gpukit/scale_out/poisson.hpp: the
// call `gpukit poisson --device cuda:all` and `mpirun gpukit poisson` make): host f and u, every
// rank passing the whole f and getting the whole u.
nb::dict poisson_spread(const scale_out::Job& job, const InArray& f, const OutArray& u,
                        const PlanKey& key) {
  const pde::PoissonOptions options = key.options();
  const pde::PoissonGrid grid = key.grid();
  return with_real_type(f.dtype(), "poisson", [&](auto element) {
    using Real = decltype(element);
    pde::PoissonResult result;
    std::string engine;
    {
      nb::gil_scoped_release released;
      result = scale_out::solve_poisson<Real>(
          job, grid, options, span_of<Real>(f), span_of<Real>(u),
          [&engine](const scale_out::PoissonSpread& spread) { engine = spread.engine; });
    }
    return solve_info(result, engine, key.boundaries);
  });
}

nb::dict poisson(const InArray& f, const OutArray& u, const std::vector<double>& lengths,
                 std::string_view lengths_name, std::string_view boundary, std::string_view gauge,
                 bool strict, std::string_view op, double helmholtz, const std::string& variant,
                 std::string_view device, std::uintptr_t stream) {
  std::vector<std::int64_t> shape(f.ndim());
  for (std::size_t axis = 0; axis < f.ndim(); ++axis) {
    shape[axis] = static_cast<std::int64_t>(f.shape(axis));
  }
  pde::check_poisson_array_shape(shape, "f");
  const std::optional<scale_out::Job> job =
      spread_job(device, {{"f", place_of(f, "f")}, {"u", place_of(u, "u")}});
  const Placement where =
      job ? Placement{}
          : place_call(device, {{"f", place_of(f, "f")}, {"u", place_of(u, "u")}}, stream);
  require_like(u, count_of(f), f.dtype(), "poisson");
  // The CLI's rules for --length and --boundary: none (1 each, periodic), one for every axis, or
  // one per axis; --operator's names and --helmholtz's range.
  const int rank = static_cast<int>(shape.size());
  PlanKey key{where.context,
              shape,
              pde::axis_lengths(lengths_name, lengths, rank),
              pde::axis_boundaries("boundary", boundary, rank),
              pde::parse_gauge(gauge),
              strict,
              variant,
              pde::parse_operator(op, "operator"),
              pde::helmholtz_lambda("helmholtz", helmholtz)};
  pde::validate_grid(key.grid());
  if (job) return poisson_spread(*job, f, u, key);
  return with_real_type(f.dtype(), "poisson", [&](auto element) {
    using Real = decltype(element);
    pde::PoissonResult result;
    std::string variant_used;
    {
      nb::gil_scoped_release released;
      const DeviceGuard guard(where.context);
      PlanCache<Real>& cache = thread_plan_cache<Real>();
      pde::PoissonPlan<Real>& plan = cache.plan_for(key, where.stream);
      if (where.device_data) {
        result = plan.solve_on_device(data_of<Real>(f), data_of<Real>(u), where.stream);
        cache.in_flight = true;
        cache.last_stream = where.stream;
      } else {
        result = plan.solve(span_of<Real>(f), span_of<Real>(u));
      }
      variant_used = std::string(plan.variant());
    }
    return solve_info(result, variant_used, key.boundaries);
  });
}

}  // namespace

void bind_pde(nb::module_& m) {
  m.def("poisson", &poisson, nb::arg("f"), nb::arg("u"), nb::arg("lengths"),
        nb::arg("lengths_name"), nb::arg("boundary"), nb::arg("gauge"), nb::arg("strict"),
        nb::arg("operator"), nb::arg("helmholtz"), nb::arg("variant"), nb::arg("device"),
        nb::arg("stream"),
        "pde::PoissonPlan<Real>::solve (host f) or solve_on_device (CUDA f: waits for the sums "
        "of f, queues the solve on `stream`) of the 2-D or 3-D C-contiguous f into u (f's shape "
        "and dtype; f itself allowed). The plan is kept per thread for the next call on the same "
        "grid. Returns what the solve found out about f (mean, mean_abs, mean_tolerance, "
        "mean_removed, the CLI's warning) and the variant used. With a device list or under "
        "mpirun (host f): scale_out::solve_poisson, every rank the whole u, the engine as the "
        "variant.");
  m.def("_poisson_across_cpu_ranks", &scale_out::solves_across_cpu_ranks,
        "True when this build solves Poisson across CPU ranks of an MPI job (FFTW's MPI "
        "interface); without it such a solve is a ValueError.");
}

}  // namespace gpukit::python
