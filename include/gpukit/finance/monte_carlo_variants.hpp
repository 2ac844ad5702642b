#pragma once
// The registry of CUDA Monte Carlo variants: the seed's two ways of spreading an option's paths
// over the GPU (one block per option; several blocks and a reduction), the staged launch for long
// paths, the automatic choice the API makes, and cuRAND's device API as the vendor row. Tests and
// `gpukit bench monte_carlo` iterate over it, so a new entry is tested and measured with no new
// test or bench code.
//
// An entry prepares a book once (its rows' path parameters and a workspace on the device: the
// set-up is not part of the timed work, as cuRAND's generator set-up is not in rng's registry),
// then prices it on a stream as often as asked. gpukit's variants give the bits of
// price_monte_carlo_book on a CUDA context for the same book and options, whatever the variant:
// the launch shape never changes a bit (monte_carlo.hpp, "Statistics"). The vendor row prices
// only the problem the cuRAND sample prices (below), with none of gpukit's contract.

#include <memory>
#include <span>
#include <string_view>

#include "gpukit/core/cuda_handles.hpp"
#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/finance/monte_carlo.hpp"

namespace gpukit::finance {

/// A book prepared on the current device for repeated pricing.
class MonteCarloDeviceRun {
 public:
  virtual ~MonteCarloDeviceRun() = default;
  /// Queues one pricing of the book on `stream` and returns without waiting (the run's device
  /// memory is reused by every launch, so launches on different streams must not overlap).
  virtual void launch(StreamHandle stream) = 0;
  /// Queues a fill of the run's device results with NaN bytes on `stream`, so that a check after
  /// the next launch cannot read a previous launch's values.
  virtual void poison(StreamHandle stream) = 0;
  /// Waits for `stream` and returns the result of the last launch (Greeks empty).
  virtual MonteCarloBookResult result(StreamHandle stream) = 0;
};

/// Prepares `book` (host memory) with `options` on the current device, for kernels in Real (the
/// options' precision). Throws what price_monte_carlo_book throws for a bad book or options, and
/// InvalidInput for what the variant does not price: Greeks (the bumped books are the API's), a
/// book of more than kMonteCarloDevicePartRows rows, or, for the vendor row, anything but its one
/// problem.
template <class Real>
using MonteCarloPrepare = std::unique_ptr<MonteCarloDeviceRun>(const MonteCarloBookView& book,
                                                               const MonteCarloOptions& options);

struct MonteCarloVariant {
  /// Traffic: an element is a path-step (a one-step European option: a path); no global memory
  /// is read or written per element (a row's parameters and its tile moments are a few bytes per
  /// 2048 paths). Flops are counted as in the seed: each hardware function (log, sqrt, sin, cos,
  /// exp) as one.
  VariantInfo info;
  PerType<MonteCarloPrepare, RealTypes> preparers;
  /// Prices every book gpukit's API prices (false: the vendor row's one problem only).
  bool prices_any_book = true;

  /// The run of `book` prepared by the function for the options' precision.
  std::unique_ptr<MonteCarloDeviceRun> prepare(const MonteCarloBookView& book,
                                               const MonteCarloOptions& options) const {
    return options.precision == Precision::float32 ? preparers.get<float>()(book, options)
                                                   : preparers.get<double>()(book, options);
  }
};

/// Every variant in ladder order (the seed's two launches first, cuRAND last); empty in a build
/// without CUDA.
std::span<const MonteCarloVariant> monte_carlo_variants();

/// The variant price_monte_carlo_book uses: the automatic launch.
const MonteCarloVariant& default_monte_carlo_variant();

/// Looks a variant up by name; InvalidInput listing the names when there is none,
/// DeviceUnavailable in a build without CUDA.
const MonteCarloVariant& find_monte_carlo_variant(std::string_view name);

}  // namespace gpukit::finance
