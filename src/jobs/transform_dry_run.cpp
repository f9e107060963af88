// triada-transform --dry-run: the plan of a run from its options and its inputs' metadata
// alone (doc/transform.md "A plan before the run", doc/design.md §5.9): rank layout, memory per
// rank, MPI traffic per stage, the modelled time and the layout's verdict. No tensor data is read,
// no output probed or written (only --report's JSON). Plan as plain data, then print.
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "core/memory.hpp"
#include "counters/mpi_model.hpp"
#include "geometry/layout_quality.hpp"
#include "io/output_files.hpp"
#include "jobs/provenance.hpp"
#include "jobs/transform_run.hpp"
#include "jobs/world_plan.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"
#include "physical/band.hpp"
#include "report/physical_json.hpp"
#include "report/report.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;

// One world rank's part of the plan.
struct RankPlan {
  bool brick = false;
  std::array<int, 3> coords{0, 0, 0};
  Brick cells, in_box, out_box;    // empty on an actuator rank
  std::vector<int> actuator_axes;  // the actuators this rank hosts
  MemoryPrediction model;          // what the run's memory check counts
  u64 startup_rss = 0;             // this rank's resident memory, measured by the dry run
  // The peak resident memory the run will report (`memory.peak_rss_bytes`): start-up, the
  // shared windows mapped at setup, and the run's growth.
  u64 expected_peak() const { return startup_rss + model.window_mapped + model.expected; }
};

// The run's memory check on each node (mesh/node_memory.hpp): the node that fits worst.
struct NodeCheck {
  double need = 0;
  u64 available = 0;
  int ranks = 1;
  std::string source;
  bool fits = true;
};

// The tensors as the plan names them.
struct Names {
  std::string input, input_type, initial, output;
};

struct DryRun {
  Names names;
  bool complex_run = false;
  Plan plan;
  std::vector<RankPlan> ranks;
  NodeCheck node;
  RunCounters dense;  // dense mode's counters with the modelled MPI traffic
  EnergyModel energy;
  PhysicalResult physical;
  LayoutVerdict verdict;
  std::vector<LayoutChoice> choices;
  std::vector<StageModel> model;  // the time model of this plan's stages
  std::vector<GridChoice> grids;  // every grid of its brick ranks, fastest first
};

// Rank 0 checks the run as it would check it, from the inputs' metadata (or --model-only's
// shape), and probes --report; every rank learns the facts.
ProblemFacts agreed_shapes(const TransformConfig& cfg, MPI_Comm world, Names& names,
                           TextOutput& report) {
  ProblemFacts f;
  mpi::collectively(world, [&] {
    if (mpi::rank(world) != 0) return;
    const std::unique_ptr<TensorFacts> tensors =
        cfg.model_shape ? model_shape_facts(cfg) : file_tensors(cfg);
    TensorInfo info, y0;
    f = check_problem(cfg, *tensors, info, y0, [&] {
      if (!cfg.report.empty()) report = TextOutput(cfg.report, cfg.force);
    });
    const TensorNames tn = tensors->names(info, y0);
    names = {tn.input, info.type_name, tn.initial, tn.output};
    if (cfg.model_shape) names.input = "none (" + tn.input + ")";
  });
  mpi::bcast_bytes(world, std::span<ProblemFacts>(&f, 1), 0);
  return f;
}

// Every rank's part of the layout and its memory model (plain data from the plan).
std::vector<RankPlan> rank_plans(const Plan& plan, const MemoryModelOptions& mem,
                                 const std::string& what) {
  std::vector<RankPlan> out(static_cast<size_t>(plan.ranks.world_size));
  for (int r = 0; r < plan.ranks.world_size; ++r) {
    RankPlan& p = out[static_cast<size_t>(r)];
    p.brick = r < plan.ranks.n_bricks;
    if (p.brick) {
      p.coords = plan.brick_coords(r);
      p.cells = plan.brick_cells(r);
      p.in_box = p.cells.intersect(whole(plan.in_shape));
      p.out_box = p.cells.intersect(whole(plan.out_shape));
    }
    for (int a = 1; a <= 3; ++a)
      if (plan.ranks.actuator_rank[a - 1] == r) p.actuator_axes.push_back(a);
    p.model = predict_memory(plan, r, mem, what);
  }
  return out;
}

// The run's memory check on every node, and each rank's start-up memory, on rank 0.
void memory_facts(MPI_Comm world, const MemoryPrediction& mine, DryRun& d) {
  const NodeMemory m = node_memory(world, mine.node_share());
  const std::array<std::int64_t, 4> facts{static_cast<std::int64_t>(m.need),
                                          static_cast<std::int64_t>(m.available.bytes), m.ranks,
                                          current_rss_bytes()};
  const std::vector<std::int64_t> all = mpi::gather<std::int64_t>(world, facts, 0);
  d.node = {m.need, m.available.bytes, m.ranks, m.available.source, m.fits()};
  for (size_t r = 0; 4 * r < all.size(); ++r) {
    d.ranks[r].startup_rss = static_cast<u64>(all[4 * r + 3]);
    const bool fits = all[4 * r] <= all[4 * r + 1];
    if (!fits && d.node.fits)
      d.node = {static_cast<double>(all[4 * r]), static_cast<u64>(all[4 * r + 1]),
                static_cast<int>(all[4 * r + 2]), "rank " + std::to_string(r) + "'s node", false};
  }
}

// Rank 0: what dense mode streams and sends, its time on the physical model, the verdict.
void model_run(const TransformConfig& cfg, DryRun& d) {
  const int sub = substeps(cfg.mesh.cell_mode, d.complex_run);
  d.dense = dense_run_counters(d.plan, sub);
  const bool reference = memory_options(cfg, d.complex_run, true).reference;
  dense_mpi_traffic(d.plan, d.complex_run ? sizeof(cplx) : sizeof(double),
                    reference ? PivotMessages::counted : PivotMessages::planes, d.dense);
  d.energy = cfg.mesh.energy_for(d.complex_run);
  d.physical = with_range(d.plan, d.dense, cfg.mesh.physical, d.energy, cfg.mesh.cell_mode,
                          d.complex_run, !d.names.initial.empty());
  d.verdict = judge_layout(d.plan);
  d.choices = good_layouts_for(cfg, d.plan);
}

// Rank 0: the time model of the plan and of every grid its brick ranks could take.
void model_time(const TransformConfig& cfg, int per_node, DryRun& d) {
  const std::size_t elem = d.complex_run ? sizeof(cplx) : sizeof(double);
  const ModelTransport t = model_transport(cfg.transport);
  d.model = model_stages(d.plan, cfg.mesh.machine, elem, t, per_node);
  PlanRequest req = transform_plan_request(cfg, d.plan);
  req.world_size = d.plan.ranks.world_size;
  req.balanced_dims = mpi::dims_create(d.plan.ranks.n_bricks);
  d.grids = rank_grids(req, cfg.mesh.machine, elem, t, per_node);
}

DryRun make_dry_run(const TransformConfig& cfg, MPI_Comm world, TextOutput& report) {
  DryRun d;
  const ProblemFacts f = agreed_shapes(cfg, world, d.names, report);
  d.complex_run = f.complex_run();
  d.plan = transform_plan(cfg, world, f);
  MemoryModelOptions mem;
  MemoryPrediction mine;
  const std::string what = "the memory of a run on shape " + to_string(f.in_shape);
  const bool one_node = on_one_node(world);
  const bool elsewhere = cfg.plan_world_size > 0;  // --world-size: not this run's ranks
  std::vector<int> nodes = node_of_ranks(world);
  mpi::collectively(world, [&] {
    mem = memory_options(cfg, d.complex_run, one_node && !elsewhere);
    if (!elsewhere) mem.node_of_rank = std::move(nodes);  // this run's placement
    mem.hdf5_open_on_rank0 = !cfg.model_shape;  // rank 0 read the metadata: its start-up has it
    if (!elsewhere) mine = predict_memory(d.plan, mpi::rank(world), mem, what);
    if (mpi::rank(world) == 0) d.ranks = rank_plans(d.plan, mem, what);
  });
  if (elsewhere)
    for (RankPlan& p : d.ranks) p.startup_rss = static_cast<u64>(current_rss_bytes());
  else
    memory_facts(world, mine, d);
  const int per_node = model_ranks_per_node(cfg.mesh.machine, world);
  if (mpi::rank(world) == 0) {
    model_run(cfg, d);
    model_time(cfg, per_node, d);
  }
  return d;
}

// ---- Text ----------------------------------------------------------------------------

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1 << 20));
  return buf;
}

std::string box_text(const Brick& b) {
  std::string s;
  for (int d = 0; d < 3; ++d)
    s += (d ? "x" : "") + std::string("[") + std::to_string(b.lo[d]) + "," +
         std::to_string(b.hi[d]) + ")";
  return s;
}

std::string role_text(const RankPlan& p) {
  std::string s;
  if (p.brick)
    s = "brick (" + std::to_string(p.coords[0]) + "," + std::to_string(p.coords[1]) + "," +
        std::to_string(p.coords[2]) + ") cells " + box_text(p.cells);
  for (int a : p.actuator_axes)
    s += std::string(s.empty() ? "" : " + ") + actuator_name(a) + " actuator (C" +
         std::to_string(a) + ")";
  return s;
}

void text_head(std::ostream& o, const TransformConfig& cfg, const DryRun& d) {
  const Plan& p = d.plan;
  o << "triada-transform --dry-run: " << to_string(p.in_shape) << " -> " << to_string(p.out_shape)
    << "  " << transform_list(cfg) << " " << (cfg.inverse ? "inverse" : "forward")
    << " norm=" << to_string(cfg.norm) << "  stage order " << to_string(p.stage_order) << "\n";
  o << "  input    " << d.names.input
    << (d.names.input_type.empty() ? "" : " " + d.names.input_type + " (metadata only)")
    << (d.names.initial.empty() ? "" : ", initial " + d.names.initial) << "; output "
    << d.names.output << " (not written); " << (d.complex_run ? "complex" : "real") << " run\n";
  o << "  mesh     " << to_string(p.mesh) << " cells";
  if (p.folded()) o << " (fold " << to_string(p.fold) << ")";
  o << "; world " << p.ranks.world_size << ": " << p.ranks.n_bricks << " brick rank"
    << (p.ranks.n_bricks == 1 ? "" : "s") << " in a " << p.ranks.grid[0] << "x" << p.ranks.grid[1]
    << "x" << p.ranks.grid[2] << " grid"
    << (p.ranks.dedicated_actuators ? " + 3 actuator ranks" : ", actuators inside brick ranks")
    << ", ESOP " << (cfg.mesh.mode == Mode::esop ? "on" : "off") << "\n";
}

void text_ranks(std::ostream& o, const TransformConfig& cfg, const DryRun& d) {
  // A large world: its first ranks (the JSON has every one).
  const size_t shown = d.ranks.size() > 16 ? 8 : d.ranks.size();
  for (size_t r = 0; r < shown; ++r) {
    const RankPlan& p = d.ranks[r];
    char buf[200];
    std::snprintf(buf, sizeof buf, "  rank %-3zu %-44s peak %s MiB", r, role_text(p).c_str(),
                  mib(static_cast<double>(p.expected_peak())).c_str());
    o << buf << " (start-up " << mib(static_cast<double>(p.startup_rss)) << " + windows "
      << mib(static_cast<double>(p.model.window_mapped)) << " + run "
      << mib(static_cast<double>(p.model.expected)) << "); check "
      << mib(static_cast<double>(p.model.node_share())) << " MiB\n";
  }
  if (shown < d.ranks.size())
    o << "  ... and " << d.ranks.size() - shown << " more ranks (--report's JSON has each)\n";
  if (cfg.plan_world_size > 0) {
    o << "  memory   planned for " << cfg.plan_world_size
      << " ranks (--world-size): the node memory check is left out\n";
    return;
  }
  const NodeCheck& n = d.node;
  o << "  memory   the run's check: " << n.ranks << " rank(s) on a node need "
    << format_bytes(n.need) << ", " << format_bytes(n.available) << " available (" << n.source
    << "): " << (n.fits ? "fits" : "REFUSED") << "\n";
}

std::string traffic_text(const MpiTraffic& t) {
  return std::to_string(t.messages) + " messages " + format_bytes(t.bytes);
}

void text_stages(std::ostream& o, const TransformConfig& cfg, const DryRun& d) {
  for (size_t s = 0; s < d.plan.stages.size(); ++s) {
    const StagePlan& sp = d.plan.stages[s];
    const StageTraffic& t = d.dense.mpi_stages[s];
    o << "  stage " << s + 1 << "  axis " << sp.axis << ", " << actuator_name(sp.axis) << " (C"
      << sp.axis << "), " << sp.n() << " steps: X (" << to_string(sp.x_bus()) << ") "
      << traffic_text(t.x) << ", Y (" << to_string(sp.y_bus()) << ") " << traffic_text(t.y) << "\n";
  }
  o << "  MPI      " << traffic_text(d.dense.mpi_total()) << " with control; "
    << (cfg.mesh.mode == Mode::esop ? "dense traffic: with ESOP the run's depends on the data"
                                    : "as the run will count them")
    << "\n";
  o << "  time     " << d.dense.total_steps() << " steps, " << d.dense.total_cycles()
    << " cycles (dense)\n";
  o << physical_summary_line(d.physical, cfg.mesh.physical);
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g s", s);
  return buf;
}

std::string grid_name(const std::array<int, 3>& g) {
  return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

// The time model of the plan, stage by stage, and the chosen grid against the next best.
void text_model(std::ostream& o, const TransformConfig& cfg, const DryRun& d) {
  for (size_t s = 0; s < d.model.size(); ++s) {
    const StageModel& m = d.model[s];
    o << "  model    stage " << s + 1 << " (axis " << m.axis << ") " << seconds_text(m.total())
      << ": stream " << seconds_text(m.stream) << " + kernels " << seconds_text(m.compute)
      << " + pivot planes " << seconds_text(m.planes) << "\n";
  }
  o << "  model    " << seconds_text(model_total(d.model)) << " in all ([machine] "
    << cfg.mesh.machine.source << "); grids of " << d.plan.ranks.n_bricks << " brick ranks:";
  // The three fastest, and this run's grid wherever it ranks.
  bool first = true;
  for (size_t i = 0; i < d.grids.size(); ++i) {
    const bool mine = d.grids[i].grid == d.plan.ranks.grid;
    if (i >= 3 && !mine) continue;
    o << (first ? " " : ", ") << (i > 3 && mine ? "... " : "") << grid_name(d.grids[i].grid) << " "
      << seconds_text(d.grids[i].total) << (mine ? " (this run)" : "");
    first = false;
  }
  o << " (" << d.grids.size() << " grids)\n";
}

void text_layout(std::ostream& o, const DryRun& d) {
  const LayoutVerdict& v = d.verdict;
  if (v.poor) {
    o << "  layout   " << layout_warning(d.plan, v, d.choices) << "\n";
    return;
  }
  char buf[200];
  std::snprintf(buf, sizeof buf, "  layout   good: bricks of %s cells, %.2f times longer than wide",
                to_string(v.brick).c_str(), v.brick_aspect);
  o << buf << "; also good: " << format_choices(d.choices) << "\n";
}

std::string dry_run_text(const TransformConfig& cfg, const DryRun& d) {
  std::ostringstream o;
  text_head(o, cfg, d);
  text_ranks(o, cfg, d);
  text_stages(o, cfg, d);
  text_model(o, cfg, d);
  text_layout(o, d);
  return o.str();
}

// ---- JSON (schema triada-plan/1, doc/design.md §5.9) -----------------------------------

nlohmann::json box_json(const Brick& b) {
  return {{"lo", b.lo}, {"hi", b.hi}};
}

nlohmann::json ranks_json(const DryRun& d) {
  nlohmann::json a = nlohmann::json::array();
  for (size_t r = 0; r < d.ranks.size(); ++r) {
    const RankPlan& p = d.ranks[r];
    nlohmann::json j = {{"rank", r}, {"brick", p.brick}, {"actuator_axes", p.actuator_axes}};
    if (p.brick)
      j.update({{"coords", p.coords},
                {"cells", box_json(p.cells)},
                {"input_box", box_json(p.in_box)},
                {"output_box", box_json(p.out_box)}});
    a.push_back(j);
  }
  return a;
}

nlohmann::json memory_json(const DryRun& d) {
  nlohmann::json m;
  for (const RankPlan& p : d.ranks) {
    m["peak_rss_bytes"].push_back(p.expected_peak());
    m["startup_rss_bytes"].push_back(p.startup_rss);
    m["window_bytes"].push_back(p.model.window_mapped);
    m["growth_bytes"].push_back(p.model.expected);
    m["check_bytes"].push_back(p.model.node_share());
  }
  if (d.node.source.empty()) {  // --world-size: no node of this machine runs it
    m["node_check"] = nullptr;
    return m;
  }
  m["node_check"] = {{"ranks", d.node.ranks},
                     {"need_bytes", d.node.need},
                     {"available_bytes", d.node.available},
                     {"source", d.node.source},
                     {"fits", d.node.fits}};
  return m;
}

nlohmann::json layout_json(const DryRun& d) {
  const Plan& p = d.plan;
  nlohmann::json choices = nlohmann::json::array();
  for (const LayoutChoice& c : d.choices)
    choices.push_back(
        {{"world_size", c.world_size}, {"brick_ranks", c.n_bricks}, {"grid", c.grid}});
  return {{"world_size", p.ranks.world_size},
          {"brick_ranks", p.ranks.n_bricks},
          {"grid", p.ranks.grid},
          {"dedicated_actuators", p.ranks.dedicated_actuators},
          {"actuator_rank", p.ranks.actuator_rank},
          {"mesh", p.mesh},
          {"fold", p.fold},
          {"virtual_cells", p.virtual_cells},
          {"ranks", ranks_json(d)},
          {"poor", d.verdict.poor},
          {"brick_aspect", d.verdict.brick_aspect},
          {"mesh_aspect", d.verdict.mesh_aspect},
          {"max_aspect", std::max(kMaxBrickAspect, d.verdict.mesh_aspect)},
          {"warning", d.verdict.poor ? layout_warning(p, d.verdict, d.choices) : ""},
          {"good_world_sizes", choices}};
}

nlohmann::json grids_json(const DryRun& d) {
  nlohmann::json a = nlohmann::json::array();
  for (const GridChoice& g : d.grids) {
    nlohmann::json stages = nlohmann::json::array();
    for (const StageModel& m : g.stages) stages.push_back(m.total());
    a.push_back({{"grid", g.grid}, {"seconds", g.total}, {"stage_seconds", stages}});
  }
  return a;
}

nlohmann::json dry_run_json(const TransformConfig& cfg, const DryRun& d, const Provenance& prov) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& s : d.dense.stages) steps.push_back(s.steps);
  return {{"schema", "triada-plan/1"},
          {"app", "triada-transform"},
          {"provenance", to_json(prov)},
          {"problem",
           {{"input", d.names.input},
            {"input_type", d.names.input_type},
            {"initial",
             d.names.initial.empty() ? nlohmann::json(nullptr) : nlohmann::json(d.names.initial)},
            {"output", d.names.output},
            {"in_shape", d.plan.in_shape},
            {"out_shape", d.plan.out_shape},
            {"transform", transform_list(cfg)},
            {"direction", cfg.inverse ? "inverse" : "forward"},
            {"norm", to_string(cfg.norm)},
            {"stage_order", to_string(d.plan.stage_order)},
            {"element", d.complex_run ? "complex128" : "float64"},
            {"esop", cfg.mesh.mode == Mode::esop}}},
          {"layout", layout_json(d)},
          {"memory", memory_json(d)},
          {"mpi", mpi_json(d.plan, d.dense)},
          {"steps", {{"total", d.dense.total_steps()}, {"per_stage", steps}}},
          {"physical", physical_json(d.physical, cfg.mesh.physical, d.plan)},
          {"time_model", time_model_json(cfg.mesh.machine, d.model)},
          {"grids", grids_json(d)}};
}

}  // namespace

nlohmann::json run_dry_run(const TransformConfig& cfg, MPI_Comm world, std::ostream& out) {
  const bool root = mpi::rank(world) == 0;
  TextOutput report;
  const DryRun d = make_dry_run(cfg, world, report);
  std::string text;
  nlohmann::json plan;
  mpi::collectively(world, [&] {
    if (!root) return;
    const Provenance prov =
        local_provenance("triada-transform", cfg.command_line, mpi::size(world));
    plan = dry_run_json(cfg, d, prov);
    report.stage(plan.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    text = dry_run_text(cfg, d);
  });
  mpi::collectively(world, [&] { report.publish(); });
  if (root && !cfg.quiet) out << text << std::flush;
  return plan;
}

}  // namespace triada
