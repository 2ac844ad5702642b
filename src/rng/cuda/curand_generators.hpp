#pragma once
// Internal: cuRAND's host-API generators as gpukit DeviceGenerators (curand_generators.cu), so
// the registry compiles without CUDA headers.

#include <cstdint>
#include <memory>

#include "gpukit/rng/generator_variants.hpp"

namespace gpukit::rng::cuda_detail {

std::unique_ptr<DeviceGenerator> make_curand_philox(std::uint64_t seed);
std::unique_ptr<DeviceGenerator> make_curand_mtgp32(std::uint64_t seed);
std::unique_ptr<DeviceGenerator> make_curand_mt19937(std::uint64_t seed);
std::unique_ptr<DeviceGenerator> make_curand_xorwow(std::uint64_t seed);

}  // namespace gpukit::rng::cuda_detail
