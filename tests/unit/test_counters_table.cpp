// The counter and cell-mode tables: well formed, and everything generated from them (the
// [energy] keys, the energy model, the report, the trace CSV, the summary) agrees with
// hand-written expectations.
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "precision/cell_mode.hpp"
#include "report/report.hpp"
#include "support/catch.hpp"

using namespace triada;
using nlohmann::json;

namespace {
std::string write_ini(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/triada_unit_table_" + name + ".ini";
  std::ofstream(path) << text;
  return path;
}

bool nonempty(const char* s) {
  return s != nullptr && s[0] != '\0';
}

// Every [energy] key of both tables and the static term.
std::vector<std::string> all_energy_keys() {
  std::vector<std::string> keys;
  for (const CellModeInfo& m : kCellModeTable) keys.push_back(m.energy_key);
  for (const CounterInfo& c : kCounterTable) keys.push_back(c.energy.key);
  keys.push_back(kStaticEnergy.key);
  return keys;
}

Plan small_plan(ext3 n, ext3 k, std::optional<ext3> mesh = std::nullopt) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = k;
  r.mesh = mesh;
  r.world_size = 1;
  r.balanced_dims = {1, 1, 1};
  return make_plan(r);
}

// The summary as it was written before it was built from the counters: read back from the
// report. Kept here as the oracle that the new summary prints the same text.
std::string shape_of(const json& a) {
  std::string s;
  for (size_t i = 0; i < a.size(); ++i) s += (i ? "x" : "") + std::to_string(a[i].get<long long>());
  return s;
}
std::string scaled(double v, const char* fmt, std::vector<std::pair<double, const char*>> units) {
  const std::pair<double, const char*>* u = &units.back();
  for (const auto& x : units)
    if (v >= x.first) {
      u = &x;
      break;
    }
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v / u->first, u->second);
  return buf;
}
std::string summary_from_json(const json& r) {
  std::ostringstream o;
  const auto& m = r["mesh"];
  const auto& c = r["counters"];
  const double macs = c["macs"].get<double>(), dense = c["macs_dense"].get<double>();
  o << r["app"].get<std::string>() << ": " << shape_of(r["problem"]["in_shape"]) << " -> "
    << shape_of(r["problem"]["out_shape"]);
  if (r["problem"].contains("transform"))
    o << "  " << r["problem"]["transform"].get<std::string>() << " "
      << r["problem"].value("direction", "") << " norm=" << r["problem"].value("norm", "");
  o << "  stage order " << r["problem"]["stage_order"].get<std::string>() << "\n";
  o << "  mesh     " << shape_of(m["cells"]) << " cells";
  if (shape_of(m["fold"]) != "1x1x1") o << " (fold " << shape_of(m["fold"]) << ")";
  o << ", brick ranks " << shape_of(m["brick_ranks"]) << ", actuator ranks "
    << m["actuator_ranks"].get<int>() << ", world " << m["world_size"].get<int>() << ", ESOP "
    << (m["esop"].get<bool>() ? "on" : "off") << "\n";
  o << "  steps    " << r["steps"]["total"].get<std::uint64_t>() << " (dense "
    << r["steps"]["dense"].get<std::uint64_t>() << "; per stage";
  for (const auto& s : r["steps"]["per_stage"]) o << " " << s.get<std::uint64_t>();
  o << ")";
  if (r["cycles"]["total"] != r["steps"]["total"])
    o << ", " << r["cycles"]["total"].get<std::uint64_t>()
      << " cycles (folded cells and cell sub-steps)";
  o << "\n";
  char buf[256];
  std::snprintf(buf, sizeof buf, "  MACs     %" PRIu64 " of %" PRIu64 " dense (%.1f%%)\n",
                c["macs"].get<std::uint64_t>(), c["macs_dense"].get<std::uint64_t>(),
                dense > 0 ? 100.0 * macs / dense : 0.0);
  o << buf;
  const auto& e = r["energy_pj"];
  const auto energy = [](double pj) {
    return scaled(pj, "%.4g %s", {{1e9, "mJ"}, {1e6, "uJ"}, {1e3, "nJ"}, {1, "pJ"}});
  };
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
  // MiB: one decimal from 10 MiB, else three significant digits (doc/design.md §5.8).
  const double mib = r["mpi"]["bytes"].get<double>() / (1024.0 * 1024.0);
  char mib_text[64];
  std::snprintf(mib_text, sizeof mib_text, mib >= 10 ? "%.1f" : mib > 0 ? "%#.3g" : "0", mib);
  std::snprintf(buf, sizeof buf,
                "  time     %.3f s wall (simulation %.3f s); MPI %" PRIu64 " messages, %s MiB\n",
                r["wall_seconds"].get<double>(), r["simulation_seconds"].get<double>(),
                r["mpi"]["messages"].get<std::uint64_t>(), mib_text);
  o << buf;
  return o.str();
}

// Counters of a run on `plan`: dense counters with some events taken away (as ESOP would),
// and some MPI traffic.
RunCounters some_run(const Plan& plan, int substeps, std::uint64_t seed) {
  RunCounters rc;
  rc.substeps = substeps;
  rc.stages = dense_counters(plan, substeps);
  for (auto& s : rc.stages) {
    for (auto& n : s.n) n -= n / (3 + seed % 5);
    s.n[static_cast<int>(Counter::waits)] = 7 * seed + 1;
    s.steps -= s.steps / 4;
  }
  rc.mpi_stages = {
      {{3 * seed, 4000}, {5, 123456789}}, {{7, 8}, {9, 10}}, {{seed, 2u << 30}, {11, 12}}};
  rc.mpi_control = {13, 14};
  rc.stage_seconds = {0.25, 0.5, 0.125};
  return rc;
}
}  // namespace

TEST_CASE("every counter row is filled in, with unique names and energy keys", "[counters]") {
  std::set<std::string> names, keys, parts;
  for (int i = 0; i < kCounters; ++i) {
    const CounterInfo& c = kCounterTable[static_cast<size_t>(i)];
    CAPTURE(i);
    CHECK(static_cast<int>(c.counter) == i);
    CHECK(nonempty(c.name));
    CHECK(nonempty(c.unit));
    CHECK(nonempty(c.description));
    CHECK(nonempty(c.energy.key));
    CHECK(nonempty(c.energy.part));
    CHECK(std::string(c.energy.key).ends_with("_pj"));
    // Only a MAC's energy depends on the cell mode; every other energy has its own default.
    CHECK((c.energy.default_pj == nullptr) == (c.counter == Counter::macs));
    CHECK((c.energy.help == nullptr) == (c.counter == Counter::macs));
    names.insert(c.name);
    keys.insert(c.energy.key);
    parts.insert(c.energy.part);
  }
  CHECK(names.size() == kCounters);
  CHECK(keys.size() == kCounters);
  CHECK(parts.size() == kCounters);
  CHECK_FALSE(keys.count(kStaticEnergy.key));
  CHECK_FALSE(parts.count(kStaticEnergy.part));
  // Bus events have a bus role; MACs happen inside the cells.
  CHECK(counter_info(Counter::x_bus_sends).bus == BusRole::x);
  CHECK(counter_info(Counter::y_bus_sends).bus == BusRole::y);
  CHECK(counter_info(Counter::macs).bus == BusRole::none);
}

TEST_CASE("every cell-mode row is filled in, with unique names and energy keys", "[precision]") {
  std::set<std::string> names, keys;
  for (int i = 0; i < kCellModes; ++i) {
    const CellModeInfo& m = kCellModeTable[static_cast<size_t>(i)];
    CAPTURE(i);
    CHECK(static_cast<int>(m.mode) == i);
    CHECK(nonempty(m.name));
    CHECK(nonempty(m.energy_key));
    CHECK(nonempty(m.energy_default));
    CHECK(nonempty(m.energy_help));
    CHECK(m.substeps_real >= 1);
    CHECK(m.substeps_complex >= m.substeps_real);
    double v = 0;
    CHECK(parse_double(m.energy_default, v));
    CHECK(v > 0);
    names.insert(m.name);
    keys.insert(m.energy_key);
  }
  CHECK(names.size() == static_cast<size_t>(kCellModes));
  CHECK(keys.size() == static_cast<size_t>(kCellModes));
  // fp64's MAC key is the counter table's: the report's energy_pj.model.mac_pj.
  CHECK(std::string(cell_mode_info(CellMode::fp64).energy_key) ==
        counter_info(Counter::macs).energy.key);
  // Keys of both tables and the static term never collide (beyond fp64's mac_pj).
  const std::vector<std::string> all = all_energy_keys();
  CHECK(std::set<std::string>(all.begin(), all.end()).size() == all.size() - 1);
}

TEST_CASE("cell modes round-trip through their names, only m3xu-fp32-wide rounds on store",
          "[precision]") {
  for (const CellModeInfo& m : kCellModeTable) {
    CAPTURE(m.name);
    CHECK(parse_cell_mode(m.name) == m.mode);
    CHECK(to_string(m.mode) == m.name);
    CHECK(parse_cell_mode(to_string(m.mode)) == m.mode);
    CHECK(rounds_on_store(m.mode) == (m.mode == CellMode::m3xu_fp32_wide));
    CHECK(m.sums_call_wide == (m.mode == CellMode::m3xu_fp32 || m.mode == CellMode::m3xu_fp32c));
    CHECK(substeps(m.mode) == m.substeps_real);
    CHECK(substeps(m.mode, true) == m.substeps_complex);
    CHECK_THAT(cell_mode_names(), Catch::Contains(m.name));
  }
  const std::string all =
      "fp64, fp32, tf32, bf16, fp16, m3xu-fp32, m3xu-fp32c, m3xu-fp32-wide, 3xtf32, 4xtf32";
  CHECK(cell_mode_names() == all + ", 3xbf16");
  CHECK(cell_mode_names(" or ") == all + " or 3xbf16");
  try {
    parse_cell_mode("fp8");
    FAIL("fp8 parsed");
  } catch (const config_error& e) {
    CHECK(std::string(e.what()) == "cell mode: unknown 'fp8' (expected " + all + " or 3xbf16)");
  }
}

TEST_CASE("the built-in energies are the tables' defaults", "[counters][options]") {
  const MeshConfig m = parse_mesh_file("");
  for (const CounterInfo& c : kCounterTable)
    if (c.energy.default_pj) CHECK(m.energy[c.counter] == std::stod(c.energy.default_pj));
  for (const CellModeInfo& c : kCellModeTable)
    CHECK(m.mode_mac_pj[static_cast<size_t>(c.mode)] == std::stod(c.energy_default));
  CHECK(m.energy.mac_pj() == 108.9);
  CHECK(m.energy[Counter::x_bus_sends] == 6.4);
  CHECK(m.energy[Counter::y_bus_receives] == 0.5);
  CHECK(m.energy.static_pj_per_cell_step == 0.05);
}

TEST_CASE("parse_mesh_file accepts every counter's and every cell mode's energy key",
          "[counters][options]") {
  double value = 1.25;
  for (const CounterInfo& c : kCounterTable) {
    CAPTURE(c.energy.key);
    value += 1;
    const std::string ini = write_ini(
        "counter", "[energy]\n" + std::string(c.energy.key) + " = " + std::to_string(value) + "\n");
    const MeshConfig m = parse_mesh_file(ini);
    CHECK(m.energy[c.counter] == value);
    for (const CounterInfo& other : kCounterTable)  // the others keep their defaults
      if (other.counter != c.counter)
        CHECK(m.energy[other.counter] == parse_mesh_file("").energy[other.counter]);
  }
  for (const CellModeInfo& c : kCellModeTable) {
    CAPTURE(c.name);
    value += 1;
    const std::string ini =
        write_ini("mode", "[cell]\nmode = " + std::string(c.name) + "\n[energy]\n" + c.energy_key +
                              " = " + std::to_string(value) + "\n");
    const MeshConfig m = parse_mesh_file(ini);
    CHECK(m.cell_mode == c.mode);
    // The mode's key is one sub-step: a real MAC costs its real sub-steps of it.
    CHECK(m.energy.mac_pj() == value * c.substeps_real);
    CHECK(m.mode_mac_pj[static_cast<size_t>(c.mode)] == value);
  }
  const std::string ini = write_ini("static", "[energy]\nstatic_pj_per_cell_step = 0.75\n");
  CHECK(parse_mesh_file(ini).energy.static_pj_per_cell_step == 0.75);
  // A bad value in any key names the file, section and key.
  for (const std::string& key : all_energy_keys()) {
    CAPTURE(key);
    const std::string bad = write_ini("bad", "[energy]\n" + key + " = -1\n");
    try {
      parse_mesh_file(bad);
      FAIL("a negative energy was accepted");
    } catch (const config_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("[energy] " + key));
    }
  }
}

TEST_CASE("energy_of equals the energy model computed by hand", "[counters]") {
  StageTotals a, b;
  a.cycles = 5;
  b.cycles = 9;
  // x_bus_sends, y_bus_sends, y_bus_receives, waits, macs
  a.n = {11, 12, 13, 14, 15};
  b.n = {21, 22, 23, 24, 25};
  EnergyModel e;
  e[Counter::x_bus_sends] = 1.5;
  e[Counter::y_bus_sends] = 2.25;
  e[Counter::y_bus_receives] = 0.3;
  e[Counter::waits] = 0.1;
  e[Counter::macs] = 18.4;
  e.static_pj_per_cell_step = 0.05;
  const EnergyBreakdown got = energy_of({a, b}, e, 64);
  const double mac = 18.4 * 15 + 18.4 * 25, x = 1.5 * 11 + 1.5 * 21, ys = 2.25 * 12 + 2.25 * 22,
               yr = 0.3 * 13 + 0.3 * 23, w = 0.1 * 14 + 0.1 * 24, st = 0.05 * 64.0 * 14.0;
  CHECK(got[Counter::macs] == mac);
  CHECK(got[Counter::x_bus_sends] == x);
  CHECK(got[Counter::y_bus_sends] == ys);
  CHECK(got[Counter::y_bus_receives] == yr);
  CHECK(got[Counter::waits] == w);
  CHECK(got.static_ == st);
  CHECK(got.total() == mac + x + ys + yr + w + st);  // the report's summation order
}

TEST_CASE("the report and the trace are generated from the counter table", "[counters]") {
  const Plan plan = small_plan({4, 5, 6}, {4, 5, 6});
  const RunCounters rc = some_run(plan, 1, 2);
  ReportContext ctx;
  ctx.app = "test";
  ctx.energy = parse_mesh_file("").energy;
  const json r = make_report(plan, rc, ctx);
  CHECK(r["energy_pj"]["model"].dump() ==
        R"({"mac_pj":108.9,"static_pj_per_cell_step":0.05,"wait_pj":0.1,"x_bus_send_pj":6.4,)"
        R"("y_bus_receive_pj":0.5,"y_bus_send_pj":6.4})");
  const json& br = r["energy_pj"]["run_breakdown"];
  std::set<std::string> keys;
  for (const auto& [k, v] : br.items()) keys.insert(k);
  CHECK(keys == std::set<std::string>{"mac", "x_bus", "y_bus_send", "y_bus_receive", "wait",
                                      "static", "total"});
  const EnergyBreakdown run = energy_of(rc.stages, ctx.energy, 4 * 5 * 6);
  CHECK(br["total"].get<double>() == run.total());
  CHECK(br["mac"].get<double>() == run[Counter::macs]);
  // MACs as a total, bus events split by bus; every by-bus split adds up.
  const json& c = r["counters"];
  CHECK(c["macs"].get<std::uint64_t>() == rc.total(Counter::macs));
  for (const CounterInfo& ci : kCounterTable) {
    if (ci.bus == BusRole::none) continue;
    const json& j = c[ci.name];
    CHECK(j["H"].get<std::uint64_t>() + j["L"].get<std::uint64_t>() + j["F"].get<std::uint64_t>() ==
          j["total"].get<std::uint64_t>());
  }
  // The X-bus of each stage carries its x_bus_sends (axis 1: H, else L).
  CHECK(c["x_bus_sends"]["H"].get<std::uint64_t>() == rc.stages[1][Counter::x_bus_sends]);
  const std::string csv = trace_csv(plan, rc);
  CHECK(csv.substr(0, csv.find('\n')) ==
        "step,stage,axis,pivot,x_bus_sends,y_bus_sends,y_bus_receives,waits,macs,cycles");
}

TEST_CASE("the summary built from the counters prints what the report says", "[counters]") {
  struct Case {
    Plan plan;
    int substeps;
    bool esop, precision, check, transform;
  };
  const std::vector<Case> cases = {
      {small_plan({4, 5, 6}, {4, 5, 6}), 1, true, false, false, false},
      {small_plan({4, 5, 6}, {3, 5, 2}), 2, false, true, false, true},
      {small_plan({8, 8, 8}, {8, 8, 8}, ext3{4, 2, 8}), 4, true, true, true, true},
      {small_plan({300, 20, 20}, {300, 20, 20}, ext3{30, 5, 20}), 3, true, true, true, false},
  };
  std::uint64_t seed = 1;
  for (const Case& k : cases) {
    CAPTURE(seed);
    const RunCounters rc = some_run(k.plan, k.substeps, seed++);
    ReportContext ctx;
    ctx.app = "triada-test";
    ctx.esop = k.esop;
    ctx.energy = parse_mesh_file("").energy;
    ctx.wall_seconds = 1.23456 * double(seed);
    ctx.sim_seconds = 0.5 / double(seed);
    if (k.transform)
      ctx.problem = {{"transform", "dct,dft,wht"}, {"direction", "inverse"}, {"norm", "ortho"}};
    if (k.precision) {
      ctx.precision = {{"cell_mode", "m3xu-fp32"}, {"substeps", k.substeps}, {"mac_pj", 6.68}};
      if (k.check) ctx.precision["check"] = {{"max_rel_error", 1.5e-7}, {"mean_rel_error", 3e-8}};
    }
    const std::string text = summary_text(k.plan, rc, ctx);
    CHECK(text == summary_from_json(make_report(k.plan, rc, ctx)));
    CHECK_THAT(text, Catch::Contains("  MACs     "));
  }
}
