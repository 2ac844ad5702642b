#pragma once
// Internal: Andersen's QE step of heston rows in the independent Monte Carlo reference (written
// again from his paper and the contract in monte_carlo.hpp, in the order of operations of the
// pricer's heston_step) on bounded values, shared by the European reference
// (cpu/monte_carlo_reference.cpp) and the early-exercise one
// (cpu/monte_carlo_reference_american.cpp). Each operation's result carries a bound on how far
// the pricer's can be from it, from its operands' bounds and its own rounding. The scheme
// compares values with thresholds (s^2 > 0 and m > 0, psi <= psi_c, and the existence conditions
// of the martingale correction); where a comparison is closer than its operands' bounds the
// pricer may have taken the other branch, and from there on its path is another path: the
// reference follows every branch the bounds leave open (a path becomes a set of paths,
// advance_branches) and bounds what it computes from a path by the farthest of its branches'
// values. The comparison of U with p (v' = 0 below it) needs no branch: v' = max(0, ln((1-p)/(1-U))
// / beta) is continuous there, and so is every max(x, 0).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "finance/cpu/monte_carlo_reference_bounds.hpp"

namespace gpukit::finance::mc::reference {

// A heston row's step constants (monte_carlo_path_params.hpp's HestonStep) in long double from
// the rounded inputs, the magnitude of the terms K1, K2 and A are sums of (their error is
// relative to it) and the bound on the relative error of the pricer's constants (computed in
// double, then rounded to Real).
struct HestonConstants {
  LD v0 = 0, theta = 0, decay = 0, variance_c1 = 0, variance_c2 = 0, carry_dt = 0;
  LD k0 = 0, k1 = 0, k2 = 0, k3 = 0, k4 = 0, a = 0, half_k3 = 0;
  LD k_scale = 0, k34_scale = 0;
  LD parameter_error_rel = 0;
};

// A heston row's step constants from its inputs (each rounded to the pricing's precision as the
// pricer rounds them) and its rounded rate, dividend and time step.
HestonConstants heston_constants(Precision precision, double v0, double kappa, double theta,
                                 double sigma_v, double rho, LD rate, LD dividend, LD dt,
                                 const ErrorModel& m);

// The bounded arithmetic of a heston row's step (its constants' error).
inline BoundedArithmetic heston_arithmetic(const ErrorModel& m, const HestonConstants& h) {
  return {m.u, 2 * m.u, 10 * m.u, h.parameter_error_rel};
}

// A QE step's results: the next variance, the log-price's increment, and how many of the step's
// comparisons the bounds left open.
struct QeMove {
  Bounded variance, increment;
  int open = 0;
};

// One QE step from the variance v with the normals z_v, z_s (a mirror's already negated), taking
// at the i-th comparison the bounds leave open the other outcome where bit i of `flips` is set.
//
// The bound on the step's results is the smaller of two. (a) The operations' bounds carried
// through the step (rigorous, but blind to correlation: v enters m, s^2 and psi, whose errors it
// adds, so over many steps it grows about tenfold a step). (b) First order: the step's own
// rounding at the reference's inputs (the operations' bounds from exact v, z_v, z_s), plus how
// far the exact step moves when v or z_v moves by its bound (the larger of the two sides: the
// step is smooth on a branch, and max(., 0) is 1-Lipschitz), plus the diffusion times z_s's
// bound (the increment is linear in z_s). The comparisons are decided on (a)'s wider bounds.
QeMove qe_move(const HestonConstants& h, const BoundedArithmetic& ar, Bounded v, Bounded z_v,
               Bounded z_s, std::uint32_t flips);

// The branches one path may follow: more than this many and what the path gives is not bounded
// (its error infinite, which monte_carlo_agreement reports as over the bound). Each open
// comparison has a probability of the order of the rounding error, so a path rarely has two.
inline constexpr std::size_t kHestonMostBranches = 64;

// One step of a path followed on every branch its bounds leave open: `advance(path, flips)`
// steps a copy of each branch in `branches` (taking the other outcome at the open comparisons
// `flips` selects, qe_move's) and returns how many comparisons were open; every consistent choice
// of the open ones is taken, the reference's own (no flips) first, so branches[0] stays the
// reference's path. `moved` is scratch. False (and branches cut to the reference's own) when the
// path has more than kHestonMostBranches branches.
template <class Path, class Advance>
bool advance_branches(std::vector<Path>& branches, std::vector<Path>& moved,
                      const Advance& advance) {
  struct Pending {
    std::uint32_t flips;
    int first_free;  // the open comparisons from this one on may still be flipped
  };
  // A step makes at most 4 comparisons (8 by QeBranch's record): a depth-first walk over the
  // subsets of the open ones holds at most one more entry than there are of them.
  Pending pending[9];
  moved.clear();
  for (const Path& path : branches) {
    int top = 0;
    pending[top++] = {0, 0};
    while (top > 0) {
      const Pending at = pending[--top];
      Path after = path;
      const int open = advance(after, at.flips);
      moved.push_back(after);
      for (int i = open - 1; i >= at.first_free; --i) {
        pending[top++] = {at.flips | (1u << i), i + 1};
      }
    }
  }
  const bool bounded = moved.size() <= kHestonMostBranches;
  if (!bounded) moved.resize(1);
  branches.swap(moved);
  return bounded;
}

}  // namespace gpukit::finance::mc::reference
