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

struct Header {
  std::array<char, 8> magic = kMagic;
  std::int64_t count = 0;
  std::uint32_t present = 0;  // bit i: the i-th array of for_each_row_array follows
  std::uint32_t reserved = 0;
  double scalars[8] = {};  // for_each_scalar's order
};

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
  std::uint32_t bit = 1;
  for_each_row_array(rows, [&](const auto* values) {
    if (values != nullptr) {
      h.present |= bit;
      bytes += static_cast<std::size_t>(count) * sizeof *values;
    }
    bit <<= 1;
  });
  int k = 0;
  for_each_scalar(rows, [&](double value) { h.scalars[k++] = value; });
  // Sized first, then filled: one allocation for a book of any size.
  std::vector<std::byte> out(bytes);
  std::memcpy(out.data(), &h, sizeof h);
  std::size_t at = sizeof h;
  for_each_row_array(rows, [&](const auto* values) {
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
  std::uint32_t bit = 1;
  for_each_row_array(view_, [&]<class T>(const T*& member) {
    const bool present = (h.present & bit) != 0;
    bit <<= 1;
    member = nullptr;
    if (!present) return;
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
