#pragma once
// The `poisson` case of gpukit_tune_scale (scale_out_poisson.cpp): the distributed Poisson solver
// against the single-GPU solver, with the all-to-all it makes timed alone beside it.

#include <vector>

#include "tuning_common.hpp"

/// Runs the case for each GPU count of `gpu_counts` in one process (1: the single-GPU solver),
/// or, under mpirun with several ranks, once over the ranks (a GPU each); `repeat` timed solves
/// each. Its knobs are the poisson-* ones of scale_out.cu. Prints its lines and table (rank 0);
/// throws when a configuration fails its check.
void run_poisson_case(const gpukit::tuning::Knobs& knobs, const std::vector<int>& gpu_counts,
                      int repeat);
