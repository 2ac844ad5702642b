#pragma once
// The registry of CUDA Black-Scholes kernels: the seed's kernel and each optimization step after
// it. Tests and `gpukit bench black_scholes` iterate over it, so a new entry is tested and measured
// with no new test or bench code.

#include <span>
#include <string_view>

#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/finance/black_scholes.hpp"

namespace gpukit::finance {

/// A CUDA launcher: prices `in` into `out` (device memory of the current device) with `cdf` on
/// `stream`, without waiting.
template <class Real>
using BlackScholesLaunch = void(const BlackScholesInputs<Real>& in,
                                const BlackScholesOutputs<Real>& out, NormalCdf cdf,
                                StreamHandle stream);
using BlackScholesLaunchers = PerType<BlackScholesLaunch, RealTypes>;

struct BlackScholesVariant {
  /// Traffic: a book with scalar rate and volatility and a side per option: three values and a
  /// byte read, one value written per option.
  VariantInfo info;
  BlackScholesLaunchers launchers;

  template <class Real>
  void launch(const BlackScholesInputs<Real>& in, const BlackScholesOutputs<Real>& out,
              NormalCdf cdf, StreamHandle stream) const {
    launchers.get<Real>()(in, out, cdf, stream);
  }
};

/// Every variant in ladder order (seed first); empty in a CPU-only build.
std::span<const BlackScholesVariant> black_scholes_variants();

/// The variant the API uses when none is named (the fastest measured on the H200).
const BlackScholesVariant& default_black_scholes_variant();

/// Looks a variant up by name; InvalidInput listing the names when there is none.
const BlackScholesVariant& find_black_scholes_variant(std::string_view name);

}  // namespace gpukit::finance
