#include "report/report.hpp"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iomanip>
#include <sstream>
#include <utility>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "report/physical_json.hpp"

namespace triada {

using nlohmann::json;

namespace {

json by_bus(const RunCounters& rc, const Plan& plan, Counter c) {
  json j;
  for (Bus b : {Bus::H, Bus::L, Bus::F}) j[to_string(b)] = rc.by_bus(c, b, plan);
  j["total"] = rc.total(c);
  return j;
}

json stage_json(const StageTotals& t, const StagePlan& sp) {
  json j;
  j["axis"] = sp.axis;
  j["n"] = sp.n();
  j["k"] = sp.k();
  j["y_bus"] = to_string(sp.y_bus());
  j["x_bus"] = to_string(sp.x_bus());
  j["actuator"] = actuator_name(sp.axis);
  j["steps"] = t.steps;
  for (int c = 0; c < kCounters; ++c) j[kCounterTable[c].name] = t.n[c];
  return j;
}

json energy_json(const EnergyBreakdown& e) {
  json j;
  for (const CounterInfo& ci : kCounterTable) j[ci.energy.part] = e[ci.counter];
  j[kStaticEnergy.part] = e.static_;
  j["total"] = e.total();
  return j;
}

json energy_model_json(const EnergyModel& e) {
  json j;
  for (const CounterInfo& ci : kCounterTable) j[ci.energy.key] = e[ci.counter];
  j[kStaticEnergy.key] = e.static_pj_per_cell_step;
  return j;
}

double saved_fraction(const EnergyBreakdown& run, const EnergyBreakdown& dense) {
  return dense.total() > 0 ? 1.0 - run.total() / dense.total() : 0.0;
}

// What the report and the summary derive from the counters beyond their totals.
struct Derived {
  std::vector<StageTotals> dense;  // dense mode's counters on this plan
  std::uint64_t dense_steps = 0;
  EnergyBreakdown run, den;  // energy of this run and of dense mode
};

Derived derive(const Plan& plan, const RunCounters& rc, const EnergyModel& energy) {
  Derived d;
  d.dense = dense_counters(plan, rc.substeps);
  for (const auto& t : d.dense) d.dense_steps += t.steps;
  const auto cells =
      checked_product<std::uint64_t>(plan.mesh, "mesh.cells " + to_string(plan.mesh));
  d.run = energy_of(rc.stages, energy, cells);
  d.den = energy_of(d.dense, energy, cells);
  return d;
}

json counters_json(const Plan& plan, const RunCounters& rc, const Derived& d) {
  json counters;
  for (const CounterInfo& ci : kCounterTable)
    counters[ci.name] =
        ci.bus == BusRole::none ? json(rc.total(ci.counter)) : by_bus(rc, plan, ci.counter);
  counters["macs_dense"] = macs_dense(plan);
  json stages = json::array(), dstages = json::array();
  for (size_t i = 0; i < rc.stages.size(); ++i) {
    stages.push_back(stage_json(rc.stages[i], plan.stages[i]));
    dstages.push_back(stage_json(d.dense[i], plan.stages[i]));
  }
  counters["per_stage"] = stages;
  counters["dense_per_stage"] = dstages;
  json defs = json::object();
  for (const auto& ci : kCounterTable)
    defs[ci.name] = {{"description", ci.description}, {"unit", ci.unit}};
  counters["definitions"] = defs;
  return counters;
}

}  // namespace

json mpi_json(const Plan& plan, const RunCounters& rc) {
  const MpiTraffic tot = rc.mpi_total();
  json mb, ms = json::array();
  for (Bus b : {Bus::H, Bus::L, Bus::F}) {
    const MpiTraffic t = rc.mpi_bus(b, plan);
    mb[to_string(b)] = {{"messages", t.messages}, {"bytes", t.bytes}};
  }
  for (size_t i = 0; i < rc.mpi_stages.size() && i < plan.stages.size(); ++i) {
    const auto& m = rc.mpi_stages[i];
    ms.push_back({{"axis", plan.stages[i].axis},
                  {"x_bus", to_string(plan.stages[i].x_bus())},
                  {"y_bus", to_string(plan.stages[i].y_bus())},
                  {"x", {{"messages", m.x.messages}, {"bytes", m.x.bytes}}},
                  {"y", {{"messages", m.y.messages}, {"bytes", m.y.bytes}}}});
  }
  return {{"messages", tot.messages},
          {"bytes", tot.bytes},
          {"by_bus", mb},
          {"per_stage", ms},
          {"control", {{"messages", rc.mpi_control.messages}, {"bytes", rc.mpi_control.bytes}}}};
}

json make_report(const Plan& plan, const RunCounters& rc, const ReportContext& ctx) {
  const Derived d = derive(plan, rc, ctx.energy);
  json r;
  r["schema"] = "triada-report/1";
  r["app"] = ctx.app;
  r["provenance"] = to_json(ctx.provenance);
  r["problem"] = ctx.problem;
  r["problem"]["in_shape"] = plan.in_shape;
  r["problem"]["out_shape"] = plan.out_shape;
  r["problem"]["stage_order"] = to_string(plan.stage_order);
  r["mesh"] = {{"cells", plan.mesh},
               {"fold", plan.fold},
               {"virtual_cells", plan.virtual_cells},
               {"brick_ranks", plan.ranks.grid},
               {"actuator_ranks", plan.ranks.dedicated_actuators ? 3 : 0},
               {"world_size", plan.ranks.world_size},
               {"config", ctx.mesh_config.empty() ? "built-in defaults" : ctx.mesh_config},
               {"esop", ctx.esop}};
  json per_stage = json::array();
  for (const auto& s : rc.stages) per_stage.push_back(s.steps);
  json cycles_per_stage = json::array();
  for (const auto& s : rc.stages) cycles_per_stage.push_back(s.cycles);
  r["steps"] = {{"total", rc.total_steps()}, {"per_stage", per_stage}, {"dense", d.dense_steps}};
  // Physical cycles: a step lasts as long as its busiest (folded) cell; = steps unfolded.
  r["cycles"] = {{"total", rc.total_cycles()}, {"per_stage", cycles_per_stage}};
  r["counters"] = counters_json(plan, rc, d);
  r["energy_pj"] = {{"run", d.run.total()},
                    {"dense", d.den.total()},
                    {"esop", ctx.esop ? json(d.run.total()) : json(nullptr)},
                    {"saved_fraction", saved_fraction(d.run, d.den)},
                    {"run_breakdown", energy_json(d.run)},
                    {"dense_breakdown", energy_json(d.den)},
                    {"model", energy_model_json(ctx.energy)}};
  r["mpi"] = mpi_json(plan, rc);
  r["memory"] = {{"peak_rss_bytes", ctx.peak_rss_bytes},
                 {"baseline_rss_bytes", ctx.baseline_rss_bytes},
                 {"brick_tensor_bytes", ctx.brick_tensor_bytes}};
  if (!ctx.predicted_peak_bytes.empty()) {
    r["memory"]["predicted_peak_bytes"] = ctx.predicted_peak_bytes;
    r["memory"]["predicted_window_bytes"] = ctx.predicted_window_bytes;
  }
  r["executor"] = ctx.executor;
  r["kernels"] = ctx.kernels;
  if (!ctx.precision.empty()) r["precision"] = ctx.precision;
  if (ctx.physical) r["physical"] = physical_json(*ctx.physical, ctx.physical_params, plan);
  r["stage_seconds"] = rc.stage_seconds;
  r["stage_time"] = stage_time_json(rc, ctx.model);
  if (!ctx.model.empty()) r["time_model"] = time_model_json(ctx.machine, ctx.model);
  r["wall_seconds"] = ctx.wall_seconds;
  r["simulation_seconds"] = ctx.sim_seconds;
  return r;
}

namespace {
template <class A>
std::string shape_str(const A& a) {
  std::string s;
  for (size_t i = 0; i < a.size(); ++i)
    s += (i ? "x" : "") + std::to_string(static_cast<long long>(a[i]));
  return s;
}
// v in the largest unit of `units` (factor, suffix; largest first) it reaches, else the last.
std::string scaled(double v, const char* fmt,
                   std::initializer_list<std::pair<double, const char*>> units) {
  const std::pair<double, const char*>* u = units.end() - 1;
  for (const auto& x : units)
    if (v >= x.first) {
      u = &x;
      break;
    }
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v / u->first, u->second);
  return buf;
}
std::string energy(double pj) {
  return scaled(pj, "%.4g %s", {{1e9, "mJ"}, {1e6, "uJ"}, {1e3, "nJ"}, {1, "pJ"}});
}

// The problem, mesh and steps lines of the summary.
void summary_head(std::ostream& o, const Plan& plan, const RunCounters& rc,
                  const ReportContext& ctx, const Derived& d) {
  o << ctx.app << ": " << shape_str(plan.in_shape) << " -> " << shape_str(plan.out_shape);
  const json& p = ctx.problem;
  if (p.contains("transform"))
    o << "  " << p["transform"].get<std::string>() << " " << p.value("direction", "")
      << " norm=" << p.value("norm", "");
  o << "  stage order " << to_string(plan.stage_order);
  if (p.contains("initial") && p["initial"].is_string())  // the affine form's Y0
    o << "  + initial " << p["initial"].get<std::string>();
  o << "\n";
  o << "  mesh     " << shape_str(plan.mesh) << " cells";
  if (shape_str(plan.fold) != "1x1x1") o << " (fold " << shape_str(plan.fold) << ")";
  o << ", brick ranks " << shape_str(plan.ranks.grid) << ", actuator ranks "
    << (plan.ranks.dedicated_actuators ? 3 : 0) << ", world " << plan.ranks.world_size << ", ESOP "
    << (ctx.esop ? "on" : "off") << "\n";
  o << "  steps    " << rc.total_steps() << " (dense " << d.dense_steps << "; per stage";
  for (const auto& s : rc.stages) o << " " << s.steps;
  o << ")";
  if (rc.total_cycles() != rc.total_steps())
    o << ", " << rc.total_cycles() << " cycles (folded cells and cell sub-steps)";
  o << "\n";
}
// The time model's stages beside the measured ones (empty without a model).
std::string model_summary_line(const RunCounters& rc, const ReportContext& ctx) {
  if (ctx.model.empty() || ctx.model.size() != rc.stage_seconds.size()) return "";
  std::string line = "  model    stages";
  char buf[64];
  for (const StageModel& m : ctx.model) {
    std::snprintf(buf, sizeof buf, " %.3g", m.total());
    line += buf;
  }
  line += " s modelled, measured";
  for (double t : rc.stage_seconds) {
    std::snprintf(buf, sizeof buf, " %.3g", t);
    line += buf;
  }
  return line + " s ([machine] " + ctx.machine.source + ")\n";
}

// Where the slowest stage's time went, over the brick ranks (empty without timings).
std::string split_summary_line(const RunCounters& rc) {
  if (rc.stage_time.empty()) return "";
  size_t slow = 0;
  for (size_t i = 1; i < rc.stage_time.size(); ++i)
    if (rc.stage_time[i].seconds > rc.stage_time[slow].seconds) slow = i;
  const StageTimeStats& st = rc.stage_time[slow];
  char buf[160];
  std::snprintf(buf, sizeof buf,
                "  split    slowest stage %zu (axis %d) %.3f s; min/mean/max over %d brick rank%s:",
                slow + 1, st.axis, st.seconds, st.ranks, st.ranks == 1 ? "" : "s");
  std::string line = buf;
  for (int p = 0; p < kTimeParts; ++p) {
    std::snprintf(buf, sizeof buf, "%s %s %.3f/%.3f/%.3f", p ? "," : "",
                  to_string(static_cast<TimePart>(p)), st.part[p][0], st.part[p][1], st.part[p][2]);
    line += buf;
  }
  return line + " s\n";
}
}  // namespace

std::string summary_text(const Plan& plan, const RunCounters& rc, const ReportContext& ctx) {
  const Derived d = derive(plan, rc, ctx.energy);
  std::ostringstream o;
  summary_head(o, plan, rc, ctx, d);
  const std::uint64_t macs = rc.total(Counter::macs), dense = macs_dense(plan);
  char buf[256];
  std::snprintf(buf, sizeof buf, "  MACs     %" PRIu64 " of %" PRIu64 " dense (%.1f%%)\n", macs,
                dense, dense > 0 ? 100.0 * double(macs) / double(dense) : 0.0);
  o << buf;
  o << "  energy   " << energy(d.run.total()) << " this run, " << energy(d.den.total()) << " dense";
  std::snprintf(buf, sizeof buf, " (%.1f%% saved)\n", 100.0 * saved_fraction(d.run, d.den));
  o << buf;
  if (!ctx.precision.empty()) {
    const json& p = ctx.precision;
    o << "  cells    " << p["cell_mode"].get<std::string>() << ", " << p["substeps"].get<int>()
      << " sub-step(s) per step, " << rc.total_cycles() << " cycles";
    if (p.contains("check")) {
      std::snprintf(buf, sizeof buf, "; vs fp64: max rel error %.3g, mean %.3g",
                    p["check"]["max_rel_error"].get<double>(),
                    p["check"]["mean_rel_error"].get<double>());
      o << buf;
    }
    o << "\n";
  }
  const MpiTraffic mpi = rc.mpi_total();
  std::snprintf(buf, sizeof buf,
                "  time     %.3f s wall (simulation %.3f s); MPI %" PRIu64 " messages, %s MiB\n",
                ctx.wall_seconds, ctx.sim_seconds, mpi.messages, mib(double(mpi.bytes)).c_str());
  o << buf;
  o << split_summary_line(rc) << model_summary_line(rc, ctx);
  if (ctx.physical) o << physical_summary_line(*ctx.physical, ctx.physical_params);
  return o.str();
}

nlohmann::json stage_time_json(const RunCounters& rc, const std::vector<StageModel>& model) {
  json out = json::array();
  for (size_t i = 0; i < rc.stage_time.size(); ++i) {
    const StageTimeStats& st = rc.stage_time[i];
    json e = {{"axis", st.axis}, {"seconds", st.seconds}, {"brick_ranks", st.ranks}};
    for (int p = 0; p < kTimeParts; ++p)
      e[to_string(static_cast<TimePart>(p))] = {
          {"min", st.part[p][0]}, {"mean", st.part[p][1]}, {"max", st.part[p][2]}};
    if (i < model.size()) e["model_seconds"] = model[i].total();
    out.push_back(e);
  }
  return out;
}

nlohmann::json time_model_json(const MachineModel& m, const std::vector<StageModel>& stages) {
  json st = json::array();
  double total = 0;
  for (const StageModel& s : stages) {
    st.push_back({{"axis", s.axis},
                  {"seconds", s.total()},
                  {"stream", s.stream},
                  {"compute", s.compute},
                  {"planes", s.planes}});
    total += s.total();
  }
  const json machine = {
      {"source", m.source},
      {"cores_per_node", m.cores_per_node},
      {"left_macs_per_s", {{"alone", m.left_rate_alone}, {"all", m.left_rate_all}}},
      {"right_macs_per_s", {{"alone", m.right_rate_alone}, {"all", m.right_rate_all}}},
      {"copy_bytes_per_s", m.copy_bytes_per_s},
      {"fence_s", m.fence_s},
      {"handshake_s", m.handshake_s},
      {"node", {{"alpha_s", m.node_alpha_s}, {"beta_s_per_byte", m.node_beta_s_per_byte}}},
      {"net", {{"alpha_s", m.net_alpha_s}, {"beta_s_per_byte", m.net_beta_s_per_byte}}}};
  return {{"machine", machine}, {"stages", st}, {"seconds", total}};
}

std::string batch_trace_csv(const Plan& plan, const RunCounters& rc) {
  std::ostringstream o;
  o << "stage,axis,rank,piece,batch,first_step,steps,seconds,compute,pack,wait,idle\n";
  o << std::setprecision(17);
  for (const BatchTime& b : rc.batch_times) {
    o << b.stage << "," << plan.stages[b.stage].axis << "," << b.rank << "," << to_string(b.piece)
      << "," << b.batch << "," << b.first_step << "," << b.steps << "," << b.split.sum();
    for (double x : b.split.s) o << "," << x;
    o << "\n";
  }
  return o.str();
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string trace_csv(const Plan& plan, const RunCounters& rc, const PhysicalResult* physical) {
  std::ostringstream o;
  o << "step,stage,axis,pivot";
  for (const auto& ci : kCounterTable) o << "," << ci.name;
  o << ",cycles" << (physical ? ",time_ps" : "") << "\n";
  o << std::setprecision(17);  // times: every digit of the double
  std::uint64_t i = 0;
  for (size_t rec = 0; rec < rc.steps.size(); ++rec) {
    const StepRecord& s = rc.steps[rec];
    for (std::uint64_t j = 0; j < s.repeat; ++j, ++i) {
      o << i << "," << s.stage << "," << plan.stages[s.stage].axis << ","
        << s.pivot + static_cast<index_t>(j);
      for (int c = 0; c < kCounters; ++c) o << "," << s.n[c];
      o << "," << s.cycles();
      if (physical) o << "," << physical->step_ps[rec];
      o << "\n";
    }
  }
  return o.str();
}

}  // namespace triada
