#pragma once
// triada-transform as a library call: validate inputs collectively, plan, read the input
// bricks, run the mesh, write the output atomically, report.
#include <mpi.h>

#include <ostream>

#include "apps/transform/options.hpp"

namespace triada {

// Collective over `world`. Throws (collectively where the cause is bad input) on error.
// Prints the summary to `out` on world rank 0 unless cfg.quiet.
void run_transform_job(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

// --model-only (cfg.model_shape set): the report of a dense input of that shape, without
// data; rank 0 writes --report and prints the summary. Collective over `world`.
void run_model_only(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

}  // namespace triada
