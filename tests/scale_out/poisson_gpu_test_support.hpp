#pragma once
// Shared by the distributed Poisson solver's GPU tests: its solve with the right-hand side split
// into the plan's slabs, through the host path or the device path, joined back into the whole
// grid; the grids the tests use.

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/scale_out/poisson.hpp"

namespace gpukit::pde::testing {

using scale_out::DistributedPoissonPlan;
using scale_out::SlabRange;

// Splits the whole-grid vector into the plan's local slabs.
template <class T>
std::vector<std::vector<T>> slabs_of(const std::vector<T>& v,
                                     const DistributedPoissonPlan<T>& plan) {
  std::vector<std::vector<T>> out;
  const auto row = static_cast<std::ptrdiff_t>(plan.row_elements());
  for (int i = 0; i < plan.local_parts(); ++i) {
    const SlabRange s = plan.slab(i);
    out.emplace_back(v.begin() + s.begin * row, v.begin() + (s.begin + s.count) * row);
  }
  return out;
}

template <class T>
std::vector<T> joined(const std::vector<std::vector<T>>& parts) {
  std::vector<T> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// The host path's solution (joined), and the result.
template <class Real>
std::vector<Real> solve_host(DistributedPoissonPlan<Real>& plan, const std::vector<Real>& f,
                             PoissonResult* result = nullptr) {
  const std::vector<std::vector<Real>> f_parts = slabs_of(f, plan);
  std::vector<std::vector<Real>> u_parts;
  std::vector<std::span<const Real>> fs;
  std::vector<std::span<Real>> us;
  for (const auto& p : f_parts)
    u_parts.emplace_back(p.size(), std::numeric_limits<Real>::quiet_NaN());
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    fs.emplace_back(f_parts[i]);
    us.emplace_back(u_parts[i]);
  }
  const PoissonResult r = plan.solve(fs, us);
  if (result != nullptr) *result = r;
  return joined(u_parts);
}

// The device path's solution (joined): each part's slab copied to its device, solved in place.
template <class Real>
std::vector<Real> solve_device(DistributedPoissonPlan<Real>& plan, const std::vector<int>& devices,
                               const std::vector<Real>& f, PoissonResult* result = nullptr) {
  const std::vector<std::vector<Real>> f_parts = slabs_of(f, plan);
  std::vector<cuda::DeviceBuffer<Real>> buffers;
  std::vector<const Real*> in;
  std::vector<Real*> out;
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    cuda::set_device(devices[i]);
    buffers.emplace_back(std::max<std::size_t>(1, f_parts[i].size()));
    if (!f_parts[i].empty()) buffers.back().copy_from_host(f_parts[i]);
    in.push_back(buffers.back().data());
    out.push_back(buffers.back().data());
  }
  const PoissonResult r = plan.solve_on_device(in, out);
  if (result != nullptr) *result = r;
  std::vector<Real> u;
  for (std::size_t i = 0; i < f_parts.size(); ++i) {
    cuda::set_device(devices[i]);
    std::vector<Real> part(f_parts[i].size());
    if (!part.empty()) buffers[i].copy_to_host(part);
    u.insert(u.end(), part.begin(), part.end());
  }
  return u;
}

inline std::vector<PoissonGrid> grids() {
  return {{{13, 10}, {1.0, 2.0}},
          {{2, 9}, {}},
          {{64, 48}, {2.0, 0.5}},
          {{7, 6, 5}, {}},
          {{9, 4, 6}, {1, 2, 3}},
          {{2, 3, 4}, {}},
          {{33, 20, 17}, {}},
          // Several whole tiles of the mean rule's sums (16384 elements each) inside each part,
          // and the parts' ends inside tiles.
          {{67, 40, 33}, {}}};
}

}  // namespace gpukit::pde::testing
