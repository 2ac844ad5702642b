#include "gpukit/finance/option_book_bytes.hpp"

#include <array>
#include <cstring>
#include <string_view>

#include "gpukit/core/error.hpp"

namespace gpukit::finance {

namespace {

// "gkbook2" and a zero: the format's name and version (2: the Asian, exercise and Heston
// columns).
constexpr std::array<char, 8> kMagic = {'g', 'k', 'b', 'o', 'o', 'k', '2', '\0'};

// Which arrays follow the header, one bit each, in this order.
enum Present : std::uint32_t {
  kIsPut = 1u << 0,
  kSpot = 1u << 1,
  kStrike = 1u << 2,
  kMaturity = 1u << 3,
  kRate = 1u << 4,
  kVolatility = 1u << 5,
  kDividend = 1u << 6,
  kBarrierType = 1u << 7,
  kBarrier = 1u << 8,
  kSteps = 1u << 9,
  kStream = 1u << 10,
  kAverage = 1u << 11,
  kExercise = 1u << 12,
  kModel = 1u << 13,
  kV0 = 1u << 14,
  kKappa = 1u << 15,
  kTheta = 1u << 16,
  kSigmaV = 1u << 17,
  kRho = 1u << 18,
};

struct Header {
  std::array<char, 8> magic = kMagic;
  std::int64_t count = 0;
  std::uint32_t present = 0;
  std::uint32_t reserved = 0;
  double rate = 0, volatility = 0, dividend = 0;
  double v0 = 0, kappa = 0, theta = 0, sigma_v = 0, rho = 0;
};

// Copies `count` values to out[at..] and moves `at` past them (a null array adds nothing).
template <class T>
void put(std::vector<std::byte>& out, std::size_t& at, const T* values, std::int64_t count) {
  if (values == nullptr || count == 0) return;
  const std::size_t bytes = static_cast<std::size_t>(count) * sizeof(T);
  std::memcpy(out.data() + at, values, bytes);
  at += bytes;
}

template <class T>
std::size_t bytes_of(const T* values, std::int64_t count) {
  return values == nullptr ? 0 : static_cast<std::size_t>(count) * sizeof(T);
}

}  // namespace

std::vector<std::byte> pack_option_book(const OptionBookView& book, std::int64_t first,
                                        std::int64_t count) {
  const OptionBookView rows = book_rows(book, first, count);
  Header h;
  h.count = count;
  const auto bit = [&h](const void* p, std::uint32_t b) {
    if (p != nullptr) h.present |= b;
  };
  bit(rows.is_put, kIsPut), bit(rows.spot, kSpot), bit(rows.strike, kStrike);
  bit(rows.maturity, kMaturity), bit(rows.rate.values, kRate);
  bit(rows.volatility.values, kVolatility), bit(rows.dividend.values, kDividend);
  bit(rows.barrier_type, kBarrierType), bit(rows.barrier, kBarrier), bit(rows.steps, kSteps);
  bit(rows.stream, kStream);
  bit(rows.average, kAverage), bit(rows.exercise, kExercise), bit(rows.model, kModel);
  bit(rows.v0.values, kV0), bit(rows.kappa.values, kKappa), bit(rows.theta.values, kTheta);
  bit(rows.sigma_v.values, kSigmaV), bit(rows.rho.values, kRho);
  h.rate = rows.rate.scalar, h.volatility = rows.volatility.scalar;
  h.dividend = rows.dividend.scalar;
  h.v0 = rows.v0.scalar, h.kappa = rows.kappa.scalar, h.theta = rows.theta.scalar;
  h.sigma_v = rows.sigma_v.scalar, h.rho = rows.rho.scalar;
  // Sized first, then filled: one allocation for a book of any size.
  std::vector<std::byte> out(
      sizeof h + bytes_of(rows.is_put, count) + bytes_of(rows.spot, count) +
      bytes_of(rows.strike, count) + bytes_of(rows.maturity, count) +
      bytes_of(rows.rate.values, count) + bytes_of(rows.volatility.values, count) +
      bytes_of(rows.dividend.values, count) + bytes_of(rows.barrier_type, count) +
      bytes_of(rows.barrier, count) + bytes_of(rows.steps, count) + bytes_of(rows.stream, count) +
      bytes_of(rows.average, count) + bytes_of(rows.exercise, count) + bytes_of(rows.model, count) +
      bytes_of(rows.v0.values, count) + bytes_of(rows.kappa.values, count) +
      bytes_of(rows.theta.values, count) + bytes_of(rows.sigma_v.values, count) +
      bytes_of(rows.rho.values, count));
  std::size_t at = 0;
  put(out, at, &h, 1);
  put(out, at, rows.is_put, count);
  put(out, at, rows.spot, count);
  put(out, at, rows.strike, count);
  put(out, at, rows.maturity, count);
  put(out, at, rows.rate.values, count);
  put(out, at, rows.volatility.values, count);
  put(out, at, rows.dividend.values, count);
  put(out, at, rows.barrier_type, count);
  put(out, at, rows.barrier, count);
  put(out, at, rows.steps, count);
  put(out, at, rows.stream, count);
  put(out, at, rows.average, count);
  put(out, at, rows.exercise, count);
  put(out, at, rows.model, count);
  put(out, at, rows.v0.values, count);
  put(out, at, rows.kappa.values, count);
  put(out, at, rows.theta.values, count);
  put(out, at, rows.sigma_v.values, count);
  put(out, at, rows.rho.values, count);
  return out;
}

PackedOptionBook::PackedOptionBook(std::span<const std::byte> bytes) {
  Header h;
  if (bytes.size() < sizeof h) throw InvalidInput("packed option book: too short for its header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kMagic || h.count < 0) throw InvalidInput("packed option book: bad header");
  std::size_t at = sizeof h;
  const auto n = static_cast<std::size_t>(h.count);
  const auto take = [&]<class T>(std::uint32_t b, std::vector<T>& values) -> const T* {
    if ((h.present & b) == 0) return nullptr;
    if ((bytes.size() - at) / sizeof(T) < n) {
      throw InvalidInput("packed option book: shorter than its header says");
    }
    values.resize(n);
    if (n > 0) std::memcpy(values.data(), bytes.data() + at, n * sizeof(T));
    at += n * sizeof(T);
    return values.data();
  };
  view_.count = h.count;
  view_.is_put = take(kIsPut, is_put_);
  view_.spot = take(kSpot, spot_);
  view_.strike = take(kStrike, strike_);
  view_.maturity = take(kMaturity, maturity_);
  view_.rate = {take(kRate, rate_), h.rate};
  view_.volatility = {take(kVolatility, volatility_), h.volatility};
  view_.dividend = {take(kDividend, dividend_), h.dividend};
  view_.barrier_type = take(kBarrierType, barrier_type_);
  view_.barrier = take(kBarrier, barrier_);
  view_.steps = take(kSteps, steps_);
  view_.stream = take(kStream, stream_);
  view_.average = take(kAverage, average_);
  view_.exercise = take(kExercise, exercise_);
  view_.model = take(kModel, model_);
  view_.v0 = {take(kV0, v0_), h.v0};
  view_.kappa = {take(kKappa, kappa_), h.kappa};
  view_.theta = {take(kTheta, theta_), h.theta};
  view_.sigma_v = {take(kSigmaV, sigma_v_), h.sigma_v};
  view_.rho = {take(kRho, rho_), h.rho};
  if (at != bytes.size()) throw InvalidInput("packed option book: longer than its header says");
}

}  // namespace gpukit::finance
