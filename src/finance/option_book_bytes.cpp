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
  double scalars[8] = {};  // for_each_scalar's order
};

// Every array a view can name, in the format's order, with its presence bit: one list for
// sizing, packing and unpacking, so that a column the view gains is added here once. `f` is
// called as f(bit, pointer member) on `view` (const or not).
template <class View, class F>
void for_each_array(View& view, F&& f) {
  f(kIsPut, view.is_put), f(kSpot, view.spot), f(kStrike, view.strike);
  f(kMaturity, view.maturity), f(kRate, view.rate.values), f(kVolatility, view.volatility.values);
  f(kDividend, view.dividend.values), f(kBarrierType, view.barrier_type);
  f(kBarrier, view.barrier), f(kSteps, view.steps), f(kStream, view.stream);
  f(kAverage, view.average), f(kExercise, view.exercise), f(kModel, view.model);
  f(kV0, view.v0.values), f(kKappa, view.kappa.values), f(kTheta, view.theta.values);
  f(kSigmaV, view.sigma_v.values), f(kRho, view.rho.values);
}

// The book-wide values of the parameters given once, in the header's order.
template <class View, class F>
void for_each_scalar(View& view, F&& f) {
  f(view.rate.scalar), f(view.volatility.scalar), f(view.dividend.scalar), f(view.v0.scalar);
  f(view.kappa.scalar), f(view.theta.scalar), f(view.sigma_v.scalar), f(view.rho.scalar);
}

}  // namespace

std::vector<std::byte> pack_option_book(const OptionBookView& book, std::int64_t first,
                                        std::int64_t count) {
  const OptionBookView rows = book_rows(book, first, count);
  Header h;
  h.count = count;
  std::size_t bytes = sizeof h;
  for_each_array(rows, [&](std::uint32_t bit, const auto* values) {
    if (values == nullptr) return;
    h.present |= bit;
    bytes += static_cast<std::size_t>(count) * sizeof *values;
  });
  int k = 0;
  for_each_scalar(rows, [&](double value) { h.scalars[k++] = value; });
  // Sized first, then filled: one allocation for a book of any size.
  std::vector<std::byte> out(bytes);
  std::memcpy(out.data(), &h, sizeof h);
  std::size_t at = sizeof h;
  for_each_array(rows, [&](std::uint32_t, const auto* values) {
    if (values == nullptr || count == 0) return;
    const std::size_t size = static_cast<std::size_t>(count) * sizeof *values;
    std::memcpy(out.data() + at, values, size);
    at += size;
  });
  return out;
}

PackedOptionBook::PackedOptionBook(std::span<const std::byte> bytes) {
  Header h;
  if (bytes.size() < sizeof h) throw InvalidInput("packed option book: too short for its header");
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.magic != kMagic || h.count < 0) throw InvalidInput("packed option book: bad header");
  std::size_t at = sizeof h;
  const auto n = static_cast<std::size_t>(h.count);
  view_.count = h.count;
  // Each array in storage of its own (freshly allocated, so aligned for any element type).
  for_each_array(view_, [&]<class T>(std::uint32_t bit, const T*& member) {
    member = nullptr;
    if ((h.present & bit) == 0) return;
    if ((bytes.size() - at) / sizeof(T) < n) {
      throw InvalidInput("packed option book: shorter than its header says");
    }
    const std::size_t size = n * sizeof(T);
    arrays_.emplace_back(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                         bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
    member = n > 0 ? reinterpret_cast<const T*>(arrays_.back().data()) : nullptr;
    at += size;
  });
  int k = 0;
  for_each_scalar(view_, [&](double& value) { value = h.scalars[k++]; });
  if (at != bytes.size()) throw InvalidInput("packed option book: longer than its header says");
}

}  // namespace gpukit::finance
