#pragma once
// The way back from what is priced to a CSV book: a book view (finance/instrument.hpp) as the
// option book a reader would have made of its CSV text, so that a book made in memory (the case
// study's random book of `gpukit bs --generate`) is written, priced and checked exactly as one read
// from a file.

#include "gpukit/finance/instrument.hpp"
#include "gpukit/io/option_book.hpp"

namespace gpukit::io {

/// The European terms of `view` as an OptionBook with the columns id (the row number), type (call
/// or put), spot, strike, maturity, rate and volatility, then dividend where the view has a
/// dividend (per option or a non-zero book-wide one); a book-wide parameter is written in every
/// row. Every number is written as the shortest text that reads back as the same double, so
/// instrument_view of the result gives back the view's values (tested in
/// tests/io/option_book_from_view_test.cpp). `source` names the book in messages. InvalidInput for
/// a negative count or a barrier row (the book format of `gpukit bs` has no barrier columns).
OptionBook option_book_from_view(const finance::OptionBookView& view, const std::string& source);

}  // namespace gpukit::io
