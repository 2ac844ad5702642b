#include "gpukit/core/cpu_threads.hpp"

#include <omp.h>

#include <algorithm>

namespace gpukit {

int cpu_threads_for(CpuWork work, int threads) {
  const std::int64_t pieces = work.pieces > 0 ? work.pieces : work.items;
  const int team = static_cast<int>(
      std::min<std::int64_t>(threads > 0 ? threads : omp_get_max_threads(), pieces));
  const double shares = work.nanoseconds() / kMinimumNanosecondsPerThread;
  if (team < 2 || !(shares >= 2)) return 1;  // also for a NaN
  return shares >= team ? team : static_cast<int>(shares);
}

}  // namespace gpukit
