// The chunked host path of Black-Scholes: the book's columns stream through the finance books'
// pinned pipeline (book_host_pipeline.hpp) to the chosen kernel variant and back.

#include "finance/cuda/black_scholes_host_pipeline.hpp"

#include <array>
#include <vector>

#include "finance/cuda/book_host_pipeline.hpp"

namespace gpukit::finance {

namespace {

constexpr std::int64_t kDefaultChunkOptions = std::int64_t{1} << 22;

}  // namespace

template <class Real>
void price_black_scholes_through_device(const Context& context, const BlackScholesInputs<Real>& in,
                                        const BlackScholesOutputs<Real>& out,
                                        const BlackScholesOptions& options) {
  // The arrays that travel, in a fixed order; scalar parameters and a book-wide side travel inside
  // the views. The sides, a byte per option, travel last.
  std::vector<detail::BookInputColumn> inputs = {
      {in.spot, sizeof(Real)}, {in.strike, sizeof(Real)}, {in.maturity, sizeof(Real)}};
  for (const PerOption<Real>* p : {&in.rate, &in.volatility, &in.dividend})
    if (p->values != nullptr) inputs.push_back({p->values, sizeof(Real)});
  if (in.is_put.values != nullptr) inputs.push_back({in.is_put.values, 1});
  const std::array<Real * BlackScholesOutputs<Real>::*, 6> output_members = {
      &BlackScholesOutputs<Real>::price, &BlackScholesOutputs<Real>::delta,
      &BlackScholesOutputs<Real>::gamma, &BlackScholesOutputs<Real>::vega,
      &BlackScholesOutputs<Real>::theta, &BlackScholesOutputs<Real>::rho};
  std::vector<Real * BlackScholesOutputs<Real>::*> members;
  std::vector<detail::BookOutputColumn> outputs;
  for (auto member : output_members) {
    if (out.*member != nullptr) {
      members.push_back(member);
      outputs.push_back({out.*member, sizeof(Real)});
    }
  }
  detail::stream_book_through_device(
      context, in.count, options.chunk_options > 0 ? options.chunk_options : kDefaultChunkOptions,
      inputs, outputs, [&](const detail::BookDeviceChunk& chunk) {
        BlackScholesInputs<Real> d_in = in;
        d_in.count = chunk.rows;
        std::size_t a = 0;
        const auto next = [&] { return static_cast<const Real*>(chunk.inputs[a++]); };
        d_in.spot = next();
        d_in.strike = next();
        d_in.maturity = next();
        for (PerOption<Real>* p : {&d_in.rate, &d_in.volatility, &d_in.dividend})
          if (p->values != nullptr) p->values = next();
        if (in.is_put.values != nullptr)
          d_in.is_put.values = static_cast<const std::uint8_t*>(chunk.inputs[a++]);
        BlackScholesOutputs<Real> d_out{};
        for (std::size_t o = 0; o < members.size(); ++o)
          d_out.*members[o] = static_cast<Real*>(chunk.outputs[o]);
        price_black_scholes_on_device(d_in, d_out, chunk.stream, options);
      });
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
