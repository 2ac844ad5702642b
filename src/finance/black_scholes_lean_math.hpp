#pragma once
// Internal: call and put of one option with the least arithmetic we know how to do at the same
// accuracy as detail::price_option (black_scholes_math.hpp), for the `lean-math` CUDA variant.
// Kept host-and-device so the CPU tests check it against price_option on extreme books.
//
// What it saves over price_option, per option:
// - sqrt(T) and two divisions become one reciprocal square root and reciprocals:
//   1/(sigma sqrt T) = rsqrt(T) (1/sigma); F/K = F (1/K).
// - Hull's CND needs phi(d) for both d1 and d2; the identity F phi(d1) = K phi(d2) (F = S e^{-qT},
//   K = X e^{-rT}, since d1^2 - d2^2 = 2 ln(F/K)) gives both from one exponential.
// - Both prices come from the two small tails F N(-|d1|) and K N(-|d2|) (the large tails by one
//   subtraction each), not from four CND values; neither price loses relative accuracy to the
//   cancellation in 1 - N(d), as in price_option.
// - In double, exp and log are lean_exp_double and lean_log_double below (within 1 ulp, measured
//   by the CPU tests; the library's beyond their ranges), whose coefficients cost no extra
//   instructions.
// - Options with sigma, T or sigma sqrt T below the smallest normal number are priced as the
//   discounted intrinsic value: the formula differs from it by at most 0.4 sigma sqrt T
//   max(F, K), below any rounding of the price. (price_option does so for exact zeros only.)
// NaN inputs give NaN outputs, as in price_option.
//
// The float fast mode (NormalCdf::hull_polynomial_fast_math) on the GPU uses the single hardware
// instructions behind __expf and __logf and the approximate reciprocal and reciprocal square root
// (each within 2 ulp, about 2^-22 relative), without __expf's handling of results below 2^-126:
// those are flushed to zero, below the price's rounding.

#include <math.h>

#include <bit>
#include <cstdint>
#include <limits>

#include "finance/black_scholes_math.hpp"

namespace gpukit::finance::detail {

template <class Real>
struct CallPut {
  Real call, put;
};

inline constexpr double kLog2E = 1.4426950408889634073599246810019;
inline constexpr double kLn2 = 0.69314718055994530941723212145818;

// ---------------------------------------------------------------------------------------------
// Double exp and log for the lean path. The FP64 units are not what limits a double kernel: each
// 64-bit constant of libdevice's polynomials is an immediate that costs two move instructions
// next to its DFMA, so the issue slots run out first. These functions read their coefficients
// from constant memory (one DFMA operand) and skip the range handling for arguments that never
// need it; anything else goes to the library.
struct LeanDoubleCoefficients {
  double exp_series[3];    // 1/120, 1/24, 1/6: e^r - 1 = r (1 + r/2 + r^2/6 + r^3/24 + r^4/120)
  double log1p_series[4];  // 1/7, -1/6, 1/5, 1/3: log(1+r) = r + r^2 (-1/2 + r/3 - ... - r^6/8)
  double hull[5];          // Hull's polynomial, highest power first
  double exp_ln2_64[2];  // ln 2 / 64 = hi + lo, hi to full precision (the reduction's FMA is exact)
  double log_ln2[2];     // ln 2 = hi + lo, hi a multiple of 2^-42 (k hi is exact for |k| < 2^11)
  // Constants of the double path that have no DFMA immediate form (each would cost two moves).
  double exp_64_log2e;      // 64 / ln 2
  double hull_scale;        // 0.2316419
  double inv_sqrt_2pi;      // 1 / sqrt(2 pi)
  double log_inv_sqrt_2pi;  // ln(1 / sqrt(2 pi))
  // 2^(j/64) = hi + lo, j = 0..63, hi correctly rounded and lo the rest (|lo| < 2^-53 hi), from
  // 60-digit decimal arithmetic.
  double exp2_fraction[64][2];
  // Per interval i of lean_log_double's reduced argument z (128 of them on [0.707, 1.414)):
  // {1/c, -ln(1/c) = hi + lo, 0}. 1/c is 1/(interval centre) rounded to a multiple of 2^-7
  // (z < 1) or 2^-8 (z >= 1), so that z (1/c) - 1 takes at most 53 bits and the FMA computes it
  // exactly; it is 1 on the two intervals next to 1. hi is a multiple of 2^-42, so k ln2_hi + hi
  // is exact. From 70-digit decimal arithmetic.
  double log_table[128][4];
};
inline constexpr LeanDoubleCoefficients kLeanDoubleCoefficients = {
    {1.0 / 120, 1.0 / 24, 1.0 / 6},
    {1.0 / 7, -1.0 / 6, 1.0 / 5, 1.0 / 3},
    {1.330274429, -1.821255978, 1.781477937, -0.356563782, 0.31938153},
    {0x1.62e42fefa39efp-7, 0x1.abc9e3b39803fp-62},
    {0x1.62e42fefa3800p-1, 0x1.ef35793c76730p-45},
    64 * kLog2E,
    0.2316419,
    kInvSqrt2Pi,
    -0.91893853320467274178032973640562,
    {{0x1.0000000000000p+0, 0x0.0p+0},
     {0x1.02c9a3e778061p+0, -0x1.19083535b085dp-56},
     {0x1.059b0d3158574p+0, 0x1.d73e2a475b465p-55},
     {0x1.0874518759bc8p+0, 0x1.186be4bb284ffp-57},
     {0x1.0b5586cf9890fp+0, 0x1.8a62e4adc610bp-54},
     {0x1.0e3ec32d3d1a2p+0, 0x1.03a1727c57b53p-59},
     {0x1.11301d0125b51p+0, -0x1.6c51039449b3ap-54},
     {0x1.1429aaea92de0p+0, -0x1.32fbf9af1369ep-54},
     {0x1.172b83c7d517bp+0, -0x1.19041b9d78a76p-55},
     {0x1.1a35beb6fcb75p+0, 0x1.e5b4c7b4968e4p-55},
     {0x1.1d4873168b9aap+0, 0x1.e016e00a2643cp-54},
     {0x1.2063b88628cd6p+0, 0x1.dc775814a8495p-55},
     {0x1.2387a6e756238p+0, 0x1.9b07eb6c70573p-54},
     {0x1.26b4565e27cddp+0, 0x1.2bd339940e9d9p-55},
     {0x1.29e9df51fdee1p+0, 0x1.612e8afad1255p-55},
     {0x1.2d285a6e4030bp+0, 0x1.0024754db41d5p-54},
     {0x1.306fe0a31b715p+0, 0x1.6f46ad23182e4p-55},
     {0x1.33c08b26416ffp+0, 0x1.32721843659a6p-54},
     {0x1.371a7373aa9cbp+0, -0x1.63aeabf42eae2p-54},
     {0x1.3a7db34e59ff7p+0, -0x1.5e436d661f5e3p-56},
     {0x1.3dea64c123422p+0, 0x1.ada0911f09ebcp-55},
     {0x1.4160a21f72e2ap+0, -0x1.ef3691c309278p-58},
     {0x1.44e086061892dp+0, 0x1.89b7a04ef80d0p-59},
     {0x1.486a2b5c13cd0p+0, 0x1.3c1a3b69062f0p-56},
     {0x1.4bfdad5362a27p+0, 0x1.d4397afec42e2p-56},
     {0x1.4f9b2769d2ca7p+0, -0x1.4b309d25957e3p-54},
     {0x1.5342b569d4f82p+0, -0x1.07abe1db13cadp-55},
     {0x1.56f4736b527dap+0, 0x1.9bb2c011d93adp-54},
     {0x1.5ab07dd485429p+0, 0x1.6324c054647adp-54},
     {0x1.5e76f15ad2148p+0, 0x1.ba6f93080e65ep-54},
     {0x1.6247eb03a5585p+0, -0x1.383c17e40b497p-54},
     {0x1.6623882552225p+0, -0x1.bb60987591c34p-54},
     {0x1.6a09e667f3bcdp+0, -0x1.bdd3413b26456p-54},
     {0x1.6dfb23c651a2fp+0, -0x1.bbe3a683c88abp-57},
     {0x1.71f75e8ec5f74p+0, -0x1.16e4786887a99p-55},
     {0x1.75feb564267c9p+0, -0x1.0245957316dd3p-54},
     {0x1.7a11473eb0187p+0, -0x1.41577ee04992fp-55},
     {0x1.7e2f336cf4e62p+0, 0x1.05d02ba15797ep-56},
     {0x1.82589994cce13p+0, -0x1.d4c1dd41532d8p-54},
     {0x1.868d99b4492edp+0, -0x1.fc6f89bd4f6bap-54},
     {0x1.8ace5422aa0dbp+0, 0x1.6e9f156864b27p-54},
     {0x1.8f1ae99157736p+0, 0x1.5cc13a2e3976cp-55},
     {0x1.93737b0cdc5e5p+0, -0x1.75fc781b57ebcp-57},
     {0x1.97d829fde4e50p+0, -0x1.d185b7c1b85d1p-54},
     {0x1.9c49182a3f090p+0, 0x1.c7c46b071f2bep-56},
     {0x1.a0c667b5de565p+0, -0x1.359495d1cd533p-54},
     {0x1.a5503b23e255dp+0, -0x1.d2f6edb8d41e1p-54},
     {0x1.a9e6b5579fdbfp+0, 0x1.0fac90ef7fd31p-54},
     {0x1.ae89f995ad3adp+0, 0x1.7a1cd345dcc81p-54},
     {0x1.b33a2b84f15fbp+0, -0x1.2805e3084d708p-57},
     {0x1.b7f76f2fb5e47p+0, -0x1.5584f7e54ac3bp-56},
     {0x1.bcc1e904bc1d2p+0, 0x1.23dd07a2d9e84p-55},
     {0x1.c199bdd85529cp+0, 0x1.11065895048ddp-55},
     {0x1.c67f12e57d14bp+0, 0x1.2884dff483cadp-54},
     {0x1.cb720dcef9069p+0, 0x1.503cbd1e949dbp-56},
     {0x1.d072d4a07897cp+0, -0x1.cbc3743797a9cp-54},
     {0x1.d5818dcfba487p+0, 0x1.2ed02d75b3707p-55},
     {0x1.da9e603db3285p+0, 0x1.c2300696db532p-54},
     {0x1.dfc97337b9b5fp+0, -0x1.1a5cd4f184b5cp-54},
     {0x1.e502ee78b3ff6p+0, 0x1.39e8980a9cc8fp-55},
     {0x1.ea4afa2a490dap+0, -0x1.e9c23179c2893p-54},
     {0x1.efa1bee615a27p+0, 0x1.dc7f486a4b6b0p-54},
     {0x1.f50765b6e4540p+0, 0x1.9d3e12dd8a18bp-54},
     {0x1.fa7c1819e90d8p+0, 0x1.74853f3a5931ep-55}},
    {{0x1.6a00000000000p+0, -0x1.62c82f2b9c000p-2, -0x1.e54bdbd7c8a98p-44, 0.0},
     {0x1.6800000000000p+0, -0x1.5d1bdbf581000p-2, 0x1.8d6bdc9c7c238p-44, 0.0},
     {0x1.6600000000000p+0, -0x1.5767717456000p-2, 0x1.64ead9524d7cap-44, 0.0},
     {0x1.6400000000000p+0, -0x1.51aad872e0000p-2, 0x1.f4bd8db0a7cc1p-44, 0.0},
     {0x1.6200000000000p+0, -0x1.4be5f95778000p-2, 0x1.d7c92cd9ad824p-44, 0.0},
     {0x1.6000000000000p+0, -0x1.4618bc21c6000p-2, 0x1.3d82f484c84ccp-46, 0.0},
     {0x1.5e00000000000p+0, -0x1.404308686a000p-2, -0x1.f8ef43049f7d3p-44, 0.0},
     {0x1.5c00000000000p+0, -0x1.3a64c55694000p-2, -0x1.7a71cbcd735d0p-44, 0.0},
     {0x1.5a00000000000p+0, -0x1.347dd9a988000p-2, 0x1.5594dd4c58092p-45, 0.0},
     {0x1.5800000000000p+0, -0x1.2e8e2bae12000p-2, 0x1.67b1e99b72bd8p-45, 0.0},
     {0x1.5600000000000p+0, -0x1.2895a13de8000p-2, -0x1.a8d7ad24c13f0p-44, 0.0},
     {0x1.5400000000000p+0, -0x1.22941fbcf8000p-2, 0x1.a6976f5eb0963p-44, 0.0},
     {0x1.5200000000000p+0, -0x1.1c898c169a000p-2, 0x1.81410e5c62affp-44, 0.0},
     {0x1.5000000000000p+0, -0x1.1675cababa000p-2, -0x1.8380e731f55c4p-44, 0.0},
     {0x1.5000000000000p+0, -0x1.1675cababa000p-2, -0x1.8380e731f55c4p-44, 0.0},
     {0x1.4e00000000000p+0, -0x1.1058bf9ae5000p-2, 0x1.4ab9d817d52cdp-44, 0.0},
     {0x1.4c00000000000p+0, -0x1.0a324e2739000p-2, -0x1.c6bee7ef4030ep-47, 0.0},
     {0x1.4a00000000000p+0, -0x1.0402594b4d000p-2, -0x1.036b89ef42d7fp-48, 0.0},
     {0x1.4800000000000p+0, -0x1.fb9186d5e4000p-3, 0x1.d572aab993c87p-47, 0.0},
     {0x1.4600000000000p+0, -0x1.ef0adcbdc6000p-3, 0x1.b26b79c86af24p-45, 0.0},
     {0x1.4600000000000p+0, -0x1.ef0adcbdc6000p-3, 0x1.b26b79c86af24p-45, 0.0},
     {0x1.4400000000000p+0, -0x1.e27076e2b0000p-3, 0x1.a342c2af0003cp-44, 0.0},
     {0x1.4200000000000p+0, -0x1.d5c216b4fc000p-3, 0x1.1ba91bbca681bp-45, 0.0},
     {0x1.4000000000000p+0, -0x1.c8ff7c79aa000p-3, 0x1.7794f689f8434p-45, 0.0},
     {0x1.3e00000000000p+0, -0x1.bc286742d8000p-3, -0x1.9ac53f39d121cp-44, 0.0},
     {0x1.3e00000000000p+0, -0x1.bc286742d8000p-3, -0x1.9ac53f39d121cp-44, 0.0},
     {0x1.3c00000000000p+0, -0x1.af3c94e80c000p-3, 0x1.a4e633fcd9066p-52, 0.0},
     {0x1.3a00000000000p+0, -0x1.a23bc1fe2c000p-3, 0x1.539cd91dc9f0bp-44, 0.0},
     {0x1.3800000000000p+0, -0x1.9525a9cf46000p-3, 0x1.297137d9f158fp-44, 0.0},
     {0x1.3800000000000p+0, -0x1.9525a9cf46000p-3, 0x1.297137d9f158fp-44, 0.0},
     {0x1.3600000000000p+0, -0x1.87fa06520c000p-3, -0x1.22120401202fcp-44, 0.0},
     {0x1.3400000000000p+0, -0x1.7ab890210e000p-3, 0x1.bdb9072534a58p-45, 0.0},
     {0x1.3200000000000p+0, -0x1.6d60fe719e000p-3, 0x1.bc6e557134767p-44, 0.0},
     {0x1.3200000000000p+0, -0x1.6d60fe719e000p-3, 0x1.bc6e557134767p-44, 0.0},
     {0x1.3000000000000p+0, -0x1.5ff3070a7a000p-3, 0x1.8586f183bebf2p-44, 0.0},
     {0x1.2e00000000000p+0, -0x1.526e5e3a1c000p-3, 0x1.790ba37fc5238p-44, 0.0},
     {0x1.2e00000000000p+0, -0x1.526e5e3a1c000p-3, 0x1.790ba37fc5238p-44, 0.0},
     {0x1.2c00000000000p+0, -0x1.44d2b6ccb8000p-3, 0x1.70cc16135783cp-46, 0.0},
     {0x1.2a00000000000p+0, -0x1.371fc201e8000p-3, -0x1.ee8779b2d8abcp-44, 0.0},
     {0x1.2a00000000000p+0, -0x1.371fc201e8000p-3, -0x1.ee8779b2d8abcp-44, 0.0},
     {0x1.2800000000000p+0, -0x1.29552f8200000p-3, 0x1.5b967f4471dfcp-44, 0.0},
     {0x1.2600000000000p+0, -0x1.1b72ad52f6000p-3, -0x1.e80a41811a396p-45, 0.0},
     {0x1.2600000000000p+0, -0x1.1b72ad52f6000p-3, -0x1.e80a41811a396p-45, 0.0},
     {0x1.2400000000000p+0, -0x1.0d77e7cd08000p-3, -0x1.cb2cd2ee2f482p-44, 0.0},
     {0x1.2200000000000p+0, -0x1.fec9131dc0000p-4, 0x1.54555d1ae6607p-44, 0.0},
     {0x1.2200000000000p+0, -0x1.fec9131dc0000p-4, 0x1.54555d1ae6607p-44, 0.0},
     {0x1.2000000000000p+0, -0x1.e27076e2b0000p-4, 0x1.a342c2af0003cp-45, 0.0},
     {0x1.1e00000000000p+0, -0x1.c5e548f5bc000p-4, -0x1.d0c57585fbe06p-46, 0.0},
     {0x1.1e00000000000p+0, -0x1.c5e548f5bc000p-4, -0x1.d0c57585fbe06p-46, 0.0},
     {0x1.1c00000000000p+0, -0x1.a926d3a4ac000p-4, -0x1.563650bd22a9cp-44, 0.0},
     {0x1.1c00000000000p+0, -0x1.a926d3a4ac000p-4, -0x1.563650bd22a9cp-44, 0.0},
     {0x1.1a00000000000p+0, -0x1.8c345d6318000p-4, -0x1.b20f5acb42a66p-44, 0.0},
     {0x1.1800000000000p+0, -0x1.6f0d28ae58000p-4, 0x1.4b4641b664613p-44, 0.0},
     {0x1.1800000000000p+0, -0x1.6f0d28ae58000p-4, 0x1.4b4641b664613p-44, 0.0},
     {0x1.1600000000000p+0, -0x1.51b073f060000p-4, -0x1.83f69278e686ap-44, 0.0},
     {0x1.1600000000000p+0, -0x1.51b073f060000p-4, -0x1.83f69278e686ap-44, 0.0},
     {0x1.1400000000000p+0, -0x1.341d7961bc000p-4, -0x1.1d09299837610p-44, 0.0},
     {0x1.1200000000000p+0, -0x1.16536eea38000p-4, 0x1.47c5e768fa309p-46, 0.0},
     {0x1.1200000000000p+0, -0x1.16536eea38000p-4, 0x1.47c5e768fa309p-46, 0.0},
     {0x1.1000000000000p+0, -0x1.f0a30c0118000p-5, 0x1.d599e83368e91p-45, 0.0},
     {0x1.1000000000000p+0, -0x1.f0a30c0118000p-5, 0x1.d599e83368e91p-45, 0.0},
     {0x1.0e00000000000p+0, -0x1.b42dd71198000p-5, 0x1.c827ae5d6704cp-46, 0.0},
     {0x1.0e00000000000p+0, -0x1.b42dd71198000p-5, 0x1.c827ae5d6704cp-46, 0.0},
     {0x1.0c00000000000p+0, -0x1.77458f6330000p-5, 0x1.181dce586af09p-44, 0.0},
     {0x1.0a00000000000p+0, -0x1.39e87b9fe8000p-5, -0x1.eafd480ad9015p-44, 0.0},
     {0x1.0a00000000000p+0, -0x1.39e87b9fe8000p-5, -0x1.eafd480ad9015p-44, 0.0},
     {0x1.0800000000000p+0, -0x1.f829b0e780000p-6, -0x1.980267c7e09e4p-45, 0.0},
     {0x1.0800000000000p+0, -0x1.f829b0e780000p-6, -0x1.980267c7e09e4p-45, 0.0},
     {0x1.0600000000000p+0, -0x1.7b91b07d60000p-6, 0x1.3b955b602ace4p-44, 0.0},
     {0x1.0600000000000p+0, -0x1.7b91b07d60000p-6, 0x1.3b955b602ace4p-44, 0.0},
     {0x1.0400000000000p+0, -0x1.fc0a8b0fc0000p-7, -0x1.f1e7cf6d3a69cp-50, 0.0},
     {0x1.0400000000000p+0, -0x1.fc0a8b0fc0000p-7, -0x1.f1e7cf6d3a69cp-50, 0.0},
     {0x1.0200000000000p+0, -0x1.fe02a6b100000p-8, -0x1.9e23f0dda40e4p-46, 0.0},
     {0x1.0200000000000p+0, -0x1.fe02a6b100000p-8, -0x1.9e23f0dda40e4p-46, 0.0},
     {0x1.0000000000000p+0, 0x0.0p+0, 0x0.0p+0, 0.0},
     {0x1.0000000000000p+0, 0x0.0p+0, 0x0.0p+0, 0.0},
     {0x1.fa00000000000p-1, 0x1.82448a3880000p-7, 0x1.4554412c584e0p-44, 0.0},
     {0x1.f600000000000p-1, 0x1.432a925980000p-6, 0x1.98139928637fep-47, 0.0},
     {0x1.f200000000000p-1, 0x1.c63d2ec150000p-6, -0x1.5439ce030a687p-44, 0.0},
     {0x1.ee00000000000p-1, 0x1.252f32f8d0000p-5, 0x1.83e9ae021b67bp-45, 0.0},
     {0x1.ea00000000000p-1, 0x1.67c94f2d48000p-5, 0x1.dac20827cca0cp-44, 0.0},
     {0x1.e800000000000p-1, 0x1.894aa149f8000p-5, 0x1.9a19a8be97661p-44, 0.0},
     {0x1.e400000000000p-1, 0x1.ccb73cddd8000p-5, 0x1.965c36e09f5fep-44, 0.0},
     {0x1.e000000000000p-1, 0x1.08598b59e4000p-4, -0x1.7e5dd7009902cp-46, 0.0},
     {0x1.dc00000000000p-1, 0x1.2aa04a4470000p-4, 0x1.7a48ba8b1cb41p-44, 0.0},
     {0x1.da00000000000p-1, 0x1.3bdf5a7d20000p-4, -0x1.19bd0ad125895p-44, 0.0},
     {0x1.d600000000000p-1, 0x1.5e95a4d978000p-4, 0x1.1cb7ce1d17171p-44, 0.0},
     {0x1.d200000000000p-1, 0x1.8197e2f410000p-4, -0x1.c0fe460d20041p-44, 0.0},
     {0x1.d000000000000p-1, 0x1.9335e5d594000p-4, 0x1.3115c3abd47dap-45, 0.0},
     {0x1.cc00000000000p-1, 0x1.b6ac88dad4000p-4, 0x1.b1bdff50225c7p-44, 0.0},
     {0x1.c800000000000p-1, 0x1.da72763844000p-4, 0x1.a89401fa71733p-46, 0.0},
     {0x1.c600000000000p-1, 0x1.ec739830a0000p-4, 0x1.11fcba80cdd10p-44, 0.0},
     {0x1.c200000000000p-1, 0x1.08598b59e4000p-3, -0x1.7e5dd7009902cp-45, 0.0},
     {0x1.c000000000000p-1, 0x1.1178e8227e000p-3, 0x1.1ef78ce2d07f2p-45, 0.0},
     {0x1.bc00000000000p-1, 0x1.23d712a49c000p-3, 0x1.00d238fd3df5cp-46, 0.0},
     {0x1.ba00000000000p-1, 0x1.2d1610c868000p-3, 0x1.39d6ccb81b4a1p-47, 0.0},
     {0x1.b600000000000p-1, 0x1.3fb45a5992000p-3, 0x1.19713c0cae559p-44, 0.0},
     {0x1.b400000000000p-1, 0x1.4913d8333c000p-3, -0x1.53e43558124c4p-44, 0.0},
     {0x1.b000000000000p-1, 0x1.5bf406b544000p-3, -0x1.27023eb68981cp-46, 0.0},
     {0x1.ae00000000000p-1, 0x1.6574ebe8c2000p-3, -0x1.98c1d34f0f462p-44, 0.0},
     {0x1.aa00000000000p-1, 0x1.7898d85444000p-3, 0x1.8e67be3dbaf3fp-44, 0.0},
     {0x1.a800000000000p-1, 0x1.823c16551a000p-3, 0x1.e0ddb9a631e83p-46, 0.0},
     {0x1.a600000000000p-1, 0x1.8beafeb390000p-3, -0x1.73d54aae92cd1p-47, 0.0},
     {0x1.a200000000000p-1, 0x1.9f6c40708a000p-3, -0x1.337d94bcd3f43p-44, 0.0},
     {0x1.a000000000000p-1, 0x1.a93ed3c8ae000p-3, -0x1.8724350562169p-45, 0.0},
     {0x1.9e00000000000p-1, 0x1.b31d8575bc000p-3, 0x1.c794e562a63cbp-44, 0.0},
     {0x1.9a00000000000p-1, 0x1.c6ffbc6f00000p-3, 0x1.ee138d3a69d43p-44, 0.0},
     {0x1.9800000000000p-1, 0x1.d1037f2656000p-3, -0x1.84a7e75b6f6e4p-47, 0.0},
     {0x1.9600000000000p-1, 0x1.db13db0d48000p-3, 0x1.2806a847527e6p-44, 0.0},
     {0x1.9400000000000p-1, 0x1.e530effe72000p-3, -0x1.fdbdbb13f7c18p-44, 0.0},
     {0x1.9000000000000p-1, 0x1.f991c6cb3c000p-3, -0x1.90d04cd7cc834p-44, 0.0},
     {0x1.8e00000000000p-1, 0x1.01eae5626c000p-2, 0x1.a43dcfade85aep-44, 0.0},
     {0x1.8c00000000000p-1, 0x1.07138604d6000p-2, -0x1.e76324e912b17p-44, 0.0},
     {0x1.8a00000000000p-1, 0x1.0c42d67616000p-2, 0x1.7188b163ceae9p-45, 0.0},
     {0x1.8800000000000p-1, 0x1.1178e8227e000p-2, 0x1.1ef78ce2d07f2p-44, 0.0},
     {0x1.8400000000000p-1, 0x1.1bf99635a7000p-2, -0x1.1ac89575c2125p-44, 0.0},
     {0x1.8200000000000p-1, 0x1.214456d0ec000p-2, -0x1.caf0428b728a3p-44, 0.0},
     {0x1.8000000000000p-1, 0x1.269621134e000p-2, -0x1.1b61f10522625p-44, 0.0},
     {0x1.7e00000000000p-1, 0x1.2bef07cdc9000p-2, 0x1.a9cfa4a5004f4p-45, 0.0},
     {0x1.7c00000000000p-1, 0x1.314f1e1d36000p-2, -0x1.8e27ad3213cb8p-45, 0.0},
     {0x1.7a00000000000p-1, 0x1.36b6776be1000p-2, 0x1.16ecdb0f177c8p-46, 0.0},
     {0x1.7800000000000p-1, 0x1.3c25277333000p-2, 0x1.83b54b606bd5cp-46, 0.0},
     {0x1.7600000000000p-1, 0x1.419b423d5f000p-2, -0x1.ce379226de3ecp-44, 0.0},
     {0x1.7400000000000p-1, 0x1.4718dc271c000p-2, 0x1.06c18fb4c14c5p-44, 0.0},
     {0x1.7200000000000p-1, 0x1.4c9e09e173000p-2, -0x1.e20891b0ad8a4p-45, 0.0},
     {0x1.7000000000000p-1, 0x1.522ae0738a000p-2, 0x1.ebe708164c759p-45, 0.0},
     {0x1.6e00000000000p-1, 0x1.57bf753c8d000p-2, 0x1.fadedee5d40efp-46, 0.0},
     {0x1.6c00000000000p-1, 0x1.5d5bddf596000p-2, -0x1.a0b2a08a465dcp-47, 0.0}}};
#if defined(__CUDACC__)
// A __constant__ copy: the compiler cannot fold its values into immediates.
static __constant__ LeanDoubleCoefficients kLeanDoubleCoefficientsOnDevice =
    kLeanDoubleCoefficients;
#endif
GPUKIT_HD_INLINE const LeanDoubleCoefficients& lean_double_coefficients() {
#if defined(__CUDA_ARCH__)
  return kLeanDoubleCoefficientsOnDevice;
#else
  return kLeanDoubleCoefficients;
#endif
}

#if defined(__CUDACC__)
// The tables of lean_exp_double and lean_log_double, per block in shared memory: each lane
// indexes its own entry, which constant memory would serialize. One object, so both tables share
// one base address. Every kernel that calls them fills it first with lean_load_tables_to_shared().
struct LeanTablesShared {
  double2 exp2_fraction[64];
  double2 log_table[128][2];
};
constexpr LeanTablesShared make_lean_tables() {
  LeanTablesShared t{};
  const LeanDoubleCoefficients& c = kLeanDoubleCoefficients;
  for (int j = 0; j < 64; ++j) t.exp2_fraction[j] = {c.exp2_fraction[j][0], c.exp2_fraction[j][1]};
  for (int j = 0; j < 128; ++j) {
    t.log_table[j][0] = {c.log_table[j][0], c.log_table[j][1]};
    t.log_table[j][1] = {c.log_table[j][2], c.log_table[j][3]};
  }
  return t;
}
// The source of the fill, in the shared layout: the exact-grid kernels run one block per 512
// options, so each block's fill must be a few coalesced 16-byte loads (L2-resident after the
// first blocks), not constant-memory reads with a different address per lane.
static __device__ const LeanTablesShared kLeanTablesGlobal = make_lean_tables();
static __shared__ LeanTablesShared kLeanTablesShared;
__device__ __forceinline__ void lean_load_tables_to_shared() {
  constexpr int kVectors = sizeof(LeanTablesShared) / sizeof(double2);
  const double2* source = reinterpret_cast<const double2*>(&kLeanTablesGlobal);
  double2* destination = reinterpret_cast<double2*>(&kLeanTablesShared);
  for (int j = static_cast<int>(threadIdx.x); j < kVectors; j += static_cast<int>(blockDim.x)) {
    destination[j] = __ldg(source + j);
  }
  __syncthreads();
}
#endif

struct LogTableEntry {
  double inv_c, log_hi, log_lo;
};
GPUKIT_HD_INLINE LogTableEntry log_table_entry(std::int32_t i) {
#if defined(__CUDA_ARCH__)
  const double2 a = kLeanTablesShared.log_table[i][0], b = kLeanTablesShared.log_table[i][1];
  return {a.x, a.y, b.x};
#else
  const double* e = kLeanDoubleCoefficients.log_table[i];
  return {e[0], e[1], e[2]};
#endif
}

struct Exp2Fraction {
  double hi, lo;
};
GPUKIT_HD_INLINE Exp2Fraction exp2_fraction(std::int32_t j) {
#if defined(__CUDA_ARCH__)
  const double2 t = kLeanTablesShared.exp2_fraction[j];
  return {t.x, t.y};
#else
  return {kLeanDoubleCoefficients.exp2_fraction[j][0], kLeanDoubleCoefficients.exp2_fraction[j][1]};
#endif
}

GPUKIT_HD_INLINE double double_from_words(std::int32_t hi, std::uint32_t lo) {
#if defined(__CUDA_ARCH__)
  return __hiloint2double(hi, static_cast<int>(lo));
#else
  return std::bit_cast<double>((static_cast<std::uint64_t>(static_cast<std::uint32_t>(hi)) << 32) |
                               lo);
#endif
}
GPUKIT_HD_INLINE std::int32_t high_word(double x) {
#if defined(__CUDA_ARCH__)
  return __double2hiint(x);
#else
  return static_cast<std::int32_t>(std::bit_cast<std::uint64_t>(x) >> 32);
#endif
}
GPUKIT_HD_INLINE std::int32_t low_word(double x) {
#if defined(__CUDA_ARCH__)
  return __double2loint(x);
#else
  return static_cast<std::int32_t>(std::bit_cast<std::uint64_t>(x) & 0xffffffffu);
#endif
}

/// e^x within about 1 ulp for |x| < 708 (callers guarantee it): x = (64 m + j) ln2/64 + r
/// (|r| <= ln2/128, Cody-Waite with an FMA), e^x = 2^m 2^(j/64) e^r with 2^(j/64) = hi + lo from a
/// table and e^r - 1 from its Taylor series to r^5 (truncation below 2^-56 relative). On the
/// device the table is in shared memory (lean_load_tables_to_shared).
GPUKIT_HD_INLINE double lean_exp_double_in_range(double x) {
  constexpr double kShifter = 0x1.8p52;  // adding it rounds x 64 log2 e to an integer
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double shifted = fma(x, coefficients.exp_64_log2e, kShifter);
  const double n = shifted - kShifter;
  const double r = fma(-n, coefficients.exp_ln2_64[1], fma(-n, coefficients.exp_ln2_64[0], x));
  const double* c = coefficients.exp_series;
  const double q = fma(fma(fma(fma(c[0], r, c[1]), r, c[2]), r, 0.5), r, 1.0);
  const std::int32_t n_int = low_word(shifted);  // n, exactly (|n| < 2^17)
  const Exp2Fraction t = exp2_fraction(n_int & 63);
  const double scaled = fma(t.hi, r * q, t.lo) + t.hi;  // 2^(j/64) e^r, in [0.99, 2.02)
  // |x| < 708 keeps n >> 6 in [-1022, 1021] and the product a normal number, so scaling is an
  // addition to the exponent field.
  return double_from_words(high_word(scaled) + ((n_int >> 6) << 20),
                           static_cast<std::uint32_t>(low_word(scaled)));
}

/// e^x within about 1 ulp (lean_exp_double_in_range); |x| >= 708 and NaN take the library's exp.
GPUKIT_HD_INLINE double lean_exp_double(double x) {
  if (!(math_abs(x) < 708.0)) return math_exp(x);
  return lean_exp_double_in_range(x);
}

/// 1/x within 1 ulp for |x| in [2^-1000, 2^1000] (callers guarantee it), without __drcp_rn's
/// range check: the hardware seed y (its high word only, so e = 1 - x y takes one rounding) and
/// y (1 + e + e^2 + e^3) (error e^4, below 2^-80 for the seed's 2^-20).
GPUKIT_HD_INLINE double lean_rcp_moderate(double x) {
#if defined(__CUDA_ARCH__)
  double seed;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(seed) : "d"(x));
  const double y = double_from_words(high_word(seed), 0u);
  const double e = fma(-x, y, 1.0);
  return fma(y, fma(e, fma(e, e, e), e), y);
#else
  return 1.0 / x;
#endif
}

/// 1/sqrt(x) within about 1 ulp for x in [2^-1000, 2^1000] (callers guarantee it), without the
/// library's range handling: the hardware seed, kept to its high word so that y^2 is exact and
/// e = 1 - x y^2 takes one rounding, then one Newton step with its cubic term
/// (y (1 + e/2 + 3e^2/8), error 5e^3/16).
GPUKIT_HD_INLINE double lean_rsqrt_moderate(double x) {
#if defined(__CUDA_ARCH__)
  double seed;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(seed) : "d"(x));
  const double y = double_from_words(high_word(seed), 0u);
  const double e = fma(-x, y * y, 1.0);
  return fma(y * e, fma(e, 0.375, 0.5), y);
#else
  return 1.0 / math_sqrt(x);
#endif
}

/// ln x within about 1 ulp for normal positive x (callers guarantee it): x = 2^k z (z in
/// [0.707, 1.414)), ln x = k ln 2 - ln(1/c) + log1p(r) with 1/c and ln(1/c) from a 128-entry table
/// (shared memory on the device, see lean_load_tables_to_shared), r = z/c - 1 exact, |r| < 2^-7,
/// and log1p(r) from its Taylor series to r^8 (truncation below 2^-58 relative).
GPUKIT_HD_INLINE double lean_log_double_normal(double x) {
  const std::int32_t hi = high_word(x);
  // The high word of sqrt(2)/2 rounded down to the table's 2^13 steps: the offset splits the
  // exponent k from z and indexes the interval with the top 7 bits of what is left.
  const std::int32_t offset = hi - 0x3fe6a000;
  const std::int32_t k = offset >> 20;  // arithmetic shift: k < 0 below sqrt(2)/2
  const LogTableEntry e = log_table_entry((offset >> 13) & 127);
  const double z = double_from_words(
      static_cast<std::int32_t>(static_cast<std::uint32_t>(hi) -
                                (static_cast<std::uint32_t>(offset) & 0xfff00000u)),
      static_cast<std::uint32_t>(low_word(x)));
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  const double r = fma(z, e.inv_c, -1.0);
  // k as a double from its bits (2^52 + 2^31 + k, less the constant): an integer add and a
  // DADD, where a conversion instruction issues at a quarter of the FP64 rate.
  constexpr double kBias = 0x1.000008p52;  // 2^52 + 2^31
  const double dk =
      double_from_words(0x43300000, static_cast<std::uint32_t>(k) ^ 0x80000000u) - kBias;
  const double w = fma(dk, coefficients.log_ln2[0], e.log_hi);  // exact
  // w + r = sum + rest exactly: |w| >= |r| wherever w is not zero (the table keeps |ln(1/c)|
  // above |r| for k = 0).
  const double sum = w + r;
  const double rest = (w - sum) + r;
  const double* c = coefficients.log1p_series;
  const double p =
      fma(fma(fma(fma(fma(fma(-0.125, r, c[0]), r, c[1]), r, c[2]), r, -0.25), r, c[3]), r, -0.5);
  const double small = fma(dk, coefficients.log_ln2[1], e.log_lo);
  return sum + (rest + fma(r * r, p, small));
}

/// ln x within about 1 ulp (lean_log_double_normal); zero, subnormals, negatives, infinities and
/// NaN take the library's log.
GPUKIT_HD_INLINE double lean_log_double(double x) {
  // Normal positive x: high word in [0x00100000, 0x7fefffff] (one integer compare; NaN, the
  // infinities, zero, subnormals and negatives fall outside).
  const std::int32_t hi = high_word(x);
  if (!(static_cast<std::uint32_t>(hi) - 0x00100000u < 0x7fe00000u)) return math_log(x);
  return lean_log_double_normal(x);
}

// The lean primitives: single MUFU instructions in float fast mode on the device, the IEEE
// round-to-nearest reciprocal and the library's functions elsewhere.
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_rcp(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    if constexpr (kFast) {
      float r;
      asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
      return r;
    } else {
      return __frcp_rn(x);
    }
  } else {
    return __drcp_rn(x);
  }
#else
  return Real(1) / x;
#endif
}

template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_rsqrt(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(Real) == sizeof(float)) {
    if constexpr (kFast) {
      float r;
      asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
      return r;
    } else {
      return rsqrtf(x);
    }
  } else {
    return rsqrt(x);
  }
#else
  return Real(1) / math_sqrt(x);
#endif
}

/// exp(a b); in float fast mode 2^(a (b log2 e)), so a `b` shared by several options (the rate)
/// or a constant costs one multiplication less.
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_exp_product(Real a, Real b) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a * (b * float(kLog2E))));
    return r;
  }
#endif
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_exp_double(a * b);
  } else {
    return math_exp(a * b);
  }
}

/// log2(x) in fast float mode on the device, ln(x) elsewhere; lean_log_scale is the factor that
/// turns the result into ln(x) (folded by the caller into a multiplication it does anyway).
template <bool kFast, class Real>
GPUKIT_HD_INLINE Real lean_log_unscaled(Real x) {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) {
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
  }
#endif
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_log_double(x);
  } else {
    return math_log(x);
  }
}
template <bool kFast, class Real>
GPUKIT_HD_INLINE constexpr Real lean_log_scale() {
#if defined(__CUDA_ARCH__)
  if constexpr (kFast && sizeof(Real) == sizeof(float)) return Real(kLn2);
#endif
  return Real(1);
}

/// A constant of the formula: in double from the coefficient block (constant memory on the
/// device), in float the immediate.
template <class Real>
GPUKIT_HD_INLINE Real lean_constant(double value, double LeanDoubleCoefficients::*field) {
  if constexpr (sizeof(Real) == sizeof(double)) {
    return lean_double_coefficients().*field;
  } else {
    return Real(value);
  }
}

/// Hull's polynomial without phi: N(-|d|) = phi(d) hull_series(1 / (1 + 0.2316419 |d|)).
template <class Real>
GPUKIT_HD_INLINE Real hull_series(Real k) {
  if constexpr (sizeof(Real) == sizeof(double)) {
    const double* c = lean_double_coefficients().hull;
    return k * fma(fma(fma(fma(c[0], k, c[1]), k, c[2]), k, c[3]), k, c[4]);
  } else {
    return k * (Real(0.31938153) +
                k * (Real(-0.356563782) +
                     k * (Real(1.781477937) + k * (Real(-1.821255978) + k * Real(1.330274429)))));
  }
}

/// inv_volatility is lean_rcp<kFast>(volatility), computed by the caller so a book-wide volatility
/// costs one reciprocal per thread, not one per option.
template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE CallPut<Real> price_call_put_lean(Real spot, Real strike, Real maturity, Real rate,
                                                   Real volatility, Real inv_volatility,
                                                   Real dividend) {
  constexpr bool kFast = Cdf == NormalCdf::hull_polynomial_fast_math;
  constexpr Real kTiny = std::numeric_limits<Real>::min();  // smallest normal number
  const Real rsqrt_t = lean_rsqrt<kFast>(maturity);
  const Real vol_sqrt_t = volatility * (maturity * rsqrt_t);
  const Real rate_discount = lean_exp_product<kFast>(maturity, -rate);
  Real fwd = spot;  // F = S e^{-qT}
  if (dividend != Real(0)) fwd *= lean_exp_product<kFast>(maturity, -dividend);
  const Real pv = strike * rate_discount;  // K = X e^{-rT}
  // `!(x < tiny)` rather than `x >= tiny` so a NaN takes the formula path and gives NaN.
  if (!(maturity < kTiny) && !(volatility < kTiny) && !(vol_sqrt_t < kTiny) && strike != Real(0)) {
    // sigma >= the smallest normal keeps 1/sigma finite, sigma sqrt T >= it the product.
    const Real inv_vol_sqrt_t = rsqrt_t * inv_volatility;
    const Real ratio = fwd * lean_rcp<kFast>(pv);  // F / K
    const Real d1 =
        lean_log_unscaled<kFast>(ratio) * (lean_log_scale<kFast, Real>() * inv_vol_sqrt_t) +
        Real(0.5) * vol_sqrt_t;
    const Real d2 = d1 - vol_sqrt_t;
    Real fwd_tail, pv_tail;  // F N(-|d1|), K N(-|d2|)
    if constexpr (Cdf == NormalCdf::erfc) {
      fwd_tail = fwd * (Real(0.5) * math_erfc(math_abs(d1) * Real(kInvSqrt2)));
      pv_tail = pv * (Real(0.5) * math_erfc(math_abs(d2) * Real(kInvSqrt2)));
    } else {
      // F phi(d1) = K phi(d2). Where phi(d1) underflows, F phi(d1) < F 2^-126 (float): below
      // any price's rounding, so evaluating at d1 alone loses nothing.
      const Real density_weight =
          fwd * lean_constant<Real>(kInvSqrt2Pi, &LeanDoubleCoefficients::inv_sqrt_2pi) *
          lean_exp_product<kFast>(d1 * d1, Real(-0.5));
      const Real hull_scale = lean_constant<Real>(0.2316419, &LeanDoubleCoefficients::hull_scale);
      const Real hull_d1 = Real(1) + hull_scale * math_abs(d1);
      const Real hull_d2 = Real(1) + hull_scale * math_abs(d2);
      Real k1, k2;  // 1 / hull_d1, 1 / hull_d2
      if constexpr (sizeof(Real) == sizeof(double)) {
        // One reciprocal for both: k1 = b / (a b), k2 = a / (a b), within 2 ulp. A product past
        // 2^1000 (an |d| beyond 2^500), infinite or NaN takes one reciprocal each.
        const double product = hull_d1 * hull_d2;
        if (product < 0x1p1000) {
          const double inv_product = lean_rcp_moderate(product);
          k1 = inv_product * hull_d2, k2 = inv_product * hull_d1;
        } else {
          k1 = lean_rcp<kFast>(hull_d1), k2 = lean_rcp<kFast>(hull_d2);
        }
      } else {
        k1 = lean_rcp<kFast>(hull_d1), k2 = lean_rcp<kFast>(hull_d2);
      }
      fwd_tail = density_weight * hull_series(k1);
      pv_tail = density_weight * hull_series(k2);
    }
    const Real fwd_rest = fwd - fwd_tail, pv_rest = pv - pv_tail;
    const Real fwd_n_d1 = d1 > Real(0) ? fwd_rest : fwd_tail;   // F N(d1)
    const Real fwd_n_md1 = d1 > Real(0) ? fwd_tail : fwd_rest;  // F N(-d1)
    const Real pv_n_d2 = d2 > Real(0) ? pv_rest : pv_tail;      // K N(d2)
    const Real pv_n_md2 = d2 > Real(0) ? pv_tail : pv_rest;     // K N(-d2)
    return {max_zero(fwd_n_d1 - pv_n_d2), max_zero(pv_n_md2 - fwd_n_md1)};
  }
  return {max_zero(fwd - pv), max_zero(pv - fwd)};
}

template <class Real, NormalCdf Cdf>
GPUKIT_HD_INLINE CallPut<Real> price_call_put_lean(Real spot, Real strike, Real maturity, Real rate,
                                                   Real volatility, Real dividend) {
  return price_call_put_lean<Real, Cdf>(
      spot, strike, maturity, rate, volatility,
      lean_rcp<Cdf == NormalCdf::hull_polynomial_fast_math>(volatility), dividend);
}

/// Call and put of N options at once, double precision, Hull's CND: price_call_put_lean's
/// arithmetic with no branch before the end, so the N options' chains of dependent FP64
/// instructions interleave, and with the range checks of every step folded into one test for all
/// N. Where an input falls outside the ranges below, all N take price_call_put_lean.
///
/// The fast path takes ln(F/K) as ln(S (1/X)) + (r - q) T, so the logarithm does not wait for the
/// discount factors. Its ranges: S, X, T and sigma in [2^-256, 2^256) (every product and quotient
/// below stays a normal number), |r T| and |q T| below 500 (the discount factors within 2^+-722),
/// |d1| below 37 (phi(d1) above e^-686 and Hull's product of the two (1 + 0.23 |d|) below 2^400).
/// Inside them every step is a normal number, so the primitives run without their range checks.
/// inv_volatility may be lean_rcp_moderate(volatility): it is used only inside the ranges.
template <int N, bool kDividend>
GPUKIT_HD_INLINE void price_call_put_lean_hull_double(
    const double (&spot)[N], const double (&strike)[N], const double (&maturity)[N],
    const double (&rate)[N], const double (&volatility)[N], const double (&inv_volatility)[N],
    const double (&dividend)[N], CallPut<double> (&out)[N]) {
  // High words of 2^-256 and of the range's span: a span of a power of two lets one OR of the
  // four offsets stand for four compares.
  constexpr std::uint32_t kRangeBase = (1023u - 256u) << 20;
  constexpr std::uint32_t kRangeSpan = 512u << 20;
  const LeanDoubleCoefficients& coefficients = lean_double_coefficients();
  bool in_range = true;
  for (int i = 0; i < N; ++i) {
    const std::uint32_t offsets =
        (static_cast<std::uint32_t>(high_word(spot[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(strike[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(maturity[i])) - kRangeBase) |
        (static_cast<std::uint32_t>(high_word(volatility[i])) - kRangeBase);
    const double rate_time = rate[i] * maturity[i];
    double fwd = spot[i];      // F = S e^{-qT}
    double drift = rate_time;  // (r - q) T
    bool exponents_in_range = math_abs(rate_time) < 500.0;
    if constexpr (kDividend) {
      const double dividend_time = dividend[i] * maturity[i];
      fwd *= lean_exp_double_in_range(-dividend_time);
      drift -= dividend_time;
      exponents_in_range = exponents_in_range & (math_abs(dividend_time) < 500.0);
    }
    const double pv = strike[i] * lean_exp_double_in_range(-rate_time);  // K = X e^{-rT}
    const double rsqrt_t = lean_rsqrt_moderate(maturity[i]);
    const double vol_sqrt_t = volatility[i] * (maturity[i] * rsqrt_t);
    const double log_fwd_over_pv =
        lean_log_double_normal(spot[i] * lean_rcp_moderate(strike[i])) + drift;
    const double d1 = fma(log_fwd_over_pv, rsqrt_t * inv_volatility[i], 0.5 * vol_sqrt_t);
    const double d2 = d1 - vol_sqrt_t;
    in_range = in_range & (offsets < kRangeSpan) & exponents_in_range & (math_abs(d1) < 37.0);
    // F phi(d1) = K phi(d2) and Hull's two reciprocals from one, as in price_call_put_lean;
    // phi(d1) from one exponential of -d1^2/2 - ln sqrt(2 pi).
    const double density_weight =
        fwd * lean_exp_double_in_range(fma(d1 * -0.5, d1, coefficients.log_inv_sqrt_2pi));
    const double hull_d1 = 1.0 + coefficients.hull_scale * math_abs(d1);
    const double hull_d2 = 1.0 + coefficients.hull_scale * math_abs(d2);
    const double inv_product = lean_rcp_moderate(hull_d1 * hull_d2);
    const double fwd_tail = density_weight * hull_series(inv_product * hull_d2);  // F N(-|d1|)
    const double pv_tail = density_weight * hull_series(inv_product * hull_d1);   // K N(-|d2|)
    const double fwd_rest = fwd - fwd_tail, pv_rest = pv - pv_tail;
    const double fwd_n_d1 = d1 > 0.0 ? fwd_rest : fwd_tail;   // F N(d1)
    const double fwd_n_md1 = d1 > 0.0 ? fwd_tail : fwd_rest;  // F N(-d1)
    const double pv_n_d2 = d2 > 0.0 ? pv_rest : pv_tail;      // K N(d2)
    const double pv_n_md2 = d2 > 0.0 ? pv_tail : pv_rest;     // K N(-d2)
    // Finite inside the ranges, so max(x, 0) needs no NaN test.
    const double call = fwd_n_d1 - pv_n_d2, put = pv_n_md2 - fwd_n_md1;
    out[i] = {call > 0.0 ? call : 0.0, put > 0.0 ? put : 0.0};
  }
  if (!in_range) {
    for (int i = 0; i < N; ++i) {
      out[i] = price_call_put_lean<double, NormalCdf::hull_polynomial>(
          spot[i], strike[i], maturity[i], rate[i], volatility[i], dividend[i]);
    }
  }
}

}  // namespace gpukit::finance::detail
