#pragma once
// The JSON report (schema triada-report/1, doc/design.md §5), the per-step CSV trace and the
// human summary printed at the end of a run.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "geometry/time_model.hpp"
#include "physical/physical_model.hpp"
#include "report/provenance.hpp"

namespace triada {

struct ReportContext {
  std::string app;          // "triada-transform"
  Provenance provenance;    // what produced the run: the report's `provenance` object
  nlohmann::json problem;   // app-specific problem description
  std::string mesh_config;  // INI file, empty: built-in defaults
  bool esop = true;
  EnergyModel energy;
  double wall_seconds = 0;
  double sim_seconds = 0;  // the simulation alone (after input read, before write)
  std::string executor = "fused";
  // The kernels' instruction-set path (jobs/provenance.hpp: kernels_json), null
  // where no kernel runs (--model-only).
  nlohmann::json kernels = nullptr;
  nlohmann::json precision = nlohmann::json::object();  // cell mode, sub-steps, --check
  std::vector<long> peak_rss_bytes;                     // per world rank
  std::vector<long> baseline_rss_bytes;                 // per world rank, before the input was read
  std::vector<long> brick_tensor_bytes;  // per world rank: max(input, output) brick bytes
  // Per world rank, from the memory model (geometry/memory_model.hpp), empty if none:
  // predicted growth of resident memory above the baseline, and the shared windows
  // mapped during setup (before the baseline).
  std::vector<std::uint64_t> predicted_peak_bytes;
  std::vector<std::uint64_t> predicted_window_bytes;
  // The physical model of this run (physical/physical_model.hpp) and its parameters; the
  // report's `physical` section, the summary's physical line and the trace's time column
  // are written only when it is present.
  std::optional<PhysicalResult> physical;
  PhysicalParams physical_params;
  // The time model's stages of this run (geometry/time_model.hpp), empty if none: each
  // stage_time entry then has its model_seconds, and the report a time_model section.
  std::vector<StageModel> model;
  MachineModel machine;
};

nlohmann::json make_report(const Plan& plan, const RunCounters& rc, const ReportContext& ctx);

// The report's `mpi` section: rc's MPI traffic, in total, by bus, per stage and control.
nlohmann::json mpi_json(const Plan& plan, const RunCounters& rc);

// Human-readable summary (a few lines) of the run make_report describes: the same
// numbers, computed from the counters and the context.
std::string summary_text(const Plan& plan, const RunCounters& rc, const ReportContext& ctx);

// v with `digits` digits after the point, for the apps' text tables.
std::string fixed(double v, int digits);

// One row per step; with `physical`, a last column time_ps: the step's modelled duration.
std::string trace_csv(const Plan& plan, const RunCounters& rc,
                      const PhysicalResult* physical = nullptr);

// The report's `stage_time`: each stage's time and, over the brick ranks, the minimum, mean
// and maximum of its compute, pack, wait and idle seconds (counters/time_split.hpp); with
// `model` (one per stage), each stage's model_seconds and its parts.
nlohmann::json stage_time_json(const RunCounters& rc, const std::vector<StageModel>& model = {});
// The time model's machine and stages (the report's and the plan's `time_model`).
nlohmann::json time_model_json(const MachineModel& m, const std::vector<StageModel>& stages);

// One row per piece of a rank's stage (rc.batch_times): stage, axis, rank, piece, batch,
// first_step, steps, seconds (its sum), compute, pack, wait, idle.
std::string batch_trace_csv(const Plan& plan, const RunCounters& rc);

}  // namespace triada
