// The scale-out Poisson calls (poisson.hpp): arrays in memory and .npy files, over a Job's workers
// through DistributedPoissonPlan.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "gpukit/distributed/test_fault.hpp"
#include "gpukit/scale_out/npy_rows.hpp"
#include "gpukit/scale_out/poisson.hpp"

namespace gpukit::scale_out {

namespace {

// Where a job's parts run: one CPU part per rank, or each rank's GPUs.
struct Placement {
  Context context;
  std::vector<int> devices;  // empty on the CPU
};

Placement placement_of(const Job& job) {
  distributed::agree(*job.comm, [&] {
    if (job.mixes_backends()) {
      throw InvalidInput(
          "poisson: a spread solve runs every part on one backend, but this job mixes CPU and GPU "
          "workers (give every rank the same kind of device)");
    }
  });
  Placement place{job.workers.contexts.front(), {}};
  if (place.context.backend == Backend::cuda) {
    for (const Context& c : job.workers.contexts) place.devices.push_back(c.cuda_device);
  }
  return place;
}

template <class Real>
PoissonSpread spread_of(const DistributedPoissonPlan<Real>& plan, int ranks) {
  PoissonSpread spread;
  spread.grid = plan.grid();
  spread.single_precision = sizeof(Real) == sizeof(float);
  spread.engine = std::string(plan.engine());
  spread.ranks = ranks;
  for (int p = 0; p < plan.parts(); ++p) {
    spread.rows.push_back(slab_range(plan.grid().shape[0], plan.parts(), p).count);
  }
  return spread;
}

// This rank's rows of axis 0 (its parts' slabs, contiguous) and their parts' spans in `values`.
template <class Real>
SlabRange rows_of_rank(const DistributedPoissonPlan<Real>& plan) {
  const SlabRange first = plan.slab(0), last = plan.slab(plan.local_parts() - 1);
  return {first.begin, last.end() - first.begin};
}

template <class Real>
pde::PoissonResult solve_rows(DistributedPoissonPlan<Real>& plan, std::span<const Real> f,
                              std::span<Real> u, std::int64_t first_row) {
  std::vector<std::span<const Real>> fs;
  std::vector<std::span<Real>> us;
  for (int i = 0; i < plan.local_parts(); ++i) {
    const SlabRange s = plan.slab(i);
    const auto at = static_cast<std::size_t>((s.begin - first_row) * plan.row_elements());
    const auto n = static_cast<std::size_t>(s.count * plan.row_elements());
    fs.push_back(f.subspan(at, n));
    us.push_back(u.subspan(at, n));
  }
  return plan.solve(fs, us);
}

template <class Real>
pde::PoissonResult solve_file(const Job& job, const Placement& place, const io::NpyFileInfo& info,
                              pde::PoissonGrid grid, const PoissonFileRequest& request) {
  distributed::Communicator& comm = *job.comm;
  distributed::agree(comm, [&] { pde::validate_grid(grid); });
  DistributedPoissonPlan<Real> plan(place.context, grid, request.options, comm, place.devices);
  if (request.planned) request.planned(spread_of(plan, comm.size()));
  const SlabRange mine = rows_of_rank(plan);
  constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
  io::NpyArray rows =
      read_npy_rows_collectively(comm, request.input, {kFloats, "poisson"}, mine.begin, mine.count);
  distributed::agree(comm, [&] { distributed::inject_rank_fault(comm); });
  // Solved in place in the rows read when their dtype is the solve's precision (a slab of a grid
  // larger than one device is large: no second copy), else in a converted copy.
  std::vector<Real> converted;
  std::span<Real> values;
  if (rows.dtype == io::npy_dtype_of<Real>()) {
    values = rows.values<Real>();
  } else if (rows.dtype == io::NpyDtype::float32) {
    converted.assign(rows.values<float>().begin(), rows.values<float>().end());
    values = converted;
  } else {
    converted.assign(rows.values<double>().begin(), rows.values<double>().end());
    values = converted;
  }
  const pde::PoissonResult result =
      solve_rows<Real>(plan, std::span<const Real>(values), values, mine.begin);
  // Written in the input's dtype: straight from the solution when it has it.
  std::vector<std::byte> narrowed;
  std::span<const std::byte> bytes = std::as_bytes(std::span<const Real>(values));
  if (info.dtype != io::npy_dtype_of<Real>()) {
    auto convert = [&](auto element) {
      using T = decltype(element);
      narrowed.resize(values.size() * sizeof(T));
      T* out = reinterpret_cast<T*>(narrowed.data());
      for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<T>(values[i]);
    };
    if (info.dtype == io::NpyDtype::float32) {
      convert(float{});
    } else {
      convert(double{});
    }
    bytes = narrowed;
  }
  write_npy_rows_collectively(comm, request.output, info.dtype, info.shape, mine.begin, bytes);
  return result;
}

}  // namespace

template <class Real>
pde::PoissonResult solve_poisson(const Job& job, const pde::PoissonGrid& grid,
                                 const pde::PoissonOptions& options, std::span<const Real> f,
                                 std::span<Real> u,
                                 const std::function<void(const PoissonSpread&)>& planned) {
  distributed::Communicator& comm = *job.comm;
  const Placement place = placement_of(job);
  distributed::agree(comm, [&] {
    pde::validate_grid(grid);
    const auto n = static_cast<std::size_t>(grid.size());
    if (f.size() != n || u.size() != n) {
      throw InvalidInput(fmt::format("poisson: the grid {} has {} elements; f has {}, u has {}",
                                     grid.describe(), n, f.size(), u.size()));
    }
    const auto fb = reinterpret_cast<std::uintptr_t>(f.data());
    const auto ub = reinterpret_cast<std::uintptr_t>(u.data());
    if (fb != ub && fb < ub + n * sizeof(Real) && ub < fb + n * sizeof(Real)) {
      throw InvalidInput("poisson: u overlaps f without being the same array");
    }
  });
  DistributedPoissonPlan<Real> plan(place.context, grid, options, comm, place.devices);
  if (planned) planned(spread_of(plan, comm.size()));
  const SlabRange mine = rows_of_rank(plan);
  const auto at = static_cast<std::size_t>(mine.begin * plan.row_elements());
  const auto count = static_cast<std::size_t>(mine.count * plan.row_elements());
  const pde::PoissonResult result =
      solve_rows<Real>(plan, f.subspan(at, count), u.subspan(at, count), mine.begin);
  if (comm.distributed()) {
    // Every rank's rows on rank 0, in rank order (the order of the rows), then everywhere.
    const std::vector<std::byte> all =
        comm.gather(std::as_bytes(std::span<const Real>(u.subspan(at, count))), 0);
    if (comm.is_root() && !all.empty()) std::memcpy(u.data(), all.data(), all.size());
    comm.broadcast(std::as_writable_bytes(u), 0);
  }
  return result;
}

pde::PoissonResult solve_poisson_file(const Job& job, const PoissonFileRequest& request) {
  distributed::Communicator& comm = *job.comm;
  const Placement place = placement_of(job);
  distributed::agree(comm, [&] {
    if (request.output == "-") {
      throw InvalidInput(
          "poisson: a spread solve writes its output to a file (each rank writes its rows), not "
          "to standard output");
    }
  });
  constexpr io::NpyDtype kFloats[] = {io::NpyDtype::float32, io::NpyDtype::float64};
  const io::NpyFileInfo info =
      read_npy_info_collectively(comm, request.input, {kFloats, "poisson"});
  distributed::agree(comm,
                     [&] { pde::check_poisson_array_shape(info.shape, request.input.string()); });
  pde::PoissonGrid grid;
  grid.shape = info.shape;
  // The same header on every rank: the caller's rule throws alike everywhere, unagreed.
  if (request.lengths) grid.lengths = request.lengths(static_cast<int>(info.shape.size()));
  if (request.boundaries) grid.boundaries = request.boundaries(static_cast<int>(info.shape.size()));
  const bool single = request.precision.has_value() ? *request.precision == io::NpyDtype::float32
                                                    : info.dtype == io::NpyDtype::float32;
  if (single) return solve_file<float>(job, place, info, std::move(grid), request);
  return solve_file<double>(job, place, info, std::move(grid), request);
}

template pde::PoissonResult solve_poisson<float>(const Job&, const pde::PoissonGrid&,
                                                 const pde::PoissonOptions&, std::span<const float>,
                                                 std::span<float>,
                                                 const std::function<void(const PoissonSpread&)>&);
template pde::PoissonResult solve_poisson<double>(const Job&, const pde::PoissonGrid&,
                                                  const pde::PoissonOptions&,
                                                  std::span<const double>, std::span<double>,
                                                  const std::function<void(const PoissonSpread&)>&);

}  // namespace gpukit::scale_out
