#include "gpukit/distributed/devices.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "gpukit/core/device.hpp"
#include "gpukit/core/error.hpp"

namespace gpukit::distributed {

namespace {

int parse_ordinal(std::string_view digits, std::string_view spec) {
  int ordinal = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), ordinal);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || ordinal < 0 ||
      ordinal > 65535) {
    throw InvalidInput(fmt::format(
        "'{}' is not a GPU list (cuda:N, cuda:all or cuda:N,M,... with N a CUDA ordinal)", spec));
  }
  return ordinal;
}

std::string device_range(int count) {
  if (count == 1) return "cuda:0";
  return fmt::format("cuda:0 to cuda:{}", count - 1);
}

}  // namespace

DeviceSpec parse_device_spec(std::string_view spec) {
  DeviceSpec d;
  if (spec == "auto") return d;
  if (spec == "cpu") return d.kind = DeviceSpec::Kind::cpu, d;
  if (spec == "cuda") return d.kind = DeviceSpec::Kind::cuda_one_per_rank, d;
  if (!spec.starts_with("cuda:")) {
    throw InvalidInput(
        fmt::format("must be auto, cpu, cuda, cuda:N, cuda:all or cuda:N,M,..., got '{}'", spec));
  }
  const std::string_view list = spec.substr(5);
  if (list == "all") return d.kind = DeviceSpec::Kind::cuda_all, d;
  d.kind = DeviceSpec::Kind::cuda_list;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = list.find(',', start);
    d.ordinals.push_back(parse_ordinal(list.substr(start, comma - start), spec));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return d;
}

bool Workers::any_cuda() const noexcept {
  for (const Context& c : contexts)
    if (c.backend == Backend::cuda) return true;
  return false;
}

bool Workers::any_cpu() const noexcept {
  for (const Context& c : contexts)
    if (c.backend == Backend::cpu) return true;
  return false;
}

std::string Workers::describe() const {
  std::string text;
  for (const Context& c : contexts) text += (text.empty() ? "" : ", ") + c.describe();
  return text;
}

namespace {

// --threads 0 on a host shared by several workers (the GPUs of a list, the ranks of a host): the
// cores shared out evenly among them, so that their host work (packing pinned chunks, FFTW's
// threads on a CPU rank) does not oversubscribe the host.
void share_cores(Workers& w, int threads, int local_size) {
  const int workers_on_host = local_size * static_cast<int>(w.contexts.size());
  if (threads > 0 || workers_on_host <= 1) return;
  const int share = std::max(1, Context::cpu().effective_cpu_threads() / workers_on_host);
  for (Context& c : w.contexts) c.cpu_threads = share;
}

Workers select_contexts(const DeviceSpec& d, std::string_view spec, int threads, int local_rank,
                        int local_size) {
  Workers w;
  const bool alone = local_size == 1;
  if (d.kind == DeviceSpec::Kind::cpu) {
    w.contexts.push_back(Context::cpu(threads));
    return w;
  }
  const int count = cuda_device_count();
  if (d.kind == DeviceSpec::Kind::automatic) {
    if (alone) {
      const DeviceSelection s = select_device("auto", threads);
      w.contexts.push_back(s.context);
      w.notice = s.notice;
      return w;
    }
    if (count == 0) {
      w.contexts.push_back(Context::cpu(threads));
      w.notice = fmt::format("gpukit: {}; using the CPU", cuda_unavailable_reason());
      return w;
    }
    w.contexts.push_back(Context::cuda(local_rank % count, threads));
    return w;
  }
  if (count == 0) {
    throw DeviceUnavailable(fmt::format("--device {}: {}", spec, cuda_unavailable_reason()));
  }
  if (d.kind == DeviceSpec::Kind::cuda_one_per_rank) {
    w.contexts.push_back(Context::cuda(alone ? 0 : local_rank % count, threads));
    return w;
  }
  std::vector<int> listed = d.ordinals;
  if (d.kind == DeviceSpec::Kind::cuda_all) {
    for (int i = 0; i < count; ++i) listed.push_back(i);
  }
  for (const int ordinal : listed) {
    if (ordinal >= count) {
      throw DeviceUnavailable(
          fmt::format("--device {}: cuda:{} does not exist: {} CUDA device{} "
                      "found ({})",
                      spec, ordinal, count, count == 1 ? "" : "s", device_range(count)));
    }
  }
  for (const int ordinal : local_share(listed, local_rank, local_size)) {
    w.contexts.push_back(Context::cuda(ordinal, threads));
  }
  return w;
}

}  // namespace

Workers select_workers(std::string_view spec, int threads, int local_rank, int local_size) {
  DeviceSpec d;
  try {
    d = parse_device_spec(spec);
  } catch (const InvalidInput& e) {
    throw InvalidInput(std::string("device: ") + e.what());
  }
  if (threads < 0) throw InvalidInput(fmt::format("--threads must be >= 0, got {}", threads));
  if (local_size < 1 || local_rank < 0 || local_rank >= local_size) {
    throw InvalidInput(fmt::format("local rank {} of {}", local_rank, local_size));
  }
  Workers w = select_contexts(d, spec, threads, local_rank, local_size);
  share_cores(w, threads, local_size);
  return w;
}

std::vector<int> local_share(const std::vector<int>& listed, int local_rank, int local_size) {
  const auto n = static_cast<int>(listed.size());
  if (n == 0 || local_size < 1 || local_rank < 0 || local_rank >= local_size) {
    throw InvalidInput(
        fmt::format("local share: {} devices, local rank {} of {}", n, local_rank, local_size));
  }
  if (local_size > n) return {listed[static_cast<std::size_t>(local_rank % n)]};
  // Contiguous shares: GPUs next to each other (often on one CPU socket) go to one rank.
  const auto begin = listed.begin() + local_rank * n / local_size;
  const auto end = listed.begin() + (local_rank + 1) * n / local_size;
  return {begin, end};
}

}  // namespace gpukit::distributed
