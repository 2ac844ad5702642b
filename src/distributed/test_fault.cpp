// GPUKIT_TEST_FAULT's scale-out hooks (test_fault.hpp).

#include "gpukit/distributed/test_fault.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace gpukit::distributed {

namespace {

// Whether GPUKIT_TEST_FAULT is `prefix` followed by this rank's number.
bool planted_here(std::string_view prefix, const Communicator& comm) {
  const char* fault = std::getenv("GPUKIT_TEST_FAULT");
  if (fault == nullptr || !std::string_view(fault).starts_with(prefix)) return false;
  return std::string_view(fault).substr(prefix.size()) == std::to_string(comm.rank());
}

}  // namespace

void inject_rank_fault(const Communicator& comm) {
  if (!planted_here("rank-out-of-memory:", comm)) return;
  throw OutOfMemory(
      fmt::format("cudaMalloc (a fault planted on rank {} by GPUKIT_TEST_FAULT)", comm.rank()),
      std::size_t{1} << 30);
}

void inject_lone_failure(const Communicator& comm) {
  if (!planted_here("rank-fails-alone:", comm)) return;
  throw IoError(
      fmt::format("a failure planted on rank {} alone by GPUKIT_TEST_FAULT", comm.rank()));
}

}  // namespace gpukit::distributed
