#include "gpukit/io/option_book_from_view.hpp"

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"

namespace gpukit::io {

OptionBook option_book_from_view(const finance::OptionBookView& view, const std::string& source) {
  if (view.count < 0) throw InvalidInput(source + ": negative option count");
  const auto n = static_cast<std::size_t>(view.count);
  auto value = [](const finance::PerOption<double>& p, std::size_t i) {
    return p.values != nullptr ? p.values[i] : p.scalar;
  };
  const bool with_dividend = view.dividend.values != nullptr || view.dividend.scalar != 0;

  OptionBook book;
  book.source = source;
  book.columns = {"id", "type", "spot", "strike", "maturity", "rate", "volatility"};
  if (with_dividend) book.columns.push_back("dividend");
  book.is_put.assign(view.is_put, view.is_put + n);
  book.spot.assign(view.spot, view.spot + n);
  book.strike.assign(view.strike, view.strike + n);
  book.maturity.assign(view.maturity, view.maturity + n);
  // As a reader stores them: a column per parameter, since every row carries its value.
  for (std::size_t i = 0; i < n; ++i) {
    if (view.barrier_type != nullptr && view.barrier_type[i] != finance::BarrierType::none) {
      throw InvalidInput(fmt::format("{}: row {} is a barrier option", source, i));
    }
    book.rate.push_back(value(view.rate, i));
    book.volatility.push_back(value(view.volatility, i));
    book.dividend.push_back(value(view.dividend, i));
  }

  book.field_offsets.reserve(n * book.columns.size() + 1);
  book.field_offsets.push_back(0);
  auto add_field = [&book](std::string_view text) {
    book.field_text.append(text);
    book.field_offsets.push_back(book.field_text.size());
  };
  for (std::size_t i = 0; i < n; ++i) {
    add_field(fmt::format("{}", i));
    add_field(book.is_put[i] ? "put" : "call");
    // fmt's `{}` is the shortest text that round-trips the double.
    for (const double v :
         {book.spot[i], book.strike[i], book.maturity[i], book.rate[i], book.volatility[i]}) {
      add_field(fmt::format("{}", v));
    }
    if (with_dividend) add_field(fmt::format("{}", book.dividend[i]));
  }
  return book;
}

}  // namespace gpukit::io
