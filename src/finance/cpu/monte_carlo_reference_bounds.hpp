#pragma once
// Internal: the bounded arithmetic of the independent Monte Carlo reference (monte_carlo.hpp's
// monte_carlo_reference; cpu/monte_carlo_reference.cpp, its early-exercise part
// cpu/monte_carlo_reference_american.cpp and the QE step of heston rows,
// cpu/monte_carlo_reference_heston.cpp): long-double values with a bound on how far the pricer's
// value can be from each, the error model of each computing precision, the Philox normals of the
// contract, a quad's samples and the sums of a row's samples. Shares nothing with the pricer but
// rng::philox4x32_10.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "gpukit/finance/instrument.hpp"
#include "gpukit/finance/monte_carlo.hpp"
#include "gpukit/rng/philox.hpp"

namespace gpukit::finance::mc::reference {

using LD = long double;

// The error model of one computing precision (the pricer's Real), from the documented accuracy
// of what each backend calls: double: the platform's exp/log/sin/cos/sqrt within 2 ulps on the
// CPU and on the GPU; float: the GPU's approximations as the PTX ISA states them (lg2.approx
// absolute 2^-22.6, sin/cos.approx absolute 2^-20.9 on [-pi, pi], ex2.approx relative 2^-22.5),
// rounded up, which also covers the CPU's accurate float functions.
struct ErrorModel {
  LD u;            // unit roundoff of Real
  LD log_abs;      // absolute error of the log2 of a uniform (float), or 0
  LD trig_abs;     // absolute error of cos / sin of the angle
  LD exp_rel;      // relative error of exp
  bool fast_math;  // float: the multiply by 1/ln 2 before exp2 adds u |y|
};

inline ErrorModel model_of(Precision precision) {
  constexpr LD kUnitDouble = 0x1p-53L;
  if (precision == Precision::float64) {
    return {kUnitDouble, 0, 4 * kUnitDouble, 2 * kUnitDouble, false};
  }
  constexpr LD kUnitFloat = 0x1p-24L;
  return {kUnitFloat, 0x1p-22L, 0x1p-20L + 4 * kUnitFloat, 0x1p-22L + 2 * kUnitFloat, true};
}

inline LD rounded_to(Precision precision, double value) {
  return precision == Precision::float32 ? LD(static_cast<float>(value)) : LD(value);
}

// A row's inputs rounded to the pricing's precision, as the pricer rounds them.
struct RoundedInputs {
  LD spot, strike, maturity, rate, sigma, dividend;
};
inline RoundedInputs rounded_inputs(const MonteCarloBookView& book, std::int64_t i,
                                    Precision precision) {
  const auto per = [i](const PerOption<double>& p) { return p.values ? p.values[i] : p.scalar; };
  return {rounded_to(precision, book.spot[i]),         rounded_to(precision, book.strike[i]),
          rounded_to(precision, book.maturity[i]),     rounded_to(precision, per(book.rate)),
          rounded_to(precision, per(book.volatility)), rounded_to(precision, per(book.dividend))};
}

// A value and the bound on its error.
struct Bounded {
  LD value = 0, error = 0;
};

// One sample's x (payoff in spot units) and c (S_T / S0) with their error bounds.
struct Sample {
  Bounded x, c;
};

// The normals of a quad at a step: z[j] for paths 4q + j, each with its error bound.
inline void quad_normals(std::uint64_t stream, const ErrorModel& m, Precision precision,
                         std::uint64_t seed, std::uint64_t quad, std::uint32_t step, Bounded z[4]) {
  // The counter layout of monte_carlo.hpp: (quad, the stream key's bits 32-63, step word, its
  // bits 0-31), quads below 2^32.
  const rng::Uint32x2 key{
      {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)}};
  auto words = [&](std::uint32_t step_word) {
    const rng::Uint32x4 counter{{static_cast<std::uint32_t>(quad),
                                 static_cast<std::uint32_t>(stream >> 32), step_word,
                                 static_cast<std::uint32_t>(stream)}};
    return rng::philox4x32_10(counter, key);
  };
  auto box_muller = [&](LD u1, LD u2, Bounded& first, Bounded& second) {
    const LD minus_two_log = -2 * std::log(u1);
    const LD r = std::sqrt(minus_two_log);
    const LD angle = 2 * 3.14159265358979323846264338327950288L * u2;
    // -2 ln u1: the log's error (float: absolute in log2, times 2 ln 2) and the product's.
    const LD d_r2 =
        2 * 0.693147180559945309417232121458176568L * m.log_abs + 2 * m.u * minus_two_log;
    const LD d_r = std::min(std::sqrt(d_r2), r > 0 ? d_r2 / r : std::sqrt(d_r2)) + 2 * m.u * r;
    first.value = r * std::cos(angle);
    second.value = r * std::sin(angle);
    first.error = d_r + r * m.trig_abs + m.u * std::fabs(first.value);
    second.error = d_r + r * m.trig_abs + m.u * std::fabs(second.value);
  };
  if (precision == Precision::float32) {
    // uniform_float: (m + 1/2) 2^-23 with m the top 23 bits of a word; two pairs from one call.
    const rng::Uint32x4 w = words(step);
    for (int pair = 0; pair < 2; ++pair) {
      const LD u1 = (LD(w.word[2 * pair] >> 9) + 0.5L) * 0x1p-23L;
      const LD u2 = (LD(w.word[2 * pair + 1] >> 9) + 0.5L) * 0x1p-23L;
      box_muller(u1, u2, z[2 * pair], z[2 * pair + 1]);
    }
  } else {
    // uniform_double: (m + 1/2) 2^-52 with m = 32 bits of one word and 20 of the next; one pair
    // per call, blocks 2 step and 2 step + 1.
    for (std::uint32_t block = 0; block < 2; ++block) {
      const rng::Uint32x4 w = words(2 * step + block);
      auto uniform = [](std::uint32_t high, std::uint32_t low) {
        const std::uint64_t bits = (std::uint64_t{high} << 20) | (low >> 12);
        return (LD(bits) + 0.5L) * 0x1p-52L;
      };
      box_muller(uniform(w.word[0], w.word[1]), uniform(w.word[2], w.word[3]), z[2 * block],
                 z[2 * block + 1]);
    }
  }
}

// The samples of a quad from its paths' payoffs x and controls c: each path's, or with antithetic
// variates each pair's mean (path j and its mirror j + 4), whose sum the pricer rounds once with
// unit roundoff `u` (the halving is exact).
inline void combine_samples(LD u, bool antithetic, const Bounded x[8], const Bounded c[8],
                            Sample out[4]) {
  for (int j = 0; j < 4; ++j) {
    if (antithetic) {
      out[j].x.value = 0.5L * (x[j].value + x[j + 4].value);
      out[j].x.error = 0.5L * (x[j].error + x[j + 4].error) + u * std::fabs(out[j].x.value);
      out[j].c.value = 0.5L * (c[j].value + c[j + 4].value);
      out[j].c.error = 0.5L * (c[j].error + c[j + 4].error) + u * std::fabs(out[j].c.value);
    } else {
      out[j] = {x[j], c[j]};
    }
  }
}

// exp of a log-price y computed with error dy: the value and its error bound.
inline Bounded exp_bounded(const ErrorModel& m, LD y, LD dy) {
  LD exp_error = m.exp_rel;
  if (m.fast_math) exp_error += m.u * std::fabs(y);  // the multiply by 1/ln 2 before exp2
  const LD value = std::exp(y);
  return Bounded{value, value * (std::expm1(dy) + exp_error * std::exp(dy))};
}

// The bounded arithmetic: each operation's result, and a bound on how far the pricer's can be
// from it, from its operands' bounds and its own rounding. The relative errors of the pricer's
// functions (Heston's step), from their documented accuracy:
// log: 1 ulp (CUDA's log and logf, CUDA C++ Programming Guide, "Mathematical Functions"; glibc's
// within 1 ulp); erfc: 5 ulps (CUDA's erfc; its erfcf is within 4, glibc's erfc and erfcf within
// 5 on x86-64); sqrt is correctly rounded on both sides (std::sqrt, __fsqrt_rn, __dsqrt_rn), as
// are + - * / (rounded_arithmetic.hpp). An ulp is at most 2u of the value.
struct BoundedArithmetic {
  LD u;              // Real's unit roundoff
  LD log_rel;        // 2u
  LD erfc_rel;       // 10u
  LD parameter_rel;  // of the step constants (Row::parameter_error_rel)

  static Bounded unbounded(LD v) { return {v, std::numeric_limits<LD>::infinity()}; }
  // The pricer's rounding of a result whose operands made it d away from v.
  Bounded rounded(LD v, LD d) const { return {v, d + u * (std::fabs(v) + d)}; }
  Bounded add(Bounded a, Bounded b) const { return rounded(a.value + b.value, a.error + b.error); }
  Bounded sub(Bounded a, Bounded b) const { return rounded(a.value - b.value, a.error + b.error); }
  static LD product_error(Bounded a, Bounded b) {
    return std::fabs(a.value) * b.error + std::fabs(b.value) * a.error + a.error * b.error;
  }
  Bounded mul(Bounded a, Bounded b) const {
    return rounded(a.value * b.value, product_error(a, b));
  }
  // a * b + c: fused on the device, two roundings on the CPU.
  Bounded mul_add(Bounded a, Bounded b, Bounded c) const {
    const LD product = a.value * b.value, d_product = product_error(a, b);
    const Bounded sum =
        rounded(product + c.value, d_product + u * (std::fabs(product) + d_product) + c.error);
    return sum;
  }
  Bounded div(Bounded a, Bounded b) const {
    const LD v = a.value / b.value;
    if (!(b.error < std::fabs(b.value))) return unbounded(v);
    return rounded(v, (a.error + std::fabs(v) * b.error) / (std::fabs(b.value) - b.error));
  }
  // sqrt of max(a, 0) (the pricer's radicands are >= 0 where they are taken): |sqrt a' - sqrt a|
  // <= min(sqrt |a' - a|, |a' - a| / sqrt a).
  Bounded sqrt(Bounded a) const {
    const LD v = std::sqrt(std::max(a.value, LD(0)));
    const LD d = v > 0 ? std::min(std::sqrt(a.error), a.error / v) : std::sqrt(a.error);
    return rounded(v, d);
  }
  Bounded log(Bounded a) const {
    const LD v = std::log(a.value);
    if (!(a.error < a.value)) return unbounded(v);
    const LD d = -std::log1p(-a.error / a.value);
    return {v, d + log_rel * (std::fabs(v) + d)};
  }
  // |erfc'(x)| = 2/sqrt(pi) e^{-x^2}, at its largest over [x - e, x + e].
  Bounded erfc(Bounded a) const {
    const LD v = std::erfc(a.value);
    const LD nearest = std::max(LD(0), std::fabs(a.value) - a.error);
    const LD d = 1.12837916709551257390L * std::exp(-nearest * nearest) * a.error;
    return {v, d + erfc_rel * (v + d)};
  }
  // max(a, 0): the pricer's max(a', 0) with |a' - a| <= e is exactly 0 where a + e <= 0 (so that
  // a variance the QE step sets to 0 is known exactly, and the square root of the next step's
  // spread, not Lipschitz at 0, does not turn a rounding e into sqrt(e)); otherwise within a + e
  // of 0 where a < 0, and within e (max is 1-Lipschitz).
  static Bounded max0(Bounded a) {
    if (a.value + a.error <= 0) return {0, 0};
    return {std::max(a.value, LD(0)), a.value < 0 ? a.value + a.error : a.error};
  }
  Bounded parameter(LD value) const { return {value, parameter_rel * std::fabs(value)}; }
  // A constant computed as a sum of terms of magnitude up to `scale`.
  Bounded parameter(LD value, LD scale) const {
    return {value, u * std::fabs(value) + parameter_rel * std::max(std::fabs(value), scale)};
  }
};

// A comparison x > y the pricer makes: its outcome on the reference's values, and whether the
// bounds allow the pricer the other one (exact operands, error 0, leave nothing open: sigma_v = 0
// makes s^2 exactly 0).
struct Comparison {
  bool holds = false, open = false;
};
inline Comparison greater(Bounded x, Bounded y) {
  const LD error = x.error + y.error;
  return {x.value > y.value, error > 0 && std::fabs(x.value - y.value) <= error};
}

// The smaller of two bounds, a NaN (an operation the bounds made undefined) not being one.
inline LD tighter(LD a, LD b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return std::min(a, b);
}

// Sums over a block of samples, from the shifts (x0, c0) of the option's first sample.
struct Sums {
  LD n = 0;
  LD sx = 0, sxx = 0, sc = 0, scc = 0, sxc = 0;  // of x - x0 and c - c0
  LD ax = 0, ac = 0, axx = 0, acc = 0;           // of |x|, |c|, x^2, c^2
  LD ex = 0, ec = 0;                             // of the error bounds
  LD exx = 0, ecc = 0, exc = 0, ecx = 0;  // |x - x0| dx, |c - c0| dc, |c - c0| dx, |x - x0| dc
  LD ex2 = 0, ec2 = 0, exec = 0;          // dx^2, dc^2, dx dc: the moments' second-order terms
  LD max_x = 0, max_c = 0;

  void add(const Sample& s, LD x0, LD c0) {
    const LD dx = s.x.value - x0, dc = s.c.value - c0;
    n += 1;
    sx += dx, sxx += dx * dx, sc += dc, scc += dc * dc, sxc += dx * dc;
    ax += std::fabs(s.x.value), ac += std::fabs(s.c.value);
    axx += s.x.value * s.x.value, acc += s.c.value * s.c.value;
    ex += s.x.error, ec += s.c.error;
    exx += std::fabs(dx) * s.x.error, ecc += std::fabs(dc) * s.c.error;
    exc += std::fabs(dc) * s.x.error, ecx += std::fabs(dx) * s.c.error;
    ex2 += s.x.error * s.x.error, ec2 += s.c.error * s.c.error, exec += s.x.error * s.c.error;
    max_x = std::max(max_x, std::fabs(s.x.value)), max_c = std::max(max_c, std::fabs(s.c.value));
  }
  void add(const Sums& o) {
    n += o.n;
    sx += o.sx, sxx += o.sxx, sc += o.sc, scc += o.scc, sxc += o.sxc;
    ax += o.ax, ac += o.ac, axx += o.axx, acc += o.acc;
    ex += o.ex, ec += o.ec, exx += o.exx, ecc += o.ecc, exc += o.exc, ecx += o.ecx;
    ex2 += o.ex2, ec2 += o.ec2, exec += o.exec;
    max_x = std::max(max_x, o.max_x), max_c = std::max(max_c, o.max_c);
  }
};

// A row's reference values and their bounds (monte_carlo.hpp's MonteCarloReference, one row).
struct RowReference {
  double price = 0, std_error = 0, price_bound = 0, std_error_bound = 0;
};

// The plain estimator (no control variate) from a row's sums about its first sample x0, in
// units that `scale` turns into the price (the pricer's one rounding of that product and of its
// square root included): mean and standard error with their bounds, the pricer's sums'
// rounding `gamma` relative to sum |x| and sum (|x| + max |x|)^2. A moment's bound: 2 sum |x -
// mean| dx + sum dx^2 (first and second order; the mean's own shift cancels to first order).
inline RowReference plain_estimate(const Sums& s, LD x0, LD gamma, LD scale) {
  constexpr LD kUd = 0x1p-53L;
  const LD count = s.n;
  const LD mean = x0 + s.sx / count;
  const LD m2 = std::max(LD(0), s.sxx - s.sx * s.sx / count);
  const LD d_mean = s.ex / count + gamma * (s.ax / count + s.max_x);
  const LD square = s.axx + 2 * s.max_x * s.ax + count * s.max_x * s.max_x;
  const LD d_m2 = 2 * (s.exx + std::fabs(x0 - mean) * s.ex) + s.ex2 + gamma * square;
  RowReference r;
  const LD price = scale * mean;
  r.price = static_cast<double>(price);
  r.price_bound = static_cast<double>(scale * d_mean + 6 * kUd * std::fabs(price));
  const LD variance = count > 1 ? m2 / (count - 1) : 0;
  const LD std_error = scale * std::sqrt(variance / count);
  r.std_error = static_cast<double>(std_error);
  if (count > 1) {
    const LD d_variance = d_m2 / (count - 1);
    const LD root_gap =
        std::min(std::sqrt(d_variance),
                 variance > 0 ? d_variance / std::sqrt(variance) : std::sqrt(d_variance));
    r.std_error_bound =
        static_cast<double>(scale * root_gap / std::sqrt(count) + 8 * kUd * std_error);
  }
  return r;
}

/// Row i of `book` (an early-exercise row) by the early-exercise reference
/// (cpu/monte_carlo_reference_american.cpp); InvalidInput naming the row for what it does not
/// check. `threads` 0: all.
RowReference american_reference(const MonteCarloBookView& book, std::int64_t i,
                                const MonteCarloOptions& options, int threads);

}  // namespace gpukit::finance::mc::reference
