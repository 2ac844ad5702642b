#pragma once
// How many OpenMP threads a piece of CPU work gets: the one rule every CPU backend's parallel
// region follows, so that a small call runs on the calling thread alone instead of paying for a
// parallel region (waking the team and joining it costs tens of microseconds, and on a busy machine
// milliseconds: a woken thread waits for a core), while large work keeps every thread asked for.

#include <cstdint>

namespace gpukit {

/// A CPU loop's size for the thread rule: `items` items of about `ns_per_item` nanoseconds each on
/// one core. Each loop keeps its per-item figure beside it, measured on one thread
/// (`gpukit_tune_cpu_threads costs`, bench/tuning/cpu_threads.cpp); it needs to be right only to
/// within a factor of a few. `pieces`: the loop's independent iterations where they are coarser
/// than the items (tiles, blocks, rows), since a thread without one idles; 0: one per item.
struct CpuWork {
  std::int64_t items = 0;
  double ns_per_item = 1;
  std::int64_t pieces = 0;

  double nanoseconds() const { return static_cast<double>(items) * ns_per_item; }
};

/// The least one-core work, in nanoseconds, that each thread of a parallel region must get. A
/// parallel region costs the time to wake its team and join it: measured with passive waiting
/// (the CLI's and the Python module's policy, README "Threads") on the 2-core CI machine, 13-14 us
/// for 2 threads at idle and 12-18 us at load 3-12 (medians of 1000-3000 regions,
/// gpukit_tune_cpu_threads region; docs/journal/small-calls-notebook.md). With 50 us a thread, a
/// region costs less than half of what its second thread saves, so splitting never loses at that
/// cost; below it, the calling thread does the work alone.
inline constexpr double kMinimumNanosecondsPerThread = 50'000;

/// The threads for `work`: one per kMinimumNanosecondsPerThread of work, at least 1 and at most
/// `threads` (0 or less: the OpenMP default, omp_get_max_threads()) and the work's pieces. So work
/// below twice the minimum runs on one thread, and work of at least `threads` times the minimum
/// (in as many pieces) on all of them.
/// Depends only on its arguments (and the OpenMP default), never on load or timing, so a result
/// that depends on the thread count (FFTW's, for the Poisson solver) stays reproducible; results
/// the library computes independently of the thread count keep their bits. Tested in
/// tests/core/cpu_threads_test.cpp (the rule) and tests/core/small_calls_test.cpp (small calls of
/// every CPU backend run on one thread).
int cpu_threads_for(CpuWork work, int threads);

/// The value of the environment variable `name` as gpukit's front doors read it: the environment's
/// own, except that OMP_WAIT_POLICY reads as "passive" when neither it nor GOMP_SPINCOUNT is set.
/// Passive waiting: a thread waiting for work sleeps instead of spinning. libgomp's default spins
/// for a few milliseconds after every parallel region, which on a shared machine takes cores from
/// everyone, gpukit's own threads included (issue 30: at load 5-6, an 8x8 Poisson solve took 96 ms
/// with it, 0.02 ms with passive waiting or one thread). A user's own choice of either variable
/// stands (GOMP_SPINCOUNT alone leaves OMP_WAIT_POLICY unset, so that its spin count holds).
/// libgomp reads the variables once, when it is loaded, before main: the CLI defines getenv with
/// this function (apps/gpukit/openmp_defaults.cpp), and python/gpukit/__init__.py sets the
/// variable by the same rule before its compiled module loads. Reads `environ` directly (never
/// getenv, which may be this function) and needs no static initialization, so it may run before
/// main. nullptr when the variable is not set.
const char* environment_value_with_gpukit_defaults(const char* name) noexcept;

}  // namespace gpukit
