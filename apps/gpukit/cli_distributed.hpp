#pragma once
// The CLI's side of scale-out (docs/scale-out.md): which processes and devices a command runs on,
// what rank 0 says about it, and how it reports progress. The work itself is split by
// gpukit/distributed and combined by the case studies' own canonical functions.

#include <functional>
#include <string>
#include <string_view>

#include "cli_common.hpp"
#include "gpukit/distributed/communicator.hpp"
#include "gpukit/distributed/devices.hpp"

namespace gpukit::cli {

/// The commands that run across the ranks of an MPI job; any other refuses to start under a
/// launcher with more than one rank (each rank would run the whole command).
bool runs_across_ranks(std::string_view command);

/// This process's part of the job a command runs on.
struct Job {
  distributed::Communicator* comm = nullptr;
  distributed::Workers workers;  // this rank's devices, one worker each
  bool job_has_cuda = false;     // some worker of some rank is a GPU
  bool job_has_cpu = false;      // some worker of some rank is the CPU
  std::string description;       // the job's devices, for --json and --check lines
  /// More than one worker in the whole job: the work goes through gpukit/distributed's blocks.
  bool spread = false;
  bool is_root() const { return comm->is_root(); }
  /// The backend whose arithmetic the job's partial results carry (CPU only when every worker
  /// is a CPU).
  Backend arithmetic() const { return job_has_cuda ? Backend::cuda : Backend::cpu; }
};

/// Resolves --device for this rank (distributed::select_workers with its local rank), agrees on
/// failure (a GPU missing on one host stops every rank), and has rank 0 print one notice line
/// unless
/// --quiet: auto's choice, or the job's devices when it has several. Collective.
Job join_job(const DeviceOptions& options, const std::string& command);

/// Rank 0's warning, for commands whose CPU and GPU results differ in the last bits (mc, bs),
/// when the job mixes CPU and GPU workers. Call on every rank (prints on rank 0).
void warn_if_mixed(const Job& job, const std::string& command);

/// Test hook: GPUKIT_TEST_FAULT=rank-out-of-memory:R makes the workers of rank R fail as a GPU
/// out of memory does, so that the MPI tests can show every rank stopping with that rank's
/// message and exit code. Called by the workers of mc, bs and reduce. Not for users.
void inject_rank_fault(const Job& job);

/// Test hook: GPUKIT_TEST_FAULT=rank-fails-alone:R makes rank R throw where no agreement follows
/// (before the work is planned), as an unexpected failure would, so that the MPI tests can show
/// the job ending (main's grace period, then MPI_Abort) instead of hanging. Not for users.
void inject_lone_failure(const Job& job);

/// A progress callback for rank 0 that prints the line `line(percent)` when a ProgressPacer
/// (gpukit/core/progress.hpp) says so: nothing in the first 2 seconds, then every 5% (a second
/// apart at least) or every 30 seconds, and 100% at the end of a run that spoke; or an empty one
/// (other ranks, --quiet, or one process whose stderr is not a terminal; under an MPI launcher
/// stderr is a pipe, so there rank 0 reports). Test hook: GPUKIT_TEST_PROGRESS=immediate drops
/// the waits (the first report shows at once), so that the CLI tests see the lines of a short
/// run. Not for users.
std::function<void(double)> progress_lines(const Job& job,
                                           std::function<std::string(int percent)> line);

}  // namespace gpukit::cli
