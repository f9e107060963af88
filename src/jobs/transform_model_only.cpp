// triada-transform --model-only: the report of dense mode on an input of a given shape, with no
// data read, computed or written (doc/physical.md §7): the sweep of examples/explore/physical.toml
// reaches meshes far larger than a run could hold.
#include <chrono>
#include <memory>

#include "core/error.hpp"
#include "io/output_files.hpp"
#include "jobs/provenance.hpp"
#include "jobs/transform_run.hpp"
#include "mesh/mpi.hpp"
#include "physical/band.hpp"
#include "report/report.hpp"

namespace triada {

namespace {

ReportContext model_context(const TransformConfig& cfg, const Plan& plan, const RunCounters& rc,
                            bool complex_run) {
  ReportContext ctx;
  ctx.app = "triada-transform";
  ctx.problem = {{"model_only", true},
                 {"transform", cfg.transform_spec},
                 {"direction", cfg.inverse ? "inverse" : "forward"},
                 {"norm", to_string(cfg.norm)},
                 {"element", complex_run ? "complex128" : "float64"},
                 {"counters",
                  "dense mode's closed forms (doc/design.md §3.7), as --esop off counts on any "
                  "input; no data was read, computed or written"}};
  ctx.mesh_config = cfg.mesh.file;
  ctx.esop = false;  // dense mode: what ESOP would skip depends on the data
  ctx.energy = cfg.mesh.energy_for(complex_run);
  ctx.executor = "none (--model-only)";
  ctx.precision = {{"cell_mode", to_string(cfg.mesh.cell_mode)},
                   {"substeps", substeps(cfg.mesh.cell_mode, complex_run)},
                   {"mac_pj", ctx.energy.mac_pj()}};
  ctx.physical =
      with_range(plan, rc, cfg.mesh.physical, ctx.energy, cfg.mesh.cell_mode, complex_run);
  ctx.physical_params = cfg.mesh.physical;
  return ctx;
}

// X of --model-only's shape, real; --model-only refuses --initial and every data file.
class ModelShape final : public TensorFacts {
 public:
  explicit ModelShape(const TransformConfig& cfg) : cfg_(cfg) {}
  std::vector<RunFile> run_files() const override {
    return {{cfg_.mesh.file, "--mesh", false, false}, {cfg_.report, "--report", true, false}};
  }
  TensorInfo inspect_input() override { return {"", *cfg_.model_shape, false, ""}; }
  TensorInfo inspect_initial(const ext3&) override {
    throw internal_error("--model-only has no --initial");
  }
  // gemt: a dense real N_d x N_d C_d (the like-for-like case of a dense 3-mode product).
  CoeffMatrix gemt_facts(int axis, std::string& what) override {
    const index_t n = (*cfg_.model_shape)[axis - 1];
    what = "C" + std::to_string(axis) + " (dense " + std::to_string(n) + " x " + std::to_string(n) +
           ", --model-only)";
    return {n, n, false, {}};
  }
  TensorNames names(const TensorInfo&, const TensorInfo&) const override {
    const std::string x = "--model-only " + to_string(*cfg_.model_shape);
    return {x, x, "", "none"};
  }

 private:
  const TransformConfig& cfg_;
};

}  // namespace

std::unique_ptr<TensorFacts> model_shape_facts(const TransformConfig& cfg) {
  return std::make_unique<ModelShape>(cfg);
}

TransformResult run_model_only(const TransformConfig& cfg, MPI_Comm world, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const bool root = mpi::rank(world) == 0;
  TextOutput report;
  ProblemFacts facts;
  mpi::collectively(world, [&] {  // the run's checks, on the shape alone
    if (!root) return;
    TensorInfo info, y0;
    facts = check_problem(cfg, *model_shape_facts(cfg), info, y0, [&] {
      if (!cfg.report.empty()) report = TextOutput(cfg.report, cfg.force);
    });
  });
  mpi::bcast_bytes(world, std::span<ProblemFacts>(&facts, 1), 0);
  const Plan plan = transform_plan(cfg, world, facts);
  const bool complex_run = facts.complex_run();
  std::string summary;
  TransformResult result;
  mpi::collectively(world, [&] {
    if (!root) return;
    result.counters = dense_run_counters(plan, substeps(cfg.mesh.cell_mode, complex_run));
    ReportContext ctx = model_context(cfg, plan, result.counters, complex_run);
    ctx.provenance = local_provenance("triada-transform", cfg.command_line, mpi::size(world));
    ctx.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.report = make_report(plan, result.counters, ctx);
    // A command line's words need not be UTF-8: such bytes are shown as U+FFFD.
    report.stage(result.report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                 "\n");
    summary = summary_text(plan, result.counters, ctx);
  });
  mpi::collectively(world, [&] { report.publish(); });
  if (!cfg.quiet) out << summary << std::flush;
  return result;
}

}  // namespace triada
