// The chunked host path: a book of any size streams through two pinned staging slots, so that
// while chunk k is packed on the CPU, chunk k-1 is copied in, priced and copied out on its own
// stream, and the two copy directions overlap. Throughput is then bounded by PCIe (or by the CPU
// copies into pinned memory, which run on all threads), not by device memory size.

#include "finance/black_scholes_host_pipeline.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include "core/parallel_copy.hpp"
#include "core/staging_area.hpp"
#include "gpukit/core/memory.hpp"
#include "gpukit/core/stream.hpp"

namespace gpukit::finance {

namespace {

constexpr std::int64_t kDefaultChunkOptions = std::int64_t{1} << 22;

template <class Real>
struct Slot {
  gpukit::detail::StagingSlot& staging;
  std::int64_t chunk_begin = -1;  // the chunk in flight in this slot, -1 when idle
  std::int64_t chunk_size = 0;
  Real* pinned_in() const { return reinterpret_cast<Real*>(staging.pinned_in.data()); }
  Real* pinned_out() const { return reinterpret_cast<Real*>(staging.pinned_out.data()); }
  Real* device_in() const { return reinterpret_cast<Real*>(staging.device_in.data()); }
  Real* device_out() const { return reinterpret_cast<Real*>(staging.device_out.data()); }
};

}  // namespace

template <class Real>
void price_black_scholes_through_device(const Context& context, const BlackScholesInputs<Real>& in,
                                        const BlackScholesOutputs<Real>& out,
                                        const BlackScholesOptions& options) {
  if (in.count == 0) return;
  cuda::set_device(context.cuda_device);
  const int threads = context.effective_cpu_threads();

  // The arrays that travel, in a fixed order; scalar parameters travel inside the views.
  std::vector<const Real*> inputs = {in.spot, in.strike, in.maturity};
  for (const PerOption<Real>* p : {&in.rate, &in.volatility, &in.dividend})
    if (p->values != nullptr) inputs.push_back(p->values);
  std::array<Real * BlackScholesOutputs<Real>::*, 10> output_members = {
      &BlackScholesOutputs<Real>::call,       &BlackScholesOutputs<Real>::put,
      &BlackScholesOutputs<Real>::call_delta, &BlackScholesOutputs<Real>::put_delta,
      &BlackScholesOutputs<Real>::gamma,      &BlackScholesOutputs<Real>::vega,
      &BlackScholesOutputs<Real>::call_theta, &BlackScholesOutputs<Real>::put_theta,
      &BlackScholesOutputs<Real>::call_rho,   &BlackScholesOutputs<Real>::put_rho};
  std::vector<Real * BlackScholesOutputs<Real>::*> outputs;
  for (auto member : output_members)
    if (out.*member != nullptr) outputs.push_back(member);

  const std::int64_t chunk =
      std::min(options.chunk_options > 0 ? options.chunk_options : kDefaultChunkOptions, in.count);
  // Each array's region starts on a 256-byte boundary so the vector kernels stay vectorized.
  const std::int64_t stride = (chunk + 63) / 64 * 64;

  const auto lock = gpukit::detail::lock_staging_area();
  gpukit::detail::StagingArea& area =
      gpukit::detail::staging_area(context.cuda_device, inputs.size() * stride * sizeof(Real),
                                   outputs.size() * stride * sizeof(Real));
  std::array<Slot<Real>, 2> slots = {Slot<Real>{area.slots[0]}, Slot<Real>{area.slots[1]}};

  auto finish = [&](Slot<Real>& s) {
    if (s.chunk_begin < 0) return;
    s.staging.stream.synchronize();
    for (std::size_t a = 0; a < outputs.size(); ++a) {
      gpukit::detail::parallel_copy(out.*outputs[a] + s.chunk_begin, s.pinned_out() + a * stride,
                                    static_cast<std::size_t>(s.chunk_size) * sizeof(Real), threads);
    }
    s.chunk_begin = -1;
  };

  auto start = [&](Slot<Real>& s, std::int64_t begin, std::int64_t size) {
    const std::size_t bytes = static_cast<std::size_t>(size) * sizeof(Real);
    for (std::size_t a = 0; a < inputs.size(); ++a) {
      gpukit::detail::parallel_copy(s.pinned_in() + a * stride, inputs[a] + begin, bytes, threads);
    }
    cuda::copy_to_device_async(s.device_in(), s.pinned_in(), inputs.size() * stride * sizeof(Real),
                               s.staging.stream.handle());
    BlackScholesInputs<Real> d_in = in;
    d_in.count = size;
    std::size_t a = 0;
    d_in.spot = s.device_in() + (a++) * stride;
    d_in.strike = s.device_in() + (a++) * stride;
    d_in.maturity = s.device_in() + (a++) * stride;
    for (PerOption<Real>* p : {&d_in.rate, &d_in.volatility, &d_in.dividend})
      if (p->values != nullptr) p->values = s.device_in() + (a++) * stride;
    BlackScholesOutputs<Real> d_out{};
    for (std::size_t o = 0; o < outputs.size(); ++o)
      d_out.*outputs[o] = s.device_out() + o * stride;
    price_black_scholes_on_device(d_in, d_out, s.staging.stream.handle(), options);
    cuda::copy_to_host_async(s.pinned_out(), s.device_out(), outputs.size() * stride * sizeof(Real),
                             s.staging.stream.handle());
    s.chunk_begin = begin;
    s.chunk_size = size;
  };

  std::int64_t k = 0;
  for (std::int64_t begin = 0; begin < in.count; begin += chunk, ++k) {
    Slot<Real>& s = slots[static_cast<std::size_t>(k % 2)];
    finish(s);  // chunk k-2 used this slot
    start(s, begin, std::min(chunk, in.count - begin));
  }
  finish(slots[static_cast<std::size_t>(k % 2)]);
  finish(slots[static_cast<std::size_t>((k + 1) % 2)]);
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
