// The chunked host path: a book of any size runs on the chunked host pipeline the primitives' host
// paths share (core/chunked_host_pipeline.hpp): it streams through two pinned staging slots, so
// that while chunk k is packed on the CPU (with chunk k-2's results unpacked in the same pass),
// chunk k-1 is copied in, priced and copied out on its own stream, and the two copy directions
// overlap. Throughput is then bounded by PCIe (or by the CPU copies between the caller's arrays and
// pinned memory, which run on the context's threads), not by device memory size. Each device has
// its own staging area, so the workers of a multi-GPU call (gpukit/scale_out: one lane each, with
// its own OpenMP team) stream side by side, each through its own pinned buffers and PCIe link.

#include "finance/cuda/black_scholes_host_pipeline.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/chunked_host_pipeline.hpp"
#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::finance {

namespace {

constexpr std::int64_t kDefaultChunkOptions = std::int64_t{1} << 22;

template <class Real>
Real* staged(cuda::PinnedBuffer<unsigned char>& buffer) {
  return reinterpret_cast<Real*>(buffer.data());
}

template <class Real>
Real* staged(cuda::DeviceBuffer<unsigned char>& buffer) {
  return reinterpret_cast<Real*>(buffer.data());
}

}  // namespace

template <class Real>
void price_black_scholes_through_device(const Context& context, const BlackScholesInputs<Real>& in,
                                        const BlackScholesOutputs<Real>& out,
                                        const BlackScholesOptions& options) {
  if (in.count == 0) return;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();

  // The arrays that travel, in a fixed order, straight from the caller's arrays into pinned
  // memory (no copy of the book is made first); scalar parameters and a book-wide side travel
  // inside the views. The sides, a byte per option, travel after the arrays of Real.
  std::vector<const Real*> inputs = {in.spot, in.strike, in.maturity};
  for (const PerOption<Real>* p : {&in.rate, &in.volatility, &in.dividend})
    if (p->values != nullptr) inputs.push_back(p->values);
  const std::uint8_t* sides = in.is_put.values;
  std::array<Real * BlackScholesOutputs<Real>::*, 6> output_members = {
      &BlackScholesOutputs<Real>::price, &BlackScholesOutputs<Real>::delta,
      &BlackScholesOutputs<Real>::gamma, &BlackScholesOutputs<Real>::vega,
      &BlackScholesOutputs<Real>::theta, &BlackScholesOutputs<Real>::rho};
  std::vector<Real * BlackScholesOutputs<Real>::*> outputs;
  for (auto member : output_members)
    if (out.*member != nullptr) outputs.push_back(member);

  const gpukit::detail::ChunkPlan plan(
      in.count, options.chunk_options > 0 ? options.chunk_options : kDefaultChunkOptions);
  const std::int64_t chunk = plan.chunk_size();
  // Each array's region starts on a 256-byte boundary so the vector kernels stay vectorized.
  const std::int64_t stride = (chunk + 63) / 64 * 64;
  const std::size_t real_input_bytes = inputs.size() * stride * sizeof(Real);
  const std::size_t side_bytes = sides != nullptr ? static_cast<std::size_t>(stride) : 0;

  const auto lock = gpukit::detail::lock_staging_area(context.cuda_device);
  gpukit::detail::StagingArea& area = gpukit::detail::staging_area(
      context.cuda_device, real_input_bytes + side_bytes, outputs.size() * stride * sizeof(Real));
  using gpukit::detail::HostChunk;
  using gpukit::detail::StagingSlot;

  // The host's copies of a chunk are one parallel pass: the results of chunk k-2 out of the slot's
  // pinned memory (queued by `finish` once its stream is done) and chunk k's inputs into it, just
  // before chunk k's copies and kernel are queued on that stream (so its results cannot land
  // before the old ones are read). One region a chunk instead of one an array, and the team
  // shares out every array's blocks.
  std::vector<gpukit::detail::CopyRange> copies;
  auto copy_now = [&] {
    gpukit::detail::parallel_copy_ranges(copies, threads);
    copies.clear();
  };

  auto finish = [&](StagingSlot& slot, const HostChunk& c) {
    for (std::size_t a = 0; a < outputs.size(); ++a) {
      copies.push_back({out.*outputs[a] + c.begin, staged<Real>(slot.pinned_out) + a * stride,
                        static_cast<std::size_t>(c.size) * sizeof(Real)});
    }
  };

  auto start = [&](StagingSlot& slot, const HostChunk& c) {
    Real* pinned_in = staged<Real>(slot.pinned_in);
    Real* device_in = staged<Real>(slot.device_in);
    Real* device_out = staged<Real>(slot.device_out);
    const std::size_t bytes = static_cast<std::size_t>(c.size) * sizeof(Real);
    for (std::size_t a = 0; a < inputs.size(); ++a) {
      copies.push_back({pinned_in + a * stride, inputs[a] + c.begin, bytes});
    }
    if (sides != nullptr) {
      copies.push_back({slot.pinned_in.data() + real_input_bytes, sides + c.begin,
                        static_cast<std::size_t>(c.size)});
    }
    copy_now();
    cuda::copy_to_device_async(device_in, pinned_in, real_input_bytes + side_bytes,
                               slot.stream.handle());
    BlackScholesInputs<Real> d_in = in;
    d_in.count = c.size;
    std::size_t a = 0;
    d_in.spot = device_in + (a++) * stride;
    d_in.strike = device_in + (a++) * stride;
    d_in.maturity = device_in + (a++) * stride;
    for (PerOption<Real>* p : {&d_in.rate, &d_in.volatility, &d_in.dividend})
      if (p->values != nullptr) p->values = device_in + (a++) * stride;
    if (sides != nullptr) d_in.is_put.values = slot.device_in.data() + real_input_bytes;
    BlackScholesOutputs<Real> d_out{};
    for (std::size_t o = 0; o < outputs.size(); ++o) d_out.*outputs[o] = device_out + o * stride;
    price_black_scholes_on_device(d_in, d_out, slot.stream.handle(), options);
    cuda::copy_to_host_async(slot.pinned_out.data(), device_out,
                             outputs.size() * stride * sizeof(Real), slot.stream.handle());
  };

  gpukit::detail::run_chunked_host_pipeline(plan, area.slots, start, finish);
  copy_now();  // the last two chunks' results
}

template void price_black_scholes_through_device<float>(const Context&,
                                                        const BlackScholesInputs<float>&,
                                                        const BlackScholesOutputs<float>&,
                                                        const BlackScholesOptions&);
template void price_black_scholes_through_device<double>(const Context&,
                                                         const BlackScholesInputs<double>&,
                                                         const BlackScholesOutputs<double>&,
                                                         const BlackScholesOptions&);

}  // namespace gpukit::finance
