#pragma once
// The CLI's side of scale-out (docs/scale-out.md): what rank 0 says about a command's job (its
// devices, auto's notice, the warning of a job that mixes backends) and how it reports progress.
// The job itself (which ranks and devices) is gpukit/scale_out/job.hpp's, and the work is spread
// by gpukit/scale_out's calls (black_scholes.hpp, monte_carlo.hpp, reduce.hpp, poisson.hpp).

#include <functional>
#include <string>
#include <string_view>

#include "cli_common.hpp"
#include "gpukit/scale_out/job.hpp"

namespace gpukit::cli {

/// The commands that run across the ranks of an MPI job; any other refuses to start under a
/// launcher with more than one rank (each rank would run the whole command).
bool runs_across_ranks(std::string_view command);

using scale_out::Job;

/// Resolves --device for this rank (scale_out::join_job with the world's communicator) and has
/// rank 0 print one notice line unless --quiet: auto's choice, or, when `announce`, the job's
/// devices when it has several. Collective.
Job join_job(const DeviceOptions& options, const std::string& command, bool announce = true);

/// Rank 0's warning, for commands whose CPU and GPU results differ in the last bits (mc, bs),
/// when the job mixes CPU and GPU workers (Job::mixes_backends). Call on every rank (prints on
/// rank 0).
void warn_if_mixed(const Job& job, const std::string& command);

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
