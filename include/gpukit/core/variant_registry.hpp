#pragma once
// Looking a variant up by name in a case study's registry (every registry is a span of entries,
// each a VariantInfo `info` plus its functions, a PerType table of them where they are per element
// type: per_type.hpp), with the errors every registry gives.

#include <span>
#include <string>
#include <string_view>

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_info.hpp"

namespace gpukit {

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
