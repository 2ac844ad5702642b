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

/// Builds the path of `nodes` (brownian_bridge_nodes of `steps`) one date at a time, in date
/// order: next(normal) returns W(t_m) for m = 1, 2, .. steps, calling normal(d), the normal of
/// dimension d, for the dimensions that date needs (each dimension once over the path). Several
/// walkers step side by side (a path of two factors: two bridges, one date at a time). A stack
/// of O(log steps) values; no array of `steps` values. Calling next more than `steps` times is
/// undefined.
template <class Real>
class BrownianBridgeWalker {
 public:
  GPUKIT_HD_INLINE BrownianBridgeWalker(const BrownianBridgeNode<Real>* nodes, std::uint32_t steps)
      : nodes_(nodes), steps_(steps) {}

  template <class NormalOf>
  GPUKIT_HD_INLINE Real next(NormalOf&& normal) {
    if (top_ == 0) {  // the first date: W(T) first
      const BrownianBridgeNode<Real>& last = nodes_[steps_ - 1];
      stack_date_[0] = steps_;
      stack_value_[0] = rounded::mul(last.std_dev, normal(last.dimension));
      top_ = 1;
    }
    for (;;) {
      const std::uint32_t right = stack_date_[top_ - 1];
      const Real w_right = stack_value_[top_ - 1];
      if (right - left_ < 2) {
        --top_;
        left_ = right;
        w_left_ = w_right;
        return w_right;
      }
      const std::uint32_t mid = left_ + (right - left_) / 2;
      const BrownianBridgeNode<Real>& node = nodes_[mid - 1];
      const Real mean = rounded::add(rounded::mul(node.left_weight, w_left_),
                                     rounded::mul(node.right_weight, w_right));
      stack_date_[top_] = mid;
      stack_value_[top_] = rounded::add(mean, rounded::mul(node.std_dev, normal(node.dimension)));
      ++top_;
    }
  }

 private:
  const BrownianBridgeNode<Real>* nodes_;
  std::uint32_t steps_;
  std::uint32_t stack_date_[kBrownianBridgeMaxDepth];
  Real stack_value_[kBrownianBridgeMaxDepth];
  int top_ = 0;
  std::uint32_t left_ = 0;
  Real w_left_ = 0;
};

/// Builds the path of `nodes` (brownian_bridge_nodes of `steps`) from normal(d), the normal of
/// dimension d (each called once), calling visit(m, W(t_m)) for m = 1 .. steps in order.
template <class Real, class NormalOf, class Visit>
GPUKIT_HD_INLINE void brownian_bridge_walk(const BrownianBridgeNode<Real>* nodes,
                                           std::uint32_t steps, NormalOf&& normal, Visit&& visit) {
  BrownianBridgeWalker<Real> walker(nodes, steps);
  for (std::uint32_t m = 1; m <= steps; ++m) visit(m, walker.next(normal));
}

}  // namespace gpukit::rng
