#pragma once
// Internal: the argument checks and error reports that a capability's entry points (reduce.cpp,
// scan.cpp, compact.cpp), its CPU backend and its sequential reference (cpu/) share, so that every
// path reports a bad call and an overflow in the same words.

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "gpukit/core/error.hpp"
#include "gpukit/primitives/reduce.hpp"

namespace gpukit::primitives::detail {

/// `value`, or InvalidInput where the exact integer sum overflowed the result type.
template <class T>
reduce_result_t<T> checked(reduce_result_t<T> value, bool overflow) {
  if (overflow) {
    throw InvalidInput(std::is_signed_v<T> ? "reduce: sum overflows int64"
                                           : "reduce: sum overflows uint64");
  }
  return value;
}

template <class T>
constexpr std::string_view type_name() {
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, float>) return "float32";
  if constexpr (std::is_same_v<T, double>) return "float64";
}

// What to do about an overflowing sum: convert to a type that holds it, where there is one.
template <class T>
constexpr std::string_view overflow_advice() {
  if constexpr (std::is_same_v<T, std::int64_t>) {
    return "int64 is the widest integer type; for an approximate result, convert the input to "
           "float64";
  } else {
    return "convert the input to int64 first";
  }
}

template <class T>
[[noreturn]] void throw_scan_overflow(std::int64_t index) {
  throw InvalidInput("scan: the sum overflows " + std::string(type_name<T>()) + " at element " +
                     std::to_string(index) + " (integer sums are exact; " +
                     std::string(overflow_advice<T>()) + ")");
}

/// Output and input are the same array or disjoint ones.
template <class T>
void validate_scan_arrays(const T* input, const T* output, std::int64_t count) {
  if (count < 0) throw InvalidInput("scan: negative element count");
  if (input == output || count == 0) return;
  const auto in = reinterpret_cast<std::uintptr_t>(input);
  const auto out = reinterpret_cast<std::uintptr_t>(output);
  const auto bytes = static_cast<std::uintptr_t>(count) * sizeof(T);
  if (in < out + bytes && out < in + bytes) {
    throw InvalidInput("scan: the output overlaps the input without being the same array");
  }
}

/// The output has room for every element of the input and does not overlap it.
template <class T>
void validate_compact_arrays(const T* input, std::size_t input_size, const T* output,
                             std::size_t output_size) {
  if (output_size < input_size) {
    throw InvalidInput("compact: the output has room for " + std::to_string(output_size) +
                       " elements, the input has " + std::to_string(input_size));
  }
  const auto in = reinterpret_cast<std::uintptr_t>(input);
  const auto out = reinterpret_cast<std::uintptr_t>(output);
  if (input_size > 0 && in < out + output_size * sizeof(T) && out < in + input_size * sizeof(T)) {
    throw InvalidInput("compact: the output overlaps the input");
  }
}

}  // namespace gpukit::primitives::detail
