// Random numbers: the flat Philox streams of rng/generate.hpp (what `gpukit bench rng` measures as
// gpukit's generators) into arrays in host memory or on a CUDA device.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <string_view>

#include <fmt/format.h>

#include "arrays.hpp"
#include "gpukit/rng/generate.hpp"

namespace gpukit::python {

namespace {

rng::NormalTransform parse_transform(std::string_view name) {
  if (name == "box_muller" || name == "box-muller") return rng::NormalTransform::box_muller;
  if (name == "inverse_cdf" || name == "inverse-cdf") return rng::NormalTransform::inverse_cdf;
  throw InvalidInput(fmt::format("transform must be box_muller or inverse_cdf, got '{}'", name));
}

void generate(std::string_view distribution, const OutArray& out, std::uint64_t seed,
              std::uint64_t offset, std::string_view transform, std::string_view device,
              std::uintptr_t stream) {
  const Placement where = place_call(device, {{"out", place_of(out, "out")}}, stream);
  const auto count = static_cast<std::int64_t>(out.size());
  if (distribution == "bits") {
    require_dtype<std::uint32_t>(out, "random.bits", "out", "uint32");
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    if (where.device_data) {
      rng::generate_bits_on_device(data_of<std::uint32_t>(out), count, seed, offset, where.stream);
    } else {
      rng::generate_bits(where.context, span_of<std::uint32_t>(out), seed, offset);
    }
    return;
  }
  const bool normal = distribution == "normal";
  if (!normal && distribution != "uniform") {
    throw InvalidInput(fmt::format("unknown distribution '{}'", distribution));
  }
  const rng::NormalTransform normal_transform = parse_transform(transform);
  with_real_type(out.dtype(), normal ? "random.normal" : "random.uniform", [&](auto element) {
    using Real = decltype(element);
    nb::gil_scoped_release released;
    const DeviceGuard guard(where.context);
    Real* data = data_of<Real>(out);
    if (where.device_data && normal) {
      rng::generate_normal_on_device<Real>(data, count, seed, offset, normal_transform,
                                           where.stream);
    } else if (where.device_data) {
      rng::generate_uniform_on_device<Real>(data, count, seed, offset, where.stream);
    } else if (normal) {
      rng::generate_normal<Real>(where.context, span_of<Real>(out), seed, offset, normal_transform);
    } else {
      rng::generate_uniform<Real>(where.context, span_of<Real>(out), seed, offset);
    }
  });
}

}  // namespace

void bind_rng(nb::module_& m) {
  m.def("generate", &generate, nb::arg("distribution"), nb::arg("out"), nb::arg("seed"),
        nb::arg("offset"), nb::arg("transform"), nb::arg("device"), nb::arg("stream"),
        "rng::generate_uniform / generate_normal / generate_bits (host out) or their "
        "*_on_device twins (CUDA out, queued on `stream`): elements offset, offset + 1, ... of "
        "the flat Philox4x32-10 stream of `seed` ('uniform', 'normal' or 'bits').");
}

}  // namespace gpukit::python
