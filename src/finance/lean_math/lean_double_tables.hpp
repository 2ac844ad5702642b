#pragma once
// Internal: the constants and tables of the lean double-precision math (lean_double_math.hpp),
// in one block that the device reads from constant memory (where each is one DFMA operand, not an
// immediate that costs two moves) and, for the tables each lane indexes, from shared memory.
// The block also holds the constants of the Black-Scholes lean formula that have no DFMA
// immediate form (black_scholes_lean_math.hpp), so that every constant operand of that kernel
// comes from the one __constant__ object.

#include <math.h>

#include <bit>
#include <cstdint>

#include "finance/black_scholes_math.hpp"  // kInvSqrt2Pi
#include "gpukit/core/host_device.hpp"

namespace gpukit::finance::detail {

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

}  // namespace gpukit::finance::detail
