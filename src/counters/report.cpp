#include "counters/report.hpp"

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
  return json{{"mac", e.mac},
              {"x_bus", e.x_bus},
              {"y_bus_send", e.y_bus_send},
              {"y_bus_receive", e.y_bus_receive},
              {"wait", e.wait},
              {"static", e.static_},
              {"total", e.total()}};
}

}  // namespace

json make_report(const Plan& plan, const RunCounters& rc, const ReportContext& ctx) {
  json r;
  r["schema"] = "triada-report/1";
  r["app"] = ctx.app;
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
  const auto dense = dense_counters(plan, rc.substeps);
  std::uint64_t dense_steps = 0;
  for (const auto& d : dense) dense_steps += d.steps;
  json cycles_per_stage = json::array();
  for (const auto& s : rc.stages) cycles_per_stage.push_back(s.cycles);
  r["steps"] = {{"total", rc.total_steps()}, {"per_stage", per_stage}, {"dense", dense_steps}};
  // Physical cycles: a step lasts as long as its busiest (folded) cell; = steps unfolded.
  r["cycles"] = {{"total", rc.total_cycles()}, {"per_stage", cycles_per_stage}};
  json counters;
  counters["macs"] = rc.total(Counter::macs);
  counters["macs_dense"] = macs_dense(plan);
  for (Counter c :
       {Counter::x_bus_sends, Counter::y_bus_sends, Counter::y_bus_receives, Counter::waits})
    counters[kCounterTable[static_cast<int>(c)].name] = by_bus(rc, plan, c);
  json stages = json::array(), dstages = json::array();
  for (size_t i = 0; i < rc.stages.size(); ++i) {
    stages.push_back(stage_json(rc.stages[i], plan.stages[i]));
    dstages.push_back(stage_json(dense[i], plan.stages[i]));
  }
  counters["per_stage"] = stages;
  counters["dense_per_stage"] = dstages;
  json defs = json::object();
  for (const auto& ci : kCounterTable)
    defs[ci.name] = {{"description", ci.description}, {"unit", ci.unit}};
  counters["definitions"] = defs;
  r["counters"] = counters;

  const auto cells =
      checked_product<std::uint64_t>(plan.mesh, "mesh.cells " + to_string(plan.mesh));
  const EnergyBreakdown run = energy_of(rc.stages, ctx.energy, cells);
  const EnergyBreakdown den = energy_of(dense, ctx.energy, cells);
  r["energy_pj"] = {{"run", run.total()},
                    {"dense", den.total()},
                    {"esop", ctx.esop ? json(run.total()) : json(nullptr)},
                    {"saved_fraction", den.total() > 0 ? 1.0 - run.total() / den.total() : 0.0},
                    {"run_breakdown", energy_json(run)},
                    {"dense_breakdown", energy_json(den)},
                    {"model",
                     {{"mac_pj", ctx.energy.mac_pj},
                      {"x_bus_send_pj", ctx.energy.x_bus_send_pj},
                      {"y_bus_send_pj", ctx.energy.y_bus_send_pj},
                      {"y_bus_receive_pj", ctx.energy.y_bus_receive_pj},
                      {"wait_pj", ctx.energy.wait_pj},
                      {"static_pj_per_cell_step", ctx.energy.static_pj_per_cell_step}}}};
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
  r["mpi"] = {
      {"messages", tot.messages},
      {"bytes", tot.bytes},
      {"by_bus", mb},
      {"per_stage", ms},
      {"control", {{"messages", rc.mpi_control.messages}, {"bytes", rc.mpi_control.bytes}}}};
  r["memory"] = {{"peak_rss_bytes", ctx.peak_rss_bytes},
                 {"baseline_rss_bytes", ctx.baseline_rss_bytes},
                 {"brick_tensor_bytes", ctx.brick_tensor_bytes}};
  if (!ctx.predicted_peak_bytes.empty()) {
    r["memory"]["predicted_peak_bytes"] = ctx.predicted_peak_bytes;
    r["memory"]["predicted_window_bytes"] = ctx.predicted_window_bytes;
  }
  r["executor"] = ctx.executor;
  if (!ctx.precision.empty()) r["precision"] = ctx.precision;
  r["stage_seconds"] = rc.stage_seconds;
  r["wall_seconds"] = ctx.wall_seconds;
  r["simulation_seconds"] = ctx.sim_seconds;
  return r;
}

namespace {
std::string shape_str(const json& a) {
  std::string s;
  for (size_t i = 0; i < a.size(); ++i) s += (i ? "x" : "") + std::to_string(a[i].get<long long>());
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
std::string human(double v) {
  return scaled(v, "%.3g %s", {{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}});
}
std::string energy(double pj) {
  return scaled(pj, "%.4g %s", {{1e9, "mJ"}, {1e6, "uJ"}, {1e3, "nJ"}, {1, "pJ"}});
}
}  // namespace

std::string summary_text(const json& r) {
  std::ostringstream o;
  const auto& m = r["mesh"];
  const auto& c = r["counters"];
  const double macs = c["macs"].get<double>(), dense = c["macs_dense"].get<double>();
  o << r["app"].get<std::string>() << ": " << shape_str(r["problem"]["in_shape"]) << " -> "
    << shape_str(r["problem"]["out_shape"]);
  if (r["problem"].contains("transform"))
    o << "  " << r["problem"]["transform"].get<std::string>() << " "
      << r["problem"].value("direction", "") << " norm=" << r["problem"].value("norm", "");
  o << "  stage order " << r["problem"]["stage_order"].get<std::string>() << "\n";
  o << "  mesh     " << shape_str(m["cells"]) << " cells";
  if (m.contains("fold") && shape_str(m["fold"]) != "1x1x1")
    o << " (fold " << shape_str(m["fold"]) << ")";
  o << ", brick ranks " << shape_str(m["brick_ranks"]) << ", actuator ranks "
    << m["actuator_ranks"].get<int>() << ", world " << m["world_size"].get<int>() << ", ESOP "
    << (m["esop"].get<bool>() ? "on" : "off") << "\n";
  o << "  steps    " << r["steps"]["total"].get<std::uint64_t>() << " (dense "
    << r["steps"]["dense"].get<std::uint64_t>() << "; per stage";
  for (const auto& s : r["steps"]["per_stage"]) o << " " << s.get<std::uint64_t>();
  o << ")";
  if (r.contains("cycles") && r["cycles"]["total"] != r["steps"]["total"])
    o << ", " << r["cycles"]["total"].get<std::uint64_t>()
      << " cycles (folded cells and cell sub-steps)";
  o << "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  MACs     %" PRIu64 " of %" PRIu64 " dense (%.1f%%)\n",
                c["macs"].get<std::uint64_t>(), c["macs_dense"].get<std::uint64_t>(),
                dense > 0 ? 100.0 * macs / dense : 0.0);
  o << buf;
  const auto& e = r["energy_pj"];
  o << "  energy   " << energy(e["run"].get<double>()) << " this run, "
    << energy(e["dense"].get<double>()) << " dense";
  std::snprintf(buf, sizeof buf, " (%.1f%% saved)\n", 100.0 * e["saved_fraction"].get<double>());
  o << buf;
  if (r.contains("precision")) {
    const auto& p = r["precision"];
    o << "  cells    " << p["cell_mode"].get<std::string>() << ", " << p["substeps"].get<int>()
      << " sub-step(s) per step, " << r["cycles"]["total"].get<std::uint64_t>() << " cycles";
    if (p.contains("check")) {
      std::snprintf(buf, sizeof buf, "; vs fp64: max rel error %.3g, mean %.3g",
                    p["check"]["max_rel_error"].get<double>(),
                    p["check"]["mean_rel_error"].get<double>());
      o << buf;
    }
    o << "\n";
  }
  std::snprintf(buf, sizeof buf,
                "  time     %.3f s wall (simulation %.3f s); MPI %" PRIu64 " messages, %s bytes\n",
                r["wall_seconds"].get<double>(), r["simulation_seconds"].get<double>(),
                r["mpi"]["messages"].get<std::uint64_t>(),
                human(r["mpi"]["bytes"].get<double>()).c_str());
  o << buf;
  return o.str();
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

std::string trace_csv(const Plan& plan, const RunCounters& rc) {
  std::ostringstream o;
  o << "step,stage,axis,pivot";
  for (const auto& ci : kCounterTable) o << "," << ci.name;
  o << ",cycles\n";
  std::uint64_t i = 0;
  for (const auto& s : rc.steps) {
    o << i++ << "," << s.stage << "," << plan.stages[s.stage].axis << "," << s.pivot;
    for (int c = 0; c < kCounters; ++c) o << "," << s.n[c];
    o << "," << s.cycles() << "\n";
  }
  return o.str();
}

}  // namespace triada
