#include "gpukit/core/cpu_threads.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace gpukit {

int cpu_threads_for(CpuWork work, int threads) {
  const std::int64_t pieces = work.pieces > 0 ? work.pieces : work.items;
  const int team = static_cast<int>(
      std::min<std::int64_t>(threads > 0 ? threads : omp_get_max_threads(), pieces));
  const double shares = work.nanoseconds() / kMinimumNanosecondsPerThread;
  if (team < 2 || !(shares >= 2)) return 1;  // also for a NaN
  return shares >= team ? team : static_cast<int>(shares);
}

namespace {

// The value of `name` in `environ`, as glibc's getenv finds it (the first "name=" entry).
const char* environment_value(const char* name) noexcept {
  const std::size_t length = std::strlen(name);
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    if (std::strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') {
      return *entry + length + 1;
    }
  }
  return nullptr;
}

}  // namespace

const char* environment_value_with_gpukit_defaults(const char* name) noexcept {
  const char* value = environment_value(name);
  if (value != nullptr || std::strcmp(name, "OMP_WAIT_POLICY") != 0) return value;
  return environment_value("GOMP_SPINCOUNT") == nullptr ? "passive" : nullptr;
}

}  // namespace gpukit
