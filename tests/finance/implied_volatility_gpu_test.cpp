// Implied volatility on arrays already in device memory (implied_volatility_on_device): the
// issue's grid in every model and precision, outputs poisoned, every row checked by the
// independent long double check; the same bits as the host path's chunks through the same kernel;
// a row count of 0 launches nothing, a negative one throws. The public host-memory API on every
// backend: implied_volatility_test.cpp.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "gpu_test_support.hpp"
#include "gpukit/core/error.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#include "gpukit/finance/implied_volatility.hpp"
#include "gpukit/finance/implied_volatility_reference.hpp"
#include "implied_volatility_test_support.hpp"
#include "test_seed.hpp"

namespace gpukit::finance {
namespace {

using testing::grid_book;
using testing::kModels;
using testing::model_name;
using testing::QuoteBook;

// `book` in Real on the device, inverted there into poisoned outputs (0xFF: NaN volatilities and
// a status value no row has), returned widened.
template <class Real>
ImpliedVolatilityBookResult invert_on_device(const QuoteBook& book, VolatilityModel model) {
  const std::size_t n = book.size();
  const auto column = [](const std::vector<double>& v) {
    return std::vector<Real>(v.begin(), v.end());
  };
  cuda::Stream stream;
  cuda::DeviceBuffer<Real> price(n), underlying(n), strike(n), maturity(n), rate(n), dividend(n),
      volatility(n);
  cuda::DeviceBuffer<std::uint8_t> is_put(n);
  cuda::DeviceBuffer<ImpliedVolatilityStatus> status(n);
  price.copy_from_host(column(book.price));
  underlying.copy_from_host(column(book.underlying));
  strike.copy_from_host(column(book.strike));
  maturity.copy_from_host(column(book.maturity));
  rate.copy_from_host(column(book.rate));
  dividend.copy_from_host(column(book.dividend));
  is_put.copy_from_host(book.is_put);
  cuda::fill_bytes_async(volatility.data(), 0xFF, n * sizeof(Real), stream.handle());
  cuda::fill_bytes_async(status.data(), 0xFF, n, stream.handle());
  ImpliedVolatilityOptions options;
  options.model = model;
  implied_volatility_on_device(ImpliedVolatilityInputs<Real>{static_cast<std::int64_t>(n),
                                                             price.data(),
                                                             underlying.data(),
                                                             strike.data(),
                                                             maturity.data(),
                                                             {rate.data()},
                                                             {dividend.data()},
                                                             {is_put.data()}},
                               ImpliedVolatilityOutputs<Real>{volatility.data(), status.data()},
                               stream.handle(), options);
  stream.synchronize();
  std::vector<Real> v(n);
  ImpliedVolatilityBookResult r;
  r.status.resize(n);
  volatility.copy_to_host(v);
  status.copy_to_host(r.status);
  r.volatility.assign(v.begin(), v.end());
  return r;
}

template <class Real>
void check_grid_on_device(Precision precision) {
  const gpukit::testing::TestSeed seed;
  for (const VolatilityModel model : kModels) {
    for (const std::size_t n : {1u, 33u, 4099u}) {
      const QuoteBook book = grid_book(model, precision, n, seed.value() + n);
      const ImpliedVolatilityBookResult r = invert_on_device<Real>(book, model);
      const ImpliedVolatilityCheck check =
          check_implied_volatility_book(book.view(), precision, model, r.volatility, r.status);
      EXPECT_TRUE(check.passed) << model_name(model) << " n " << n << ": worst ratio "
                                << check.worst_ratio << " at row " << check.worst_index
                                << ", status mismatches " << check.status_mismatches;
      // The host path runs the same kernel on its chunks: the same bits.
      ImpliedVolatilityOptions options;
      options.model = model;
      options.chunk_rows = 1000;
      const ImpliedVolatilityBookResult host =
          implied_volatility_book(Context::cuda(0), book.view(), precision, options);
      EXPECT_EQ(0, std::memcmp(host.volatility.data(), r.volatility.data(), n * sizeof(double)))
          << model_name(model) << " n " << n;
      EXPECT_EQ(host.status, r.status) << model_name(model) << " n " << n;
    }
  }
}

TEST(ImpliedVolatilityOnDevice, GridPassesTheCheckInDouble) {
  GPUKIT_REQUIRE_GPU();
  check_grid_on_device<double>(Precision::float64);
}

TEST(ImpliedVolatilityOnDevice, GridPassesTheCheckInFloat) {
  GPUKIT_REQUIRE_GPU();
  check_grid_on_device<float>(Precision::float32);
}

TEST(ImpliedVolatilityOnDevice, ZeroRowsLaunchNothingAndANegativeCountThrows) {
  GPUKIT_REQUIRE_GPU();
  cuda::Stream stream;
  ImpliedVolatilityInputs<double> in{};
  EXPECT_NO_THROW(
      implied_volatility_on_device(in, ImpliedVolatilityOutputs<double>{}, stream.handle()));
  in.count = -1;
  EXPECT_THROW(
      implied_volatility_on_device(in, ImpliedVolatilityOutputs<double>{}, stream.handle()),
      InvalidInput);
}

}  // namespace
}  // namespace gpukit::finance
