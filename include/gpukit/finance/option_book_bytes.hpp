#pragma once
// A book's terms as bytes, to move between the processes of a job (gpukit/distributed): rank 0
// reads the CSV, every rank prices from what it receives. The format is plain data in the sender's
// byte order (the hosts of a job share it), with a header that says which arrays follow.

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "gpukit/finance/instrument.hpp"

namespace gpukit::finance {

/// Rows [first, first + count) of `book` as bytes: every array the view names (null arrays stay
/// null) and the book-wide parameters. Precondition: the rows exist (book_rows's).
std::vector<std::byte> pack_option_book(const OptionBookView& book, std::int64_t first,
                                        std::int64_t count);

/// A book made from pack_option_book's bytes: it owns the arrays and views them.
class PackedOptionBook {
 public:
  /// Throws InvalidInput when `bytes` is not a whole packed book.
  explicit PackedOptionBook(std::span<const std::byte> bytes);
  PackedOptionBook(const PackedOptionBook&) = delete;
  PackedOptionBook& operator=(const PackedOptionBook&) = delete;
  /// The book; valid while this object lives.
  const OptionBookView& view() const noexcept { return view_; }

 private:
  std::vector<std::vector<std::byte>> arrays_;  // the arrays the view points into
  OptionBookView view_;
};

}  // namespace gpukit::finance
