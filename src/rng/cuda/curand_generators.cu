// The vendor rows of `gpukit bench rng`: cuRAND's host API, one curandGenerator_t per object,
// created (and, for the generators that have set-up kernels, warmed by cuRAND itself) in the
// constructor so that a fill is only the generation.

#include <curand.h>

#include <cstdint>
#include <memory>
#include <string>

#include "gpukit/core/error.hpp"
#include "rng/cuda/curand_generators.hpp"

namespace gpukit::rng::cuda_detail {

namespace {

const char* curand_status_name(curandStatus_t status) {
  switch (status) {
    case CURAND_STATUS_NOT_INITIALIZED:
      return "generator not initialized";
    case CURAND_STATUS_ALLOCATION_FAILED:
      return "memory allocation failed";
    case CURAND_STATUS_TYPE_ERROR:
      return "wrong generator type";
    case CURAND_STATUS_OUT_OF_RANGE:
      return "argument out of range";
    case CURAND_STATUS_LENGTH_NOT_MULTIPLE:
      return "length not a multiple of the dimension";
    case CURAND_STATUS_LAUNCH_FAILURE:
      return "kernel launch failure";
    case CURAND_STATUS_ARCH_MISMATCH:
      return "architecture mismatch";
    default:
      return "cuRAND error";
  }
}

#define GPUKIT_CURAND_CHECK(call)                                                     \
  do {                                                                                \
    const curandStatus_t gpukit_status_ = (call);                                     \
    if (gpukit_status_ != CURAND_STATUS_SUCCESS)                                      \
      throw CudaError(#call, curand_status_name(gpukit_status_), __FILE__, __LINE__); \
  } while (0)

class CurandGenerator final : public DeviceGenerator {
 public:
  CurandGenerator(curandRngType_t type, std::uint64_t seed) {
    GPUKIT_CURAND_CHECK(curandCreateGenerator(&generator_, type));
    try {
      GPUKIT_CURAND_CHECK(curandSetPseudoRandomGeneratorSeed(generator_, seed));
    } catch (...) {
      curandDestroyGenerator(generator_);
      throw;
    }
  }
  ~CurandGenerator() override { curandDestroyGenerator(generator_); }
  CurandGenerator(const CurandGenerator&) = delete;
  CurandGenerator& operator=(const CurandGenerator&) = delete;

  bool produces(RandomOutput) const override { return true; }

  void fill(RandomOutput output, void* device_out, std::int64_t count,
            StreamHandle stream) override {
    if (count < 0) throw InvalidInput("cuRAND fill: negative count");
    const bool normal =
        output == RandomOutput::normal_float || output == RandomOutput::normal_double;
    if (normal && count % 2 != 0) {
      throw InvalidInput("cuRAND fill: normal numbers come in pairs (count " +
                         std::to_string(count) + " is odd)");
    }
    if (count == 0) return;
    GPUKIT_CURAND_CHECK(curandSetStream(generator_, stream));
    const auto n = static_cast<std::size_t>(count);
    switch (output) {
      case RandomOutput::bits32:
        GPUKIT_CURAND_CHECK(curandGenerate(generator_, static_cast<unsigned*>(device_out), n));
        break;
      case RandomOutput::uniform_float:
        GPUKIT_CURAND_CHECK(curandGenerateUniform(generator_, static_cast<float*>(device_out), n));
        break;
      case RandomOutput::uniform_double:
        GPUKIT_CURAND_CHECK(
            curandGenerateUniformDouble(generator_, static_cast<double*>(device_out), n));
        break;
      case RandomOutput::normal_float:
        GPUKIT_CURAND_CHECK(
            curandGenerateNormal(generator_, static_cast<float*>(device_out), n, 0, 1));
        break;
      case RandomOutput::normal_double:
        GPUKIT_CURAND_CHECK(
            curandGenerateNormalDouble(generator_, static_cast<double*>(device_out), n, 0, 1));
        break;
    }
  }

 private:
  curandGenerator_t generator_ = nullptr;
};

}  // namespace

std::unique_ptr<DeviceGenerator> make_curand_philox(std::uint64_t seed) {
  return std::make_unique<CurandGenerator>(CURAND_RNG_PSEUDO_PHILOX4_32_10, seed);
}
std::unique_ptr<DeviceGenerator> make_curand_mtgp32(std::uint64_t seed) {
  return std::make_unique<CurandGenerator>(CURAND_RNG_PSEUDO_MTGP32, seed);
}
std::unique_ptr<DeviceGenerator> make_curand_mt19937(std::uint64_t seed) {
  return std::make_unique<CurandGenerator>(CURAND_RNG_PSEUDO_MT19937, seed);
}
std::unique_ptr<DeviceGenerator> make_curand_xorwow(std::uint64_t seed) {
  return std::make_unique<CurandGenerator>(CURAND_RNG_PSEUDO_XORWOW, seed);
}

}  // namespace gpukit::rng::cuda_detail
