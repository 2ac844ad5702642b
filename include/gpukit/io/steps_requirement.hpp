#pragma once
// The rule of `gpukit mc`'s CSV book for the `steps` column, shared by the reader and the Python
// module's readers of arrays and DataFrames (io/option_book.hpp has the book's other rules).

#include <optional>
#include <string_view>

#include "gpukit/finance/instrument.hpp"

namespace gpukit::io {

/// Why a row of `gpukit mc`'s book needs its `steps`, whose number is part of its terms where its
/// dates are: "a barrier option needs its number of monitoring dates", "an Asian option needs its
/// number of fixings", "a bermudan option needs its number of exercise dates" (american alike),
/// "a heston row needs its number of time steps" (the first that applies, in that order); nullopt
/// for a European Black-Scholes row, which takes 1 step. read_option_book's messages for an empty
/// steps field or a missing steps column end with these words; so do the Python module's.
/// Tested in tests/io/option_book_test.cpp.
std::optional<std::string_view> steps_requirement(finance::BarrierType barrier,
                                                  finance::AverageType average,
                                                  finance::ExerciseStyle exercise,
                                                  finance::AssetModel model);

}  // namespace gpukit::io
