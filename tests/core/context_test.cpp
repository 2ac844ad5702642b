#include "gpukit/core/context.hpp"

#include <gtest/gtest.h>

#include <string>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit {
namespace {

TEST(SelectDevice, CpuIsAlwaysAvailable) {
  const DeviceSelection s = select_device("cpu", 3);
  EXPECT_EQ(s.context.backend, Backend::cpu);
  EXPECT_EQ(s.context.cpu_threads, 3);
  EXPECT_EQ(s.context.effective_cpu_threads(), 3);
  EXPECT_TRUE(s.notice.empty());
}

TEST(SelectDevice, AutoPicksTheGpuOrFallsBackWithOneLine) {
  const DeviceSelection s = select_device("auto");
  ASSERT_FALSE(s.notice.empty());
  EXPECT_EQ(s.notice.find('\n'), std::string::npos);
  if (cuda_device_count() > 0) {
    EXPECT_EQ(s.context.backend, Backend::cuda);
    EXPECT_EQ(s.context.cuda_device, 0);
  } else {
    EXPECT_EQ(s.context.backend, Backend::cpu);
    EXPECT_NE(s.notice.find("using the CPU"), std::string::npos) << s.notice;
  }
}

TEST(SelectDevice, CudaWithoutAGpuIsAClearError) {
  if (cuda_device_count() > 0) GTEST_SKIP() << "a GPU is present";
  EXPECT_THROW(select_device("cuda"), DeviceUnavailable);
  EXPECT_THROW(select_device("cuda:0"), DeviceUnavailable);
}

TEST(SelectDevice, OrdinalPastTheLastDeviceIsUnavailable) {
  EXPECT_THROW(select_device("cuda:4096"), DeviceUnavailable);
}

TEST(SelectDevice, MalformedSpecsAreInvalidInput) {
  for (const char* spec : {"", "gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "CPU"}) {
    EXPECT_THROW(select_device(spec), InvalidInput) << spec;
  }
  EXPECT_THROW(select_device("cpu", -1), InvalidInput);
}

// One message for every front door: it names the device, not the CLI's --device (Python's
// keyword is device=), and each front door adds its own context.
TEST(SelectDevice, MessagesNameTheDeviceNotACommandLineFlag) {
  for (const char* spec : {"gpu", "cuda:x", "cuda:4096"}) {
    try {
      select_device(spec);
      ADD_FAILURE() << spec << " was accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(message.rfind("device", 0), 0u) << message;
      EXPECT_EQ(message.find("--device"), std::string::npos) << message;
      EXPECT_NE(message.find(spec), std::string::npos) << message;
    }
  }
}

TEST(Device, QueryOfAMissingDeviceThrows) {
  EXPECT_THROW(query_device(cuda_device_count()), DeviceUnavailable);
}

}  // namespace
}  // namespace gpukit
