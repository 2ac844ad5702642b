// gpukit's OpenMP wait policy for the CLI (README "Threads"): threads waiting for work sleep
// instead of spinning, unless the user set OMP_WAIT_POLICY or GOMP_SPINCOUNT.
//
// Why getenv: libgomp reads its variables once, in its constructor, before main runs, so a setenv
// in main comes too late; starting the program again with the variable set would cost a second
// start-up (0.1 s of CPU on the CI machine: relocating the CUDA libraries takes 27,000 page
// faults). An executable's definition of a symbol comes first in the dynamic linker's lookup, so
// the shared libraries' getenv, libgomp's included, is this one: it answers from the environment,
// with gpukit's default where the user chose nothing. tests/cli/threads_cli_test.cpp checks what
// libgomp took.

#include <cstdlib>

#include "gpukit/core/cpu_threads.hpp"

extern "C" char* getenv(const char* name) noexcept {
  return const_cast<char*>(gpukit::environment_value_with_gpukit_defaults(name));
}
