#pragma once
// Tests written once and run on every backend (Kokkos's pattern): one scenario body, instantiated
// for Context::cpu() and for Context::cuda(). The CUDA instances compile in every build; without a
// usable device they skip through GPUKIT_GPU_SKIP (a failure where GPUKIT_REQUIRE_GPU=1).
//
// Instances are named by backend first, `Cpu/...` and `Cuda/...`: tests/CMakeLists.txt gives the
// `Cuda/` ones the `gpu` label (gpukit_add_test(... EVERY_BACKEND)).
//
// Two shapes:
// - a scenario per element type: TYPED_TEST_SUITE_P over OnBackend<T, B>, instantiated with
//   GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(Suite, int32_t, float, ...);
// - a scenario with its own types: TEST_P on a fixture derived from EveryBackendTest, instantiated
//   with GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(Suite).

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <type_traits>

#include "gpu_test_support.hpp"
#include "gpukit/core/context.hpp"

namespace gpukit {
/// How GoogleTest prints a backend parameter ("cuda" rather than "4-byte object <01-00 00-00>").
inline void PrintTo(Backend backend, std::ostream* os) {
  *os << (backend == Backend::cuda ? "cuda" : "cpu");
}
}  // namespace gpukit

namespace gpukit::testing {

/// The test type of a typed scenario: element type T on backend B.
template <class T, Backend B>
struct OnBackend {
  using Element = T;
  static constexpr Backend backend = B;
};

/// The context a scenario runs on; `cpu_threads` only matters on the CPU.
inline Context backend_context(Backend backend, int cpu_threads = 0) {
  return backend == Backend::cuda ? Context::cuda(0, cpu_threads) : Context::cpu(cpu_threads);
}

/// First thing of every scenario on backend `backend`: the CUDA instances need a device.
inline void require_backend(Backend backend) {
  if (backend == Backend::cuda) GPUKIT_REQUIRE_GPU();
}

/// The fixture of typed scenarios: TYPED_TEST_SUITE_P(Suite) with `using Suite =
/// EveryBackendTypedTest<...>` does not work, so suites derive: `template <class Case> class
/// ScanTest : public EveryBackendTypedTest<Case> {};`. In a body, `TypeParam::Element` is the
/// element type and `this->context()` the backend's context.
template <class Case>
class EveryBackendTypedTest : public ::testing::Test {
 protected:
  void SetUp() override { require_backend(Case::backend); }
  static Context context(int cpu_threads = 0) {
    return backend_context(Case::backend, cpu_threads);
  }
};

/// The fixture of scenarios that choose their own types: GetParam() is the backend.
class EveryBackendTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { require_backend(GetParam()); }
  Context context(int cpu_threads = 0) const { return backend_context(GetParam(), cpu_threads); }
};

/// Readable instance names: Cpu/ScanTest/float.Scenario rather than Cpu/ScanTest/3.Scenario.
template <class T>
constexpr const char* element_name() {
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  if constexpr (std::is_same_v<T, std::uint32_t>) return "uint32";
  if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, double>) return "double";
  return "other";
}
/// The typed scenarios' type list: each element type T on backend B.
template <Backend B, class... T>
using OnEachElement = ::testing::Types<OnBackend<T, B>...>;

struct ElementNames {
  template <class Case>
  static std::string GetName(int) {
    return element_name<typename Case::Element>();
  }
};

}  // namespace gpukit::testing

/// Instantiates the typed scenarios of `suite` (TYPED_TEST_SUITE_P, registered) for every element
/// type listed, once on the CPU (prefix Cpu) and once on CUDA (prefix Cuda).
#define GPUKIT_INSTANTIATE_ON_EVERY_BACKEND(suite, ...)                                         \
  using suite##OnCpu = ::gpukit::testing::OnEachElement<::gpukit::Backend::cpu, __VA_ARGS__>;   \
  using suite##OnCuda = ::gpukit::testing::OnEachElement<::gpukit::Backend::cuda, __VA_ARGS__>; \
  INSTANTIATE_TYPED_TEST_SUITE_P(Cpu, suite, suite##OnCpu, ::gpukit::testing::ElementNames);    \
  INSTANTIATE_TYPED_TEST_SUITE_P(Cuda, suite, suite##OnCuda, ::gpukit::testing::ElementNames)

/// Instantiates the TEST_P scenarios of `suite` (a fixture derived from EveryBackendTest) once on
/// the CPU (prefix Cpu) and once on CUDA (prefix Cuda).
#define GPUKIT_INSTANTIATE_ON_EVERY_BACKEND_P(suite)                                \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::Values(::gpukit::Backend::cpu),   \
                           [](const auto&) { return std::string("cpu"); });         \
  INSTANTIATE_TEST_SUITE_P(Cuda, suite, ::testing::Values(::gpukit::Backend::cuda), \
                           [](const auto&) { return std::string("cuda"); })
