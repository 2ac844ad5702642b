// Sobol points: the direction numbers expanded from Joe and Kuo's table, and generate_sobol's
// checks and dispatch to the CPU loop or the CUDA kernel (cuda/sobol_kernels.cu).

#include "gpukit/rng/sobol.hpp"

#include <string>

#include <fmt/format.h>

#include "gpukit/core/error.hpp"
#include "rng/sobol_direction_numbers.hpp"
#include "rng/sobol_fill.hpp"

#if GPUKIT_HAVE_CUDA
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"
#endif

namespace gpukit::rng {

std::vector<std::uint32_t> sobol_direction_numbers(int dimensions) {
  if (dimensions < 0 || dimensions > kSobolMaxDimensions) {
    throw InvalidInput(fmt::format("sobol: dimensions must be in [0, {}], got {}",
                                   kSobolMaxDimensions, dimensions));
  }
  std::vector<std::uint32_t> v(32 * static_cast<std::size_t>(dimensions));
  std::size_t initial = 0;  // the first m of dimension d in kSobolInitialNumbers
  for (int d = 0; d < dimensions; ++d) {
    std::uint32_t* out = v.data() + 32 * static_cast<std::size_t>(d);
    const int s = detail::kSobolDegree[d];
    if (s == 0) {  // van der Corput: every m_k = 1
      for (int k = 1; k <= 32; ++k) out[k - 1] = std::uint32_t{1} << (32 - k);
      continue;
    }
    const std::uint32_t a = detail::kSobolCoefficients[d];
    for (int k = 1; k <= s && k <= 32; ++k) {
      out[k - 1] = detail::kSobolInitialNumbers[initial + static_cast<std::size_t>(k - 1)]
                   << (32 - k);
    }
    // v_k = v_{k-s} ^ (v_{k-s} >> s) ^ (XOR of a_j v_{k-j}, j = 1 .. s-1), a_1 a's highest bit.
    for (int k = s + 1; k <= 32; ++k) {
      std::uint32_t value = out[k - s - 1] ^ (out[k - s - 1] >> s);
      for (int j = 1; j < s; ++j) {
        if ((a >> (s - 1 - j)) & 1u) value ^= out[k - j - 1];
      }
      out[k - 1] = value;
    }
    initial += static_cast<std::size_t>(s);
  }
  return v;
}

void generate_sobol(const Context& context, std::span<std::uint32_t> out, const SobolSpec& spec) {
  if (spec.dimensions < 1 || spec.dimensions > kSobolMaxDimensions) {
    throw InvalidInput(fmt::format("generate_sobol: dimensions must be in [1, {}], got {}",
                                   kSobolMaxDimensions, spec.dimensions));
  }
  const auto dimensions = static_cast<std::size_t>(spec.dimensions);
  if (out.size() % dimensions != 0) {
    throw InvalidInput(fmt::format(
        "generate_sobol: the output's {} elements are not whole points of {} dimensions",
        out.size(), spec.dimensions));
  }
  const std::uint64_t points = out.size() / dimensions;
  if (points > (std::uint64_t{1} << 32) - spec.first_point) {
    throw InvalidInput("generate_sobol: the points pass the end of the sequence (2^32 points)");
  }
  if (out.empty()) return;
  const std::vector<std::uint32_t> directions = sobol_direction_numbers(spec.dimensions);
  const detail::SobolFill fill{spec.dimensions, spec.first_point, spec.scrambled,
                               sobol_replicate_key(spec.seed, spec.stream_key, spec.replicate)};
  const auto count = static_cast<std::int64_t>(out.size());
  if (context.backend == Backend::cuda) {
#if GPUKIT_HAVE_CUDA
    cuda::set_device(context.cuda_device);
    cuda::DeviceBuffer<std::uint32_t> device_directions(directions.size());
    device_directions.copy_from_host(directions);
    cuda::DeviceBuffer<std::uint32_t> device_out(out.size());
    cuda::Stream stream;
    detail::launch_sobol_fill(device_directions.data(), fill, device_out.data(), count,
                              stream.handle());
    stream.synchronize();
    device_out.copy_to_host(out);
    return;
#else
    throw DeviceUnavailable("generate_sobol: this gpukit was built without CUDA");
#endif
  }
  const int threads = context.effective_cpu_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
  for (std::int64_t element = 0; element < count; ++element) {
    out[static_cast<std::size_t>(element)] =
        detail::sobol_fill_element(directions.data(), fill, element);
  }
}

}  // namespace gpukit::rng
