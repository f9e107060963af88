#pragma once
// The phases of a transform job (the library's own, not installed; TransformJob,
// jobs/transform_job.hpp, is the API): validate inputs collectively, plan, read the input
// bricks, run the mesh, write the output, report; and the plan-only modes, --dry-run and
// --model-only.
#include <mpi.h>

#include <functional>
#include <ostream>
#include <vector>

#include "geometry/layout_quality.hpp"
#include "geometry/memory_model.hpp"
#include "jobs/transform_job.hpp"
#include "jobs/transform_tensors.hpp"

namespace triada {

// Collective over `world`. Throws (collectively where the cause is bad input) on error.
// Prints the summary to `out` on world rank 0 unless cfg.quiet. Returns the report and the
// counters on world rank 0 (the report null elsewhere; y is left to the tensors).
TransformResult run_transform(const TransformConfig& cfg, TransformTensors& tensors, MPI_Comm world,
                              std::ostream& out);

// The request for a plan of cfg's run on these shapes (the world's size not yet set): its
// mesh is [chip]'s (sized for a budget, physical/chip.hpp) or [mesh] cells.
struct ProblemFacts;
PlanRequest transform_plan_request(const TransformConfig& cfg, const ProblemFacts& facts);
// The request that gives `plan`'s mesh again (its world's size not yet set).
PlanRequest transform_plan_request(const TransformConfig& cfg, const Plan& plan);
// The plan of a run of cfg on `world` for these shapes (what run_transform, --dry-run and
// --model-only build): with [ranks] grid = auto, the grid the time model finds fastest
// ([machine] keys); refused (collectively) where --activity's counts could not fit it.
Plan transform_plan(const TransformConfig& cfg, MPI_Comm world, const ProblemFacts& facts);
// The time model's view of --transport.
ModelTransport model_transport(PivotTransport t);

// What rank 0 learns from the tensors before anything runs; broadcast to every rank.
struct ProblemFacts {
  ext3 in_shape{};
  ext3 out_shape{};
  int input_complex = 0;
  int coeffs_complex = 0;
  int initial_complex = 0;  // --initial's Y0 (its shape is out_shape)
  int initial = 0;          // 1: the run reads Y0
  bool complex_run() const { return input_complex || coeffs_complex; }
};

// World rank 0: every check of a run that needs no tensor data, the one function the run,
// --dry-run and --model-only all call, in this order: no output is the same file as an
// input or another output; then `probe` (the run: its outputs can be written; a plan: its
// --report); then X's and Y0's shape and type and each axis's K (built-in sizes, gemt
// matrices by gemt_facts), which it returns. What only data shows (a non-finite or singular
// matrix) and what the machine cannot hold are left to the run.
ProblemFacts check_problem(const TransformConfig& cfg, TensorFacts& tensors, TensorInfo& info,
                           TensorInfo& y0, const std::function<void()>& probe);

// What the memory model needs to know about a run of cfg (geometry/memory_model.hpp).
MemoryModelOptions memory_options(const TransformConfig& cfg, bool complex_run, bool one_node);

// The nearest world sizes whose automatic grid is good for the plan's shapes (rank 0).
std::vector<LayoutChoice> good_layouts_for(const TransformConfig& cfg, const Plan& plan);
// On world rank 0 unless cfg.quiet: a one-line warning on stderr if the plan's rank layout
// is poor (geometry/layout_quality.hpp), naming world sizes that would do better.
void warn_poor_layout(const TransformConfig& cfg, const Plan& plan, MPI_Comm world);

// --dry-run (cfg.dry_run): the plan of the run without reading data or writing the output
// (jobs/transform_dry_run.cpp): rank layout, memory per rank, MPI traffic per stage, the
// modelled time, the layout's verdict; text on `out` (rank 0), JSON to --report. Returns
// that JSON on world rank 0 (null elsewhere). Collective over `world`.
nlohmann::json run_dry_run(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

// --model-only (cfg.model_shape set): the report of a dense input of that shape, without
// data; rank 0 writes --report and prints the summary. Returns the report and the closed-form
// counters on world rank 0. Collective over `world`.
TransformResult run_model_only(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

}  // namespace triada
