// libFuzzer target for parse_npy: arbitrary bytes must either give an array or throw a
// gpukit::Error; anything else (another exception, a crash, a sanitizer report) is a finding.
// An array that was read must also be consistent (byte count = element count * element size) and
// survive a round trip: detail::npy_header_bytes + its data must parse back to the same dtype,
// shape and bytes, which checks the writer's header against the parser on every shape the fuzzer
// invents (Fortran-order inputs come back in C order, so the round trip also checks that the
// transpose produced a complete C-order array).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "gpukit/core/error.hpp"
#include "gpukit/io/npy.hpp"

namespace {

[[noreturn]] void report_finding(const char* what) {
  std::fprintf(stderr, "npy_fuzz: %s\n", what);
  __builtin_trap();
}

void check_round_trip(const gpukit::io::NpyArray& array) {
  std::string file = gpukit::io::detail::npy_header_bytes(array.dtype, array.shape);
  if (file.size() % 64 != 0) report_finding("the written header does not end at a multiple of 64");
  file.append(reinterpret_cast<const char*>(array.bytes()), array.byte_size());
  gpukit::io::NpyArray again;
  try {
    again = gpukit::io::parse_npy(std::as_bytes(std::span(file)), "written.npy");
  } catch (const gpukit::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    report_finding("the written array does not read back");
  }
  if (again.dtype != array.dtype || again.shape != array.shape ||
      again.byte_size() != array.byte_size() ||
      std::memcmp(again.bytes(), array.bytes(), array.byte_size()) != 0) {
    report_finding("the written array reads back different");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpukit::io::NpyArray array;
  try {
    array = gpukit::io::parse_npy(std::span(reinterpret_cast<const std::byte*>(data), size),
                                  "fuzz.npy");
  } catch (const gpukit::Error&) {
    return 0;  // rejecting bad input with a gpukit error is the expected outcome
  }
  if (array.size() < 0 ||
      static_cast<std::size_t>(array.size()) * gpukit::io::dtype_size(array.dtype) !=
          array.byte_size()) {
    report_finding("byte_size() is not size() * dtype_size()");
  }
  if (array.byte_size() > size) report_finding("more element bytes than input bytes");
  if (reinterpret_cast<std::uintptr_t>(array.bytes()) % 64 != 0) {
    report_finding("storage not 64-byte aligned");
  }
  check_round_trip(array);
  return 0;
}
