// Andersen's QE step on bounded values (monte_carlo_reference_heston.hpp), shared by the
// European and the early-exercise parts of the independent Monte Carlo reference.

#include "finance/cpu/monte_carlo_reference_heston.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpukit::finance::mc::reference {

namespace {

// The outcomes of a step's comparisons: decided (the reference's outcome, or the other one at
// the i-th open comparison where bit i of `flips` is set) and recorded, or replayed (the same
// branch evaluated at other inputs).
struct QeBranch {
  std::uint32_t flips = 0;
  int open = 0;  // open comparisons met
  bool replay = false;
  int count = 0, at = 0;
  bool outcome[8] = {};

  bool operator()(Comparison c) {
    if (replay) return outcome[at++];
    bool holds = c.holds;
    if (c.open) {
      if (((flips >> open) & 1u) != 0) holds = !holds;
      ++open;
    }
    outcome[count++] = holds;
    return holds;
  }
};

struct QeStep {
  Bounded next, increment, diffusion;
};

// One QE step from the variance v with the normals z_v, z_s (the mirror's already negated), in
// the pricer's order of operations, on the branches `decide` picks.
QeStep qe_step(const HestonConstants& h, const BoundedArithmetic& ar, Bounded v, Bounded z_v,
               Bounded z_s, QeBranch& decide) {
  const Bounded one{1, 0}, zero{0, 0}, theta{h.theta, 0};
  const Bounded a_param = ar.parameter(h.a, h.k_scale);
  const Bounded mean = ar.mul_add(ar.sub(v, theta), ar.parameter(h.decay), theta);
  const Bounded s2 = ar.mul_add(v, ar.parameter(h.variance_c1), ar.parameter(h.variance_c2));
  Bounded next, correction;
  bool corrected = true;
  const bool random = decide(greater(s2, zero)) && decide(greater(mean, zero));
  if (!random) {
    next = BoundedArithmetic::max0(mean);
    correction = ar.mul({-a_param.value, a_param.error}, next);
  } else {
    const Bounded psi = ar.div(s2, ar.mul(mean, mean));
    if (!decide(greater(psi, {1.5L, 0}))) {  // psi <= psi_c = 1.5 (Andersen's): quadratic
      const Bounded two_over_psi = ar.div({2, 0}, psi);
      const Bounded b2 = ar.add(ar.sub(two_over_psi, one),
                                ar.mul(ar.sqrt(two_over_psi), ar.sqrt(ar.sub(two_over_psi, one))));
      const Bounded a = ar.div(mean, ar.add(one, b2));
      const Bounded root = ar.add(ar.sqrt(b2), z_v);
      next = ar.mul(a, ar.mul(root, root));
      const Bounded denominator = ar.sub(one, ar.mul(ar.add(a_param, a_param), a));
      if (decide(greater(denominator, zero))) {
        correction = ar.sub(ar.mul({0.5L, 0}, ar.log(denominator)),
                            ar.div(ar.mul(ar.mul(a_param, b2), a), denominator));
      } else {
        corrected = false;
      }
    } else {  // exponential
      const Bounded p = ar.div(ar.sub(psi, one), ar.add(psi, one));
      const Bounded survive = ar.sub(one, p);
      const Bounded beta = ar.div(survive, mean);
      // 1 - U = erfc(z_v / sqrt 2) / 2, 1/sqrt 2 rounded to Real.
      const Bounded scaled = ar.mul(z_v, {0.70710678118654752440L, ar.u * 0.7071067811865476L});
      const Bounded tail = ar.mul({0.5L, 0}, ar.erfc(scaled));
      next = BoundedArithmetic::max0(ar.div(ar.log(ar.div(survive, tail)), beta));
      if (decide(greater(beta, a_param))) {
        const Bounded inner = ar.add(p, ar.div(ar.mul(beta, survive), ar.sub(beta, a_param)));
        const Bounded log_inner = ar.log(inner);
        correction = {-log_inner.value, log_inner.error};
      } else {
        corrected = false;
      }
    }
  }
  Bounded drift;
  if (corrected) {
    drift = ar.add(ar.add(ar.parameter(h.carry_dt), correction),
                   ar.sub(ar.mul(ar.parameter(h.k2, h.k_scale), next),
                          ar.mul(ar.parameter(h.half_k3, h.k34_scale), v)));
  } else {
    drift = ar.add(ar.add(ar.parameter(h.carry_dt), ar.parameter(h.k0)),
                   ar.add(ar.mul(ar.parameter(h.k1, h.k_scale), v),
                          ar.mul(ar.parameter(h.k2, h.k_scale), next)));
  }
  const Bounded spread =
      ar.mul_add(ar.parameter(h.k3, h.k34_scale), v, ar.mul(ar.parameter(h.k4, h.k34_scale), next));
  const Bounded diffusion = ar.sqrt(BoundedArithmetic::max0(spread));
  return {next, ar.mul_add(diffusion, z_s, drift), diffusion};
}

}  // namespace

QeMove qe_move(const HestonConstants& h, const BoundedArithmetic& ar, Bounded v, Bounded z_v,
               Bounded z_s, std::uint32_t flips) {
  QeBranch branch;
  branch.flips = flips;
  const QeStep carried = qe_step(h, ar, v, z_v, z_s, branch);
  branch.replay = true;
  const auto exact_at = [&](LD variance, LD normal) {
    branch.at = 0;
    return qe_step(h, ar, {variance, 0}, {normal, 0}, {z_s.value, 0}, branch);
  };
  const QeStep local = exact_at(v.value, z_v.value);
  LD next_moves = 0, increment_moves = 0;
  for (const auto& [variance_moved, normal_moved] :
       {std::pair{std::max(v.value - v.error, LD(0)), z_v.value},
        std::pair{v.value + v.error, z_v.value}}) {
    const QeStep moved = exact_at(variance_moved, normal_moved);
    next_moves = std::max(next_moves, std::fabs(moved.next.value - local.next.value));
    increment_moves =
        std::max(increment_moves, std::fabs(moved.increment.value - local.increment.value));
  }
  LD next_moves_z = 0, increment_moves_z = 0;
  for (const LD normal_moved : {z_v.value - z_v.error, z_v.value + z_v.error}) {
    const QeStep moved = exact_at(v.value, normal_moved);
    next_moves_z = std::max(next_moves_z, std::fabs(moved.next.value - local.next.value));
    increment_moves_z =
        std::max(increment_moves_z, std::fabs(moved.increment.value - local.increment.value));
  }
  const LD next_error = next_moves + next_moves_z + local.next.error;
  const LD increment_error = increment_moves + increment_moves_z +
                             local.diffusion.value * z_s.error + local.increment.error;
  return {{local.next.value, tighter(carried.next.error, next_error)},
          {local.increment.value, tighter(carried.increment.error, increment_error)},
          branch.open};
}

HestonConstants heston_constants(Precision precision, double v0, double kappa_in, double theta,
                                 double sigma_v_in, double rho_in, LD rate, LD dividend, LD dt,
                                 const ErrorModel& m) {
  HestonConstants r;
  const LD kappa = rounded_to(precision, kappa_in);
  const LD sigma_v = rounded_to(precision, sigma_v_in);
  const LD rho = rounded_to(precision, rho_in);
  r.v0 = rounded_to(precision, v0);
  r.theta = rounded_to(precision, theta);
  r.decay = std::exp(-kappa * dt);
  const LD one_minus_decay = -std::expm1(-kappa * dt);
  r.variance_c1 = sigma_v * sigma_v * r.decay * one_minus_decay / kappa;
  r.variance_c2 = r.theta * sigma_v * sigma_v * one_minus_decay * one_minus_decay / (2 * kappa);
  r.carry_dt = (rate - dividend) * dt;
  r.k0 = 0, r.k1 = r.k2 = -dt / 4, r.k3 = r.k4 = dt / 2;  // sigma_v = 0: deterministic variance
  LD rho_over_sigma = 0;
  if (sigma_v > 0) {
    rho_over_sigma = rho / sigma_v;
    const LD tilt = dt / 2 * (kappa * rho_over_sigma - 0.5L);
    r.k0 = -rho_over_sigma * kappa * r.theta * dt;
    r.k1 = tilt - rho_over_sigma;
    r.k2 = tilt + rho_over_sigma;
    r.k3 = r.k4 = dt / 2 * (1 - rho * rho);
  }
  r.a = r.k2 + r.k4 / 2;
  r.half_k3 = r.k3 / 2;
  // K1, K2 and A are differences of terms up to this size; K3 = dt/2 (1 - rho^2) one of 1 and
  // rho^2, times dt/2.
  r.k_scale = std::fabs(rho_over_sigma) * (1 + dt * kappa) + dt;
  r.k34_scale = dt;
  // The pricer's constants: up to eight roundings in double and an exp or expm1 (1 ulp) whose
  // argument -kappa dt carries two, which the exponential turns into kappa dt times as much.
  constexpr LD kUd = 0x1p-53L;
  r.parameter_error_rel = m.u + kUd * (16 + 4 * kappa * dt);
  return r;
}

}  // namespace gpukit::finance::mc::reference
