#pragma once
// The registry of CUDA reduction kernels: the seed's seven kernels, CS 152's methods, the Hopper
// steps, the deterministic engine (the API's default) and CUB. Tests and `gpukit bench reduce`
// iterate over it, so a new entry is tested and measured with no new test or bench code.

#include <cstdint>
#include <span>
#include <string_view>

#include "gpukit/core/per_type.hpp"
#include "gpukit/core/variant_info.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives {

/// A CUDA launcher: reduces `count` elements at `device_data` on `stream` into `device_result`
/// (device memory); nothing waits.
template <class T>
using ReduceLaunch = void(const T* device_data, std::int64_t count, ReduceOp op,
                          reduce_result_t<T>* device_result, ReduceWorkspace& workspace,
                          StreamHandle stream, const ReduceOptions& options);
using ReduceLaunchers = PerType<ReduceLaunch, PrimitiveTypes>;

struct ReduceVariant {
  /// `deterministic`: follows the fixed tree of reduce_canonical.hpp, so floating results are
  /// bitwise equal to the CPU backend's; the others add in an order that depends on the launch
  /// shape. Traffic: one value read per element.
  VariantInfo info;
  /// Accumulates integer sums in 128 bits and reports overflow; the others wrap at 64 bits.
  bool exact_integer_sums = false;
  /// Honours ReduceOptions::block_threads (the seed's kernels 1-5 take any power of two).
  bool takes_block_threads = false;
  ReduceLaunchers launchers;

  template <class T>
  void launch(const T* device_data, std::int64_t count, ReduceOp op,
              reduce_result_t<T>* device_result, ReduceWorkspace& workspace, StreamHandle stream,
              const ReduceOptions& options = {}) const {
    launchers.get<T>()(device_data, count, op, device_result, workspace, stream, options);
  }
};

/// Every variant in ladder order (the seed's kernel 1 first, CUB last); empty without CUDA.
std::span<const ReduceVariant> reduce_variants();

/// The variant reduce_on_device() uses: the deterministic engine.
const ReduceVariant& default_reduce_variant();

/// Looks a variant up by name; InvalidInput listing the names when there is none.
const ReduceVariant& find_reduce_variant(std::string_view name);

}  // namespace gpukit::primitives
