#pragma once
// Internal: reproducible benchmark data generated in parallel: element i is a function of i alone
// (splitmix64's finalizer), so 2^30 elements take a fraction of a second on all cores.

#include <cstdint>

namespace gpukit::bench {

inline std::uint64_t hash_index(std::uint64_t i) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace gpukit::bench
