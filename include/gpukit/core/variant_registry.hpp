#pragma once
// Looking a variant up by name in a case study's registry (every registry is a span of entries,
// each a VariantInfo `info` plus its launchers), with the errors every registry gives.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit {

/// One launcher per element type of the primitives (int32, int64, uint32, float, double), as the
/// last member of a registry entry; `Launcher<T>` is the entry's function-pointer type for T.
template <template <class> class Launcher>
struct ElementTypeLaunchers {
  Launcher<std::int32_t> int32;
  Launcher<std::int64_t> int64;
  Launcher<std::uint32_t> uint32;
  Launcher<float> float32;
  Launcher<double> float64;

  template <class T>
  Launcher<T> for_type() const {
    if constexpr (std::is_same_v<T, std::int32_t>) return int32;
    if constexpr (std::is_same_v<T, std::int64_t>) return int64;
    if constexpr (std::is_same_v<T, std::uint32_t>) return uint32;
    if constexpr (std::is_same_v<T, float>) return float32;
    if constexpr (std::is_same_v<T, double>) return float64;
  }
};

/// The entry named `name`. DeviceUnavailable when the registry is empty (a CPU-only build),
/// InvalidInput listing the known names otherwise. `what` names the registry in messages.
template <class Variant>
const Variant& find_variant(std::span<const Variant> variants, std::string_view name,
                            std::string_view what) {
  std::string names;
  for (const Variant& v : variants) {
    if (v.info.name == name) return v;
    names += names.empty() ? "" : ", ";
    names += v.info.name;
  }
  if (names.empty()) {
    throw DeviceUnavailable(std::string(what) +
                            " CUDA variants: this gpukit was built without CUDA");
  }
  throw InvalidInput("unknown " + std::string(what) + " variant '" + std::string(name) +
                     "' (known: " + names + ")");
}

}  // namespace gpukit
