// implied_volatility_book: implied volatility rows over the job's workers (implied_volatility.hpp).

#include "gpukit/scale_out/implied_volatility.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <tuple>
#include <vector>

#include "gpukit/core/error.hpp"
#include "gpukit/scale_out/rows.hpp"

namespace gpukit::scale_out {

namespace {

// A book of quotes' rows as bytes, to move from the root to the ranks: a header that says which
// arrays follow, then each array present, in the header's order. Plain data in the sender's byte
// order (the hosts of a job share it), as finance/option_book_bytes.hpp packs a European book.
struct QuoteBookHeader {
  std::array<char, 8> magic = {'g', 'k', 'q', 'u', 'o', 't', 'e', '1'};
  std::int64_t count = 0;
  std::uint32_t present = 0;  // bit k: array k of PackedQuoteBook::arrays follows
  std::uint32_t reserved = 0;
  double rate = 0, dividend = 0;
};

class PackedQuoteBook {
 public:
  /// InvalidInput when `bytes` is not a whole packed book.
  explicit PackedQuoteBook(std::span<const std::byte> bytes) {
    QuoteBookHeader header;
    if (bytes.size() < sizeof header) throw InvalidInput("packed quote book: too short");
    std::memcpy(&header, bytes.data(), sizeof header);
    if (header.magic != QuoteBookHeader{}.magic || header.count < 0) {
      throw InvalidInput("packed quote book: bad header");
    }
    const auto count = static_cast<std::size_t>(header.count);
    std::size_t at = sizeof header;
    const auto take = [&]<class T>(std::size_t array, std::vector<T>& values) -> const T* {
      if ((header.present & (1u << array)) == 0) return nullptr;
      if ((bytes.size() - at) / sizeof(T) < count) {
        throw InvalidInput("packed quote book: shorter than its header says");
      }
      values.resize(count);
      if (count > 0) std::memcpy(values.data(), bytes.data() + at, count * sizeof(T));
      at += count * sizeof(T);
      return values.data();
    };
    view_.count = header.count;
    view_.is_put = take(0, is_put_);
    view_.price = take(1, price_);
    view_.underlying = take(2, underlying_);
    view_.strike = take(3, strike_);
    view_.maturity = take(4, maturity_);
    view_.rate = {take(5, rate_), header.rate};
    view_.dividend = {take(6, dividend_), header.dividend};
    if (at != bytes.size()) throw InvalidInput("packed quote book: longer than its header says");
  }
  PackedQuoteBook(const PackedQuoteBook&) = delete;
  PackedQuoteBook& operator=(const PackedQuoteBook&) = delete;

  const finance::ImpliedVolatilityBookView& view() const noexcept { return view_; }

  /// Rows [first, first + count) of `book` as the bytes the constructor reads.
  static std::vector<std::byte> pack(const finance::ImpliedVolatilityBookView& book,
                                     std::int64_t first, std::int64_t count) {
    const finance::ImpliedVolatilityBookView rows =
        finance::implied_volatility_book_rows(book, first, count);
    // The arrays in the header's bit order, each with its element size.
    const std::array<std::pair<const void*, std::size_t>, 7> arrays = {{
        {rows.is_put, sizeof(std::uint8_t)},
        {rows.price, sizeof(double)},
        {rows.underlying, sizeof(double)},
        {rows.strike, sizeof(double)},
        {rows.maturity, sizeof(double)},
        {rows.rate.values, sizeof(double)},
        {rows.dividend.values, sizeof(double)},
    }};
    QuoteBookHeader header;
    header.count = count;
    header.rate = rows.rate.scalar;
    header.dividend = rows.dividend.scalar;
    std::size_t bytes = sizeof header;
    for (std::size_t k = 0; k < arrays.size(); ++k) {
      if (arrays[k].first == nullptr) continue;
      header.present |= 1u << k;
      bytes += static_cast<std::size_t>(count) * arrays[k].second;
    }
    std::vector<std::byte> out(bytes);  // sized first: one allocation
    std::memcpy(out.data(), &header, sizeof header);
    std::size_t at = sizeof header;
    for (const auto& [values, size] : arrays) {
      if (values == nullptr || count == 0) continue;
      std::memcpy(out.data() + at, values, static_cast<std::size_t>(count) * size);
      at += static_cast<std::size_t>(count) * size;
    }
    return out;
  }

 private:
  std::vector<std::uint8_t> is_put_;
  std::vector<double> price_, underlying_, strike_, maturity_, rate_, dividend_;
  finance::ImpliedVolatilityBookView view_;
};

// A book of quotes' rows as compute_rows (rows.hpp) takes them.
struct ImpliedVolatilityRows {
  using View = finance::ImpliedVolatilityBookView;
  using Packed = PackedQuoteBook;
  using Result = finance::ImpliedVolatilityBookResult;

  finance::Precision precision;
  const finance::ImpliedVolatilityOptions& options;

  View rows(const View& book, std::int64_t first, std::int64_t count) const {
    return finance::implied_volatility_book_rows(book, first, count);
  }
  std::vector<std::byte> pack(const View& book, std::int64_t first, std::int64_t count) const {
    return PackedQuoteBook::pack(book, first, count);
  }
  Result compute(const Context& context, const View& book) const {
    return finance::implied_volatility_book(context, book, precision, options);
  }
  static auto columns(Result& result) { return std::tie(result.volatility, result.status); }
};

}  // namespace

finance::ImpliedVolatilityBookResult implied_volatility_book(
    const Job& job, const finance::ImpliedVolatilityBookView& book, finance::Precision precision,
    const finance::ImpliedVolatilityOptions& options, Results results) {
  return compute_rows(job, book, ImpliedVolatilityRows{precision, options}, results);
}

}  // namespace gpukit::scale_out
