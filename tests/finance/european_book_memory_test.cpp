// What price_european_book allocates, observed through a counting operator new (this executable
// replaces it, so it has an executable of its own): a double book is priced from its own columns,
// its rows' sides selecting what is computed, so that the host memory a call takes is its result
// columns, not a copy of the book nor a second side.

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "black_scholes_test_support.hpp"
#include "every_backend_test_support.hpp"
#include "gpukit/finance/european_book.hpp"

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> counted_bytes{0};

}  // namespace

// Not inlined: g++ would otherwise see free() of what it knows came from operator new
// (-Wmismatched-new-delete), although here operator new is malloc.
[[gnu::noinline]] void* operator new(std::size_t bytes) {
  if (counting.load(std::memory_order_relaxed)) counted_bytes += bytes;
  if (void* p = std::malloc(bytes == 0 ? 1 : bytes)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace gpukit::finance {
namespace {

// Bytes allocated through operator new while `work` runs.
template <class Work>
std::size_t bytes_allocated_by(const Work& work) {
  counted_bytes = 0;
  counting = true;
  work();
  counting = false;
  return counted_bytes;
}

class EuropeanBookMemory : public gpukit::testing::EveryBackendTest {};

TEST_P(EuropeanBookMemory, ADoubleBookIsPricedFromItsOwnColumns) {
  constexpr std::size_t kOptions = std::size_t{1} << 16;
  const testing::Book b = testing::seed_like_book(kOptions, 2024);
  std::vector<std::uint8_t> is_put(kOptions);
  for (std::size_t i = 0; i < kOptions; ++i) is_put[i] = static_cast<std::uint8_t>(i % 2);
  const OptionBookView view = testing::book_view(b, is_put.data());
  price_european_book(context(), view, Precision::float64, true);  // first-call set-up not counted
  // The result's columns (price, and five Greeks) and a few small allocations besides: a copy of
  // one input column, or one output column of the other side, is as large as a result column.
  constexpr std::size_t kColumnBytes = kOptions * sizeof(double);
  constexpr std::size_t kSmallBytes = 16 * 1024;
  for (const bool greeks : {false, true}) {
    EuropeanBookResult result;
    const std::size_t bytes = bytes_allocated_by(
        [&] { result = price_european_book(context(), view, Precision::float64, greeks); });
    const std::size_t columns = greeks ? 6 : 1;
    EXPECT_LE(bytes, columns * kColumnBytes + kSmallBytes)
        << "greeks " << greeks << ": " << bytes << " bytes allocated for " << columns
        << " result columns of " << kColumnBytes << " bytes";
    ASSERT_EQ(result.price.size(), kOptions);
  }
}

GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(EuropeanBookMemory);

}  // namespace
}  // namespace gpukit::finance
