// The scalar rule of gemm and axpy (gpukit/blas/scalar.hpp).

#include "gpukit/blas/scalar.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::blas {

namespace {

template <class T>
constexpr std::string_view type_name() {
  return sizeof(T) == sizeof(float) ? "float32" : "float64";
}

template <class T>
[[noreturn]] void refuse_out_of_range(std::string_view name, std::string_view given) {
  throw InvalidInput(fmt::format("{} must fit {} (magnitude at most {}), got {}", name,
                                 type_name<T>(), std::numeric_limits<T>::max(), given));
}

template <class T>
[[noreturn]] void refuse_rounding_to_zero(std::string_view name, std::string_view given) {
  throw InvalidInput(fmt::format("{} must not round to 0 in {} (magnitude at least {}), got {}",
                                 name, type_name<T>(), std::numeric_limits<T>::denorm_min(),
                                 given));
}

// For decimal text that from_chars read whole (digits[.digits][(e|E)[+-]digits], after a sign):
// whether it has a non-zero digit, and whether its magnitude is at least 1. This tells an
// overflow from an underflow without trusting how the standard library reports either (the
// standard leaves underflow's report to the implementation).
struct DecimalMagnitude {
  bool non_zero = false;
  bool at_least_one = false;
};

DecimalMagnitude decimal_magnitude(std::string_view text) {
  std::size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  // The place of the first non-zero digit: its value is d * 10^place.
  long place = 0;
  long digits_before_point = 0;
  bool point = false, found = false;
  long digits_seen = 0;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      point = true;
      continue;
    }
    if (!point) ++digits_before_point;
    if (!found && text[i] != '0') {
      found = true;
      place = -(digits_seen + 1);  // relative to the point's position, fixed below
    }
    ++digits_seen;
  }
  if (!found) return {};
  place += digits_before_point;
  long exponent = 0;
  if (i < text.size()) {
    ++i;
    const bool negative = i < text.size() && text[i] == '-';
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
    // Saturate: an exponent beyond any type's range says all there is to say.
    for (; i < text.size(); ++i) exponent = std::min(exponent * 10 + (text[i] - '0'), 1000000L);
    if (negative) exponent = -exponent;
  }
  return {true, place + exponent >= 0};
}

}  // namespace

template <class T>
T parse_scalar(std::string_view name, std::string_view text) {
  const std::string quoted = fmt::format("'{}'", text);
  // from_chars takes no '+'; strip one that starts a number (not "+-1" or "+nan").
  const bool plus =
      text.size() > 1 && text[0] == '+' && ((text[1] >= '0' && text[1] <= '9') || text[1] == '.');
  const std::string_view digits = plus ? text.substr(1) : text;
  T value{};
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value,
                                            std::chars_format::general);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (error != std::errc() && error != std::errc::result_out_of_range)) {
    throw InvalidInput(fmt::format("{} must be a number, got {}", name, quoted));
  }
  // What from_chars read whole is a decimal number or one of the words inf, infinity, nan.
  const std::string_view unsigned_part = digits.starts_with('-') ? digits.substr(1) : digits;
  const bool word =
      !unsigned_part.empty() && std::isalpha(static_cast<unsigned char>(unsigned_part[0]));
  if (word) throw InvalidInput(fmt::format("{} must be finite, got {}", name, quoted));
  const DecimalMagnitude magnitude = decimal_magnitude(digits);
  if (error == std::errc::result_out_of_range || std::isinf(value) ||
      (value == T(0) && magnitude.non_zero)) {
    if (magnitude.at_least_one) refuse_out_of_range<T>(name, quoted);
    refuse_rounding_to_zero<T>(name, quoted);
  }
  return value;
}

template <class T>
T scalar_from_double(std::string_view name, double value) {
  const std::string given = fmt::format("{}", value);
  if (!std::isfinite(value))
    throw InvalidInput(fmt::format("{} must be finite, got {}", name, given));
  if constexpr (sizeof(T) == sizeof(float)) {
    // The midpoint between float's largest and 2^128 and beyond round to Inf (ties to even: the
    // largest float's last bit is odd); checked before the conversion, which is undefined
    // behaviour in C++ for a value out of range.
    if (std::fabs(value) >= 0x1.ffffffp+127) refuse_out_of_range<T>(name, given);
  }
  const T rounded = static_cast<T>(value);
  if (rounded == T(0) && value != 0) refuse_rounding_to_zero<T>(name, given);
  return rounded;
}

template float parse_scalar<float>(std::string_view, std::string_view);
template double parse_scalar<double>(std::string_view, std::string_view);
template float scalar_from_double<float>(std::string_view, double);
template double scalar_from_double<double>(std::string_view, double);

}  // namespace gpukit::blas
