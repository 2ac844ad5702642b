// DeviceExchange's names, and its stand-in in a build without CUDA (the engines are in
// cuda/device_exchange.cpp).

#include "gpukit/distributed/device_exchange.hpp"

namespace gpukit::distributed {

std::string_view exchange_engine_name(ExchangeEngine engine) noexcept {
  return engine == ExchangeEngine::nccl ? "nccl" : "peer-copy";
}

#if !GPUKIT_HAVE_CUDA
struct DeviceExchange::Impl {};

DeviceExchange::DeviceExchange(Communicator& comm, ExchangeEngine, std::span<const int>,
                               std::span<const StreamHandle>) {
  agree(comm, [] { throw DeviceUnavailable("this gpukit was built without CUDA"); });
}
DeviceExchange::DeviceExchange(DeviceExchange&&) noexcept = default;
DeviceExchange& DeviceExchange::operator=(DeviceExchange&&) noexcept = default;
DeviceExchange::~DeviceExchange() = default;
ExchangeEngine DeviceExchange::engine() const noexcept { return ExchangeEngine::peer_copy; }
int DeviceExchange::parts() const noexcept { return 0; }
int DeviceExchange::local_parts() const noexcept { return 0; }
int DeviceExchange::first_part() const noexcept { return 0; }
void DeviceExchange::exchange(std::span<const DeviceSend>, std::span<const DeviceReceive>) {}
#endif

}  // namespace gpukit::distributed
