#include "gpukit/core/error.hpp"

#include <gtest/gtest.h>

#include <exception>
#include <set>
#include <stdexcept>
#include <string>

namespace gpukit {
namespace {

TEST(Error, EveryKindHasItsOwnExitCodeAndName) {
  const ErrorKind kinds[] = {ErrorKind::invalid_input,      ErrorKind::io,
                             ErrorKind::out_of_memory,      ErrorKind::cuda,
                             ErrorKind::device_unavailable, ErrorKind::check_failed,
                             ErrorKind::interrupted};
  std::set<int> codes;
  std::set<std::string> names;
  for (ErrorKind k : kinds) {
    EXPECT_GT(exit_code(k), 2) << "0-2 are success, unexpected and usage";
    codes.insert(exit_code(k));
    names.insert(kind_name(k));
  }
  EXPECT_EQ(codes.size(), std::size(kinds));
  EXPECT_EQ(names.size(), std::size(kinds));
}

TEST(Error, OutOfMemoryCarriesTheBytesRequested) {
  const OutOfMemory e("cudaMalloc", 3u << 20);
  EXPECT_EQ(e.bytes_requested(), 3u << 20);
  EXPECT_EQ(e.kind(), ErrorKind::out_of_memory);
  EXPECT_NE(std::string(e.what()).find("3145728 bytes"), std::string::npos) << e.what();
}

TEST(Error, CudaErrorNamesCallFileAndLine) {
  const CudaError e("cudaMemcpy(a, b, n)", "invalid argument", "memory.cpp", 42);
  EXPECT_EQ(e.kind(), ErrorKind::cuda);
  EXPECT_EQ(e.call(), "cudaMemcpy(a, b, n)");
  const std::string what = e.what();
  EXPECT_NE(what.find("cudaMemcpy(a, b, n)"), std::string::npos);
  EXPECT_NE(what.find("memory.cpp:42"), std::string::npos);
  EXPECT_NE(what.find("invalid argument"), std::string::npos);
}

// Ctrl-C's code as a shell reports it (128 + SIGINT), so that a command stopped through the library
// exits as one the signal ended; the caller's own exception rides along as the cause.
TEST(Error, InterruptedIsTheShellsCodeAndCarriesTheCallersException) {
  EXPECT_EQ(exit_code(ErrorKind::interrupted), 130);
  EXPECT_STREQ(kind_name(ErrorKind::interrupted), "interrupted");
  const Interrupted alone("stopped");
  EXPECT_EQ(alone.kind(), ErrorKind::interrupted);
  EXPECT_EQ(alone.cause(), nullptr);
  const Interrupted carrying("stopped", std::make_exception_ptr(std::out_of_range("the caller's")));
  ASSERT_NE(carrying.cause(), nullptr);
  try {
    std::rethrow_exception(carrying.cause());
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "the caller's");
  }
}

}  // namespace
}  // namespace gpukit
