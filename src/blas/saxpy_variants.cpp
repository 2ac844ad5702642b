#include "gpukit/blas/saxpy_variants.hpp"

#include "gpukit/core/error.hpp"
#include "gpukit/core/variant_registry.hpp"

#if GPUKIT_HAVE_CUDA
#include "blas/cuda/saxpy_launchers.hpp"
#endif

namespace gpukit::blas {

namespace {

#if GPUKIT_HAVE_CUDA
using namespace cuda_detail;

// x and y read once, out written once; a multiply and an add an element.
constexpr TrafficModel kSaxpyTraffic{
    .reads_per_element = 2, .writes_per_element = 1, .flops_per_element = 2};

// Ladder order: each row is the previous one plus one idea.
constexpr SaxpyVariant kVariants[] = {
    {.info = {.name = "seed",
              .description =
                  "the lecture's kernel: one element a thread, ceil(n/256) blocks of 256",
              .seed_reference = "003 End-to-End Example: SAXPY",
              .role = VariantRole::step,
              .traffic = kSaxpyTraffic,
              .in_place = true},
     .rounding = AxpyRounding::fused,
     .launchers = SaxpyLaunchers::of([]<class T> { return &launch_axpy_seed<T>; })},
    {.info = {.name = "grid-stride",
              .description = "a grid of the blocks resident at once (SM count), grid-stride loop",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::step,
              .traffic = kSaxpyTraffic,
              .in_place = true},
     .rounding = AxpyRounding::fused,
     .launchers = SaxpyLaunchers::of([]<class T> { return &launch_axpy_grid_stride<T>; })},
    {.info = {.name = "vector16",
              .description = "16-byte loads and stores, head and tail one by one",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::step,
              .traffic = kSaxpyTraffic,
              .in_place = true},
     .rounding = AxpyRounding::fused,
     .launchers = SaxpyLaunchers::of([]<class T> { return &launch_axpy_vector16<T>; })},
    {.info = {.name = "vector16-unrolled",
              .description = "4+4 16-byte loads a thread issued before the stores (default)",
              .seed_reference = "beyond the seeds",
              .role = VariantRole::best,
              .traffic = kSaxpyTraffic,
              .in_place = true},
     .rounding = AxpyRounding::fused,
     .launchers = SaxpyLaunchers::of([]<class T> { return &launch_axpy_vector16_unrolled<T>; })},
    {.info = {.name = "cublas",
              .description = "cuBLAS cublasSaxpy / cublasDaxpy (y in place), the vendor baseline",
              .seed_reference = "vendor",
              .role = VariantRole::vendor,
              .traffic = kSaxpyTraffic,
              .in_place = true},
     // cuBLAS does not document whether its axpy fuses the multiply and the add.
     .rounding = AxpyRounding::fused_or_separate,
     .launchers = SaxpyLaunchers::of([]<class T> { return &launch_axpy_cublas<T>; })},
};
constexpr std::string_view kDefaultVariant = "vector16-unrolled";
#endif

}  // namespace

std::span<const SaxpyVariant> saxpy_variants() {
#if GPUKIT_HAVE_CUDA
  return kVariants;
#else
  return {};
#endif
}

const SaxpyVariant& default_saxpy_variant() {
#if GPUKIT_HAVE_CUDA
  return find_saxpy_variant(kDefaultVariant);
#else
  throw DeviceUnavailable("axpy CUDA variants: this gpukit was built without CUDA");
#endif
}

const SaxpyVariant& find_saxpy_variant(std::string_view name) {
  return find_variant(saxpy_variants(), name, "saxpy");
}

}  // namespace gpukit::blas
