#pragma once
// The devices a process works on: --device with lists (cuda:all, cuda:0,2,3) for the commands
// that split their work into fixed blocks (mc, bs, reduce), and the rule by which the ranks of an
// MPI job on one host share that host's GPUs.

#include <string>
#include <string_view>
#include <vector>

#include "gpukit/core/context.hpp"

namespace gpukit::distributed {

/// What a --device value asks for, checked for syntax only (no device is queried).
struct DeviceSpec {
  enum class Kind { automatic, cpu, cuda_one_per_rank, cuda_all, cuda_list };
  Kind kind = Kind::automatic;
  std::vector<int> ordinals;  // cuda_list: in the order given, repeats allowed (cuda:0,0)
  /// More than one device per process may come of it (cuda:all, or a list of several).
  bool is_list() const noexcept {
    return kind == Kind::cuda_all || (kind == Kind::cuda_list && ordinals.size() > 1);
  }
};

/// Parses auto | cpu | cuda | cuda:N | cuda:all | cuda:N,M,... (ordinals are decimal, 0 to 65535,
/// and may repeat). Throws InvalidInput naming the value for anything else ("cuda:", "cuda:0,,1",
/// "cuda:-1", "cuda:x"), in words that follow the name a front door gives the value ("must be
/// auto, cpu, ...", "'cuda:x' is not a GPU list ..."): the CLI prints "--device: " before them.
DeviceSpec parse_device_spec(std::string_view spec);

/// The entries of `listed` (n devices) that local rank `local_rank` of `local_size` takes: the
/// contiguous share [r n / L, (r + 1) n / L) when there are at least as many entries as ranks,
/// else entry r % n (ranks then share devices). Every entry goes to some rank.
std::vector<int> local_share(const std::vector<int>& listed, int local_rank, int local_size);

/// The workers of this process, one Context each (each runs on a worker thread of its own,
/// distributed::run_workers), and the notice `auto` prints.
struct Workers {
  std::vector<Context> contexts;
  std::string notice;  // one line for stderr where auto chose or fell back; empty otherwise
  bool any_cuda() const noexcept;
  bool any_cpu() const noexcept;
  /// "cuda:0 (NVIDIA H100 80GB HBM3), cuda:1 (...)" or "cpu (16 threads)".
  std::string describe() const;
};

/// Resolves a --device value for local rank `local_rank` of the `local_size` ranks of this host
/// (1 of 1 for a process started alone), with `threads` CPU threads (0: all cores):
/// - auto: a rank alone takes cuda:0 when a GPU is usable, else the CPU (as select_device); the
///   ranks of a host take one GPU each, local rank r GPU r % GPUs, or the CPU where there is none;
/// - cpu: the CPU;
/// - cuda: one GPU a rank (local rank r: GPU r % GPUs; alone: cuda:0);
/// - cuda:all and cuda:A,B,...: the GPUs listed (all of them, in ordinal order), dealt out to the
///   host's ranks in contiguous shares (rank r of L takes entries [r n / L, (r + 1) n / L) of n);
///   with more ranks than entries, rank r takes entry r % n. A GPU listed twice runs two workers
///   (cuda:0,0: two halves of the work on GPU 0, each on its own thread and stream).
/// With `threads` 0, the host's cores (Context::cpu().effective_cpu_threads()) are shared out
/// evenly among the workers on it: each of this rank's workers gets max(1, cores / (local_size x
/// its worker count)) threads, unless it is the host's only worker (then 0: all cores); a
/// `threads` > 0 is each worker's.
/// Throws InvalidInput for bad syntax; DeviceUnavailable for cuda... without a usable GPU, or an
/// ordinal past the last GPU ("cuda:5: only 2 CUDA devices found (cuda:0 and cuda:1)").
Workers select_workers(std::string_view spec, int threads, int local_rank = 0, int local_size = 1);

}  // namespace gpukit::distributed
