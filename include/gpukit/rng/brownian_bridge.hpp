#pragma once
// The Brownian bridge construction of a Brownian path on `steps` equally spaced dates t_i = i T /
// steps, i = 1 .. steps, any count (Glasserman, "Monte Carlo Methods in Financial Engineering",
// 2004, section 3.1): the first normal drives the terminal value W(T) = sqrt(T) z_0, then each
// interval (l, r) of dates already built is bisected at m = l + (r - l) / 2 (date indices, rounded
// down), breadth first, by
//   W(t_m) = a W(t_l) + b W(t_r) + s z,   a = (r - m)/(r - l), b = (m - l)/(r - l),
//   s = sqrt((t_m - t_l)(t_r - t_m) / (t_r - t_l)),
// so normal number k drives the k-th largest scale. With quasi-random normals this puts the
// points' best coordinates on the path's largest variations (the effective dimension falls).
//
// The weights are computed once per step count on the host (brownian_bridge_nodes, in double,
// rounded once to Real); brownian_bridge_walk, for the CPU and CUDA kernels, builds one path in
// date order with a stack of O(log steps) values (no array of `steps` values per thread) and
// rounds every operation explicitly (gpukit/core/rounded_arithmetic.hpp), so the CPU and the GPU
// build the same bits from the same normals. Tested in tests/rng/brownian_bridge_test.cpp (the
// covariance min(t_i, t_j) of the linear map exactly and of sampled paths, the terminal value).

#include <cmath>
#include <cstdint>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/core/host_device.hpp"
#include "gpukit/core/rounded_arithmetic.hpp"

namespace gpukit::rng {

/// How date m (1 .. steps) is built: from the dates l < m < r that bracket it when it is built
/// (left_weight W(t_l) + right_weight W(t_r) + std_dev z_dimension); date `steps` has weights 0
/// and std_dev sqrt(T) on dimension 0.
template <class Real>
struct BrownianBridgeNode {
  std::uint32_t dimension = 0;
  Real left_weight = 0, right_weight = 0, std_dev = 0;
};

/// The largest stack brownian_bridge_walk needs (steps < 2^32: depth <= 33).
inline constexpr int kBrownianBridgeMaxDepth = 34;

/// The nodes of dates 1 .. steps (entry m - 1 for date m) over [0, maturity]; dimension 0 is the
/// terminal value and dimensions 1 .. steps - 1 the midpoints, breadth first. Throws InvalidInput
/// for steps 0 or a maturity that is not finite and >= 0. Cost: O(steps).
template <class Real>
std::vector<BrownianBridgeNode<Real>> brownian_bridge_nodes(std::uint32_t steps, double maturity) {
  if (steps == 0) throw InvalidInput("brownian bridge: steps must be >= 1");
  if (!(maturity >= 0) || !std::isfinite(maturity)) {
    throw InvalidInput("brownian bridge: the maturity must be finite and >= 0");
  }
  std::vector<BrownianBridgeNode<Real>> nodes(steps);
  const double dt = maturity / steps;
  nodes[steps - 1].std_dev = static_cast<Real>(std::sqrt(maturity));
  struct Interval {
    std::uint32_t left, right;
  };
  std::vector<Interval> queue{{0, steps}};
  std::uint32_t dimension = 1;
  for (std::size_t next = 0; next < queue.size(); ++next) {
    const auto [left, right] = queue[next];
    if (right - left < 2) continue;
    const std::uint32_t mid = left + (right - left) / 2;
    const double width = right - left, to_left = mid - left, to_right = right - mid;
    BrownianBridgeNode<Real>& node = nodes[mid - 1];
    node.dimension = dimension++;
    node.left_weight = static_cast<Real>(to_right / width);
    node.right_weight = static_cast<Real>(to_left / width);
    node.std_dev = static_cast<Real>(std::sqrt(dt * to_left * to_right / width));
    queue.push_back({left, mid});
    queue.push_back({mid, right});
  }
  return nodes;
}

/// Builds the path of `nodes` (brownian_bridge_nodes of `steps`) from normal(d), the normal of
/// dimension d (each called once), calling visit(m, W(t_m)) for m = 1 .. steps in order.
template <class Real, class NormalOf, class Visit>
GPUKIT_HD_INLINE void brownian_bridge_walk(const BrownianBridgeNode<Real>* nodes,
                                           std::uint32_t steps, NormalOf&& normal, Visit&& visit) {
  std::uint32_t stack_date[kBrownianBridgeMaxDepth];
  Real stack_value[kBrownianBridgeMaxDepth];
  const BrownianBridgeNode<Real>& last = nodes[steps - 1];
  stack_date[0] = steps;
  stack_value[0] = rounded::mul(last.std_dev, normal(last.dimension));
  int top = 1;
  std::uint32_t left = 0;
  Real w_left = 0;
  while (top > 0) {
    const std::uint32_t right = stack_date[top - 1];
    const Real w_right = stack_value[top - 1];
    if (right - left >= 2) {
      const std::uint32_t mid = left + (right - left) / 2;
      const BrownianBridgeNode<Real>& node = nodes[mid - 1];
      const Real mean = rounded::add(rounded::mul(node.left_weight, w_left),
                                     rounded::mul(node.right_weight, w_right));
      stack_date[top] = mid;
      stack_value[top] = rounded::add(mean, rounded::mul(node.std_dev, normal(node.dimension)));
      ++top;
    } else {
      --top;
      visit(right, w_right);
      left = right;
      w_left = w_right;
    }
  }
}

}  // namespace gpukit::rng
