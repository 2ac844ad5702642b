#pragma once
// The message of a refusal, for tests of the library's rules and their words.

#include <string>

#include "gpukit/core/error.hpp"

namespace gpukit::testing {

/// The message of the InvalidInput that `f` throws, or "no error" when it throws none.
template <class F>
std::string refusal(const F& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace gpukit::testing
