// The physical model (doc/physical.md) against closed forms written here from the issue's
// and the doc's formulas, on small meshes whose counters are synthesized step by step.
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "physical/physical_model.hpp"
#include "physical/technology.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

Plan plan_of(ext3 n, ext3 k, std::optional<ext3> mesh = std::nullopt) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = k;
  r.mesh = mesh;
  r.world_size = 1;
  r.balanced_dims = {1, 1, 1};
  return make_plan(r);
}

// Dense counters with one record per step: max(N, K) X elements, the stage's busiest cell
// (dense_counters' block), and `sends(stage, t)` X elements where given.
RunCounters dense_run(const Plan& plan, int substeps = 1) {
  RunCounters rc;
  rc.stages = dense_counters(plan, substeps);
  rc.substeps = substeps;
  for (int s = 0; s < 3; ++s) {
    const StageTotals& t = rc.stages[s];
    for (std::uint64_t i = 0; i < t.steps; ++i) {
      StepRecord r;
      r.stage = s;
      r.pivot = static_cast<index_t>(i);
      r[Counter::x_bus_sends] = t[Counter::x_bus_sends] / t.steps;
      r[Counter::macs] = t[Counter::macs] / t.steps;
      r.busiest = t.cycles / t.steps / static_cast<std::uint64_t>(substeps);
      rc.steps.push_back(r);
    }
  }
  return rc;
}

// Parameters with round numbers: 45 nm, a given pitch, stacked tiers 10 um apart.
PhysicalParams round_params(BusModel m) {
  PhysicalParams p;
  p.timing.bus_model = m;
  p.timing.driver_ps = 20;
  p.timing.wire_ps_per_mm = 100;
  p.timing.wire_ohm_per_mm = 1000;
  p.timing.wire_ff_per_mm = 200;
  p.timing.stage_ps = 30;
  p.timing.overhead_ps = 7;
  p.timing.mac_ps[0] = 500;  // fp64, unpipelined: its sub-step is its latency
  p.timing.mac_latency_ps.fill(0);
  p.timing.control_cycles = 0;
  p.area.cell_pitch_um = 100;
  p.area.tier_pitch_um = 10;
  return p;
}

PhysicalResult model(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                     CellMode mode = CellMode::fp64) {
  return physical_model(plan, rc, p, parse_mesh_file("").energy, mode, false);
}

int bus_axis_of(int stage_axis) {  // the X-bus's direction (doc/design.md §2.3)
  return stage_axis == 1 ? 3 : 1;
}

// Line length (mm) of `cells` cells along `axis`, stacked, pitch 100 um, tiers 10 um.
double mm_along(int axis, double cells) {
  return cells * (axis == 3 ? 10.0 : 100.0) / 1000;
}

// The issue's closed forms for one line of n cells and L mm.
double expected_line(BusModel m, double n, double L) {
  switch (m) {
    case BusModel::ideal:
      return 0;
    case BusModel::repeated:
      return 20 + L * 100;
    case BusModel::rc:
      return 20 + 0.38 * 1000 * 200e-15 * L * L * 1e12;
    case BusModel::tree:
      return std::ceil(std::log2(n)) * 30;
    case BusModel::pipelined:
      return 0;  // per hop, below
  }
  return 0;
}

}  // namespace

TEST_CASE("each bus model's period is its closed form, stage by stage", "[physical]") {
  const Plan plan = plan_of({5, 7, 6}, {5, 7, 6});  // P = 5, 7, 6
  const RunCounters rc = dense_run(plan);
  for (BusModel m : {BusModel::ideal, BusModel::repeated, BusModel::rc, BusModel::tree}) {
    CAPTURE(to_string(m));
    PhysicalParams p = round_params(m);
    p.timing.clock = ClockMode::per_stage;
    const PhysicalResult r = model(plan, rc, p);
    double seconds = 0;
    for (int s = 0; s < 3; ++s) {
      const int a = plan.stages[s].axis, b = bus_axis_of(a);
      const double na = double(plan.mesh[a - 1]), nb = double(plan.mesh[b - 1]);
      const double x = expected_line(m, nb, mm_along(b, nb));
      const double y = expected_line(m, na, mm_along(a, na));
      const double period = x + y + 500 + 7;
      CHECK(r.stages[s].period_ps == Approx(period).epsilon(1e-12));
      CHECK(r.stages[s].cycles() == std::uint64_t(plan.stages[s].n()));
      seconds += static_cast<double>(plan.stages[s].n()) * period * 1e-12;
    }
    CHECK(r.seconds == Approx(seconds).epsilon(1e-12));
  }
}

TEST_CASE("pipelined buses hold one hop per period and pay n - 1 cycles of fill", "[physical]") {
  const Plan plan = plan_of({4, 6, 3}, {4, 6, 3});
  const RunCounters rc = dense_run(plan);
  PhysicalParams p = round_params(BusModel::pipelined);
  p.timing.clock = ClockMode::per_stage;
  const PhysicalResult r = model(plan, rc, p);
  for (int s = 0; s < 3; ++s) {
    const int a = plan.stages[s].axis, b = bus_axis_of(a);
    const double hop_x = 20 + mm_along(b, 1) * 100, hop_y = 20 + mm_along(a, 1) * 100;
    CHECK(r.stages[s].period_ps == Approx(hop_x + hop_y + 507).epsilon(1e-12));
    const std::uint64_t fill = (plan.mesh[a - 1] - 1) + (plan.mesh[b - 1] - 1);
    CHECK(r.stages[s].fill_cycles == fill);
    CHECK(r.stages[s].cycles() == std::uint64_t(plan.stages[s].n()) + fill);
  }
}

TEST_CASE("a global clock runs every stage at the slowest stage's period", "[physical]") {
  const Plan plan = plan_of({3, 9, 4}, {3, 9, 4});
  const RunCounters rc = dense_run(plan);
  PhysicalParams p = round_params(BusModel::repeated);
  const PhysicalResult per = [&] {
    PhysicalParams q = p;
    q.timing.clock = ClockMode::per_stage;
    return model(plan, rc, q);
  }();
  const PhysicalResult glob = model(plan, rc, p);
  double slowest = 0, seconds = 0;
  for (const StagePhysical& s : per.stages) slowest = std::max(slowest, s.period_ps);
  for (size_t s = 0; s < 3; ++s) {
    CHECK(glob.stages[s].period_ps == slowest);
    seconds += double(per.stages[s].cycles()) * slowest * 1e-12;
  }
  CHECK(glob.period_ps == slowest);
  CHECK(glob.seconds == Approx(seconds).epsilon(1e-12));
  CHECK(glob.stages[glob.critical_stage].period_ps == slowest);
  CHECK(glob.seconds >= per.seconds);
}

TEST_CASE("actuator heads and control hand-overs add periods", "[physical]") {
  const Plan plan = plan_of({5, 7, 6}, {5, 7, 6});
  RunCounters rc = dense_run(plan);
  rc.steps[1][Counter::x_bus_sends] = 2;  // an ESOP step of stage 0 with two elements
  PhysicalParams p = round_params(BusModel::ideal);
  p.timing.clock = ClockMode::per_stage;
  p.timing.actuator_heads = 3;
  p.timing.control_cycles = 4;
  const PhysicalResult r = model(plan, rc, p);
  for (int s = 0; s < 3; ++s) {
    const std::uint64_t v = std::uint64_t(plan.stages[s].n());  // a row's elements
    std::uint64_t stream = v * ((v + 2) / 3);
    if (s == 0) stream -= (v + 2) / 3 - 1;  // the two-element step takes one period
    CHECK(r.stages[s].stream_cycles == stream);
    CHECK(r.stages[s].control_cycles == (s == 0 ? 0u : 4u));
  }
  CHECK(r.step_ps[1] == Approx(507.0));
  CHECK(r.step_ps[0] == Approx(507.0 * double((plan.stages[0].n() + 2) / 3)));
}

TEST_CASE("folding multiplies the MAC term by the busiest cell's MACs", "[physical]") {
  const Plan plan = plan_of({8, 6, 5}, {8, 6, 5}, ext3{3, 6, 2});  // fold 3, 1, 3
  REQUIRE(plan.folded());
  const RunCounters rc = dense_run(plan);
  PhysicalParams p = round_params(BusModel::ideal);
  p.timing.clock = ClockMode::per_stage;
  const PhysicalResult r = model(plan, rc, p);
  for (int s = 0; s < 3; ++s) {
    std::uint64_t block = 1;  // the busiest physical cell's virtual cells in W
    for (int d = 0; d < 3; ++d)
      block *= std::uint64_t(std::min(plan.fold[d], plan.stages[s].out_shape[d]));
    CHECK(r.stages[s].busiest == block);
    CHECK(r.stages[s].period_ps == Approx(500.0 * double(block) + 7));
  }
}

TEST_CASE("a pipelined MAC issues a sub-step a cycle and waits for each W's chain", "[physical]") {
  // doc/physical.md §2.2: the MAC term is max(busiest x sub-steps x issue, chain x latency),
  // the chain one FMA a real MAC's W, two per component of a complex MAC's.
  const Plan plan = plan_of({8, 6, 5}, {8, 6, 5}, ext3{3, 6, 2});  // fold 3, 1, 3
  for (const bool complex_data : {false, true})
    for (const double latency : {0.0, 700.0, 5000.0}) {
      CAPTURE(complex_data, latency);
      const int sub = complex_data ? 4 : 1;
      PhysicalParams p = round_params(BusModel::ideal);
      p.timing.clock = ClockMode::per_stage;
      p.timing.mac_latency_ps[0] = latency;
      const PhysicalResult r = physical_model(plan, dense_run(plan, sub), p,
                                              parse_mesh_file("").energy_for(complex_data),
                                              CellMode::fp64, complex_data);
      for (int s = 0; s < 3; ++s) {
        const double issue = 500.0 * sub * double(r.stages[s].busiest);
        const double chain = complex_data ? 2 : 1;
        CHECK(r.stages[s].path.mac == Approx(std::max(issue, chain * latency)));
      }
    }
}

TEST_CASE("the ideal model reproduces today's steps, cycles and energies", "[physical]") {
  const EnergyModel em = parse_mesh_file("").energy;
  struct Case {
    std::optional<ext3> mesh;
    CellMode mode;
    bool complex_data;
  };
  // m3xu-fp32 takes 4 sub-steps per real MAC and 16 per complex one (M3XU Corollaries 2, 3).
  for (const auto& [mesh, mode, complex_data] :
       std::vector<Case>{{std::nullopt, CellMode::fp64, false},
                         {ext3{3, 4, 2}, CellMode::fp64, false},
                         {std::nullopt, CellMode::m3xu_fp32, false},
                         {ext3{2, 7, 3}, CellMode::m3xu_fp32, true}}) {
    const int substeps = triada::substeps(mode, complex_data);
    CHECK(substeps == (mode == CellMode::fp64 ? 1 : complex_data ? 16 : 4));
    const Plan plan = plan_of({5, 7, 6}, {4, 7, 3}, mesh);
    const RunCounters rc = dense_run(plan, substeps);
    PhysicalParams p = round_params(BusModel::ideal);
    p.timing.clock = ClockMode::per_stage;
    p.timing.overhead_ps = 0;
    for (double& m : p.timing.mac_ps) m = 1;  // one time unit per sub-step
    // Leakage of one cell for one 1 ps cycle = static_pj_per_cell_step.
    p.energy.leakage_uw_per_cell = em.static_pj_per_cell_step * 1e6;
    EnergyModel run_em = em;
    const PhysicalResult r = physical_model(plan, rc, p, run_em, mode, complex_data);
    CHECK(r.seconds * 1e12 == Approx(double(rc.total_cycles())).epsilon(1e-12));
    for (size_t s = 0; s < 3; ++s) {
      CHECK(r.stages[s].cycles() == rc.stages[s].steps);
      CHECK(r.stages[s].seconds * 1e12 == Approx(double(rc.stages[s].cycles)).epsilon(1e-12));
    }
    for (size_t i = 0; i < rc.steps.size(); ++i)
      CHECK(r.step_ps[i] == Approx(double(rc.steps[i].cycles() * std::uint64_t(substeps))));
    const std::uint64_t cells = std::uint64_t(plan.mesh[0] * plan.mesh[1] * plan.mesh[2]);
    const EnergyBreakdown today = energy_of(rc.stages, run_em, cells);
    CHECK(r.energy.total() * 1e12 == Approx(today.total()).epsilon(1e-12));
    CHECK(r.energy.static_ * 1e12 == Approx(today.static_).epsilon(1e-12));
  }
}

TEST_CASE("a complex fp64 MAC costs four real FMAs in time and in energy", "[physical]") {
  // Four real FMAs (doc/design.md §4) on the one FMA unit of an fp64 cell: the same mesh
  // and counters on complex data take four times the MAC's sub-step and its energy.
  const MeshConfig cfg = parse_mesh_file("");
  for (const std::optional<ext3>& mesh : {std::optional<ext3>{}, std::optional<ext3>{{3, 4, 2}}}) {
    const Plan plan = plan_of({5, 7, 6}, {4, 7, 3}, mesh);
    PhysicalParams p;
    p.timing.mac_latency_ps.fill(0);  // the issues alone (the chain: the case above)
    const EnergyModel real = cfg.energy_for(false), cplx = cfg.energy_for(true);
    CHECK(cplx.mac_pj() == 4 * real.mac_pj());
    const PhysicalResult a =
        physical_model(plan, dense_run(plan, 1), p, real, CellMode::fp64, false);
    const PhysicalResult b =
        physical_model(plan, dense_run(plan, 4), p, cplx, CellMode::fp64, true);
    CHECK(b.energy.mac == Approx(4 * a.energy.mac).epsilon(1e-12));
    for (size_t s = 0; s < 3; ++s) CHECK(b.stages[s].path.mac == Approx(4 * a.stages[s].path.mac));
    // the peak counts real FMAs: the complex cell does four a MAC, each period
    const double cells = double(plan.mesh[0] * plan.mesh[1] * plan.mesh[2]);
    for (const PhysicalResult* r : {&a, &b})
      CHECK(r->peak_flops == Approx(2 * cells * double(r->stages[r->critical_stage].busiest) *
                                    (r == &b ? 4 : 1) / (r->period_ps * 1e-12)));
  }
}

TEST_CASE("wire energy is proportional to the line length", "[physical]") {
  const Plan plan = plan_of({5, 7, 6}, {5, 7, 6});
  const RunCounters rc = dense_run(plan);
  PhysicalParams p = round_params(BusModel::repeated);
  p.energy.model = WireEnergy::wire;
  p.energy.driver_fj_per_bit = 0;
  p.energy.wire_fj_per_bit_mm = 100;
  const PhysicalResult one = model(plan, rc, p);
  p.area.cell_pitch_um = 200;
  p.area.tier_pitch_um = 20;
  const PhysicalResult two = model(plan, rc, p);
  CHECK(two.energy.x_bus == Approx(2 * one.energy.x_bus).epsilon(1e-12));
  CHECK(two.energy.y_bus == Approx(2 * one.energy.y_bus).epsilon(1e-12));
  // By hand: a Y send drives one line of P_a cells; an X element the P_c lines of its plane.
  double y = 0, x = 0;
  for (int s = 0; s < 3; ++s) {
    const int a = plan.stages[s].axis, b = bus_axis_of(a), c = 6 - a - b;
    y += double(rc.stages[s][Counter::y_bus_sends]) * 64 * 100e-15 *
         mm_along(a, double(plan.mesh[a - 1]));
    x += double(rc.stages[s][Counter::x_bus_sends]) * double(plan.mesh[c - 1]) * 64 * 100e-15 *
         mm_along(b, double(plan.mesh[b - 1]));
  }
  CHECK(one.energy.y_bus == Approx(y).epsilon(1e-12));
  CHECK(one.energy.x_bus == Approx(x).epsilon(1e-12));
}

TEST_CASE("the derived cell pitch solves the cell's area equation", "[physical]") {
  const Plan plan = plan_of({4, 4, 4}, {4, 4, 4});
  PhysicalParams p;  // defaults, stacked
  const PhysicalResult r = model(plan, dense_run(plan), p);
  const double logic = 53940 + (2 + 2) * 64 * 4.522, tracks = 2 * 64 * 0.28, via = 64 * 25.0;
  const double pitch = r.cell_pitch_um;
  CHECK(pitch * pitch == Approx(logic + tracks * pitch + via).epsilon(1e-12));
  CHECK(r.area.total() == Approx(64 * pitch * pitch * 1e-6).epsilon(1e-12));
  CHECK(r.area.footprint == Approx(16 * pitch * pitch * 1e-6).epsilon(1e-12));
  CHECK(r.hop_um[2] == 20.0);
}

TEST_CASE("technology factors follow the published scaling fits", "[physical]") {
  const NodeScaling base = scaling_from_45nm(45, 1.0);
  CHECK(base.delay == 1.0);
  CHECK(base.energy == 1.0);
  CHECK(base.area == 1.0);
  // Stillmaker and Baas's corrigendum, worked example: the 32 nm HP energy fit at 0.9 V is
  // 0.4571 (and 45 nm's at 1.0 V is 1.018 - 0.3107 + 0.1539).
  CHECK(scaling_from_45nm(32, 0.9).energy * (1.018 - 0.3107 + 0.1539) ==
        Approx(0.4571).epsilon(1e-4));
  for (int i = 1; i < int(technology_nodes().size()); ++i) {  // smaller nodes: all shrink
    const NodeScaling s =
        scaling_from_45nm(technology_nodes()[i], nominal_vdd(technology_nodes()[i]));
    const NodeScaling prev =
        scaling_from_45nm(technology_nodes()[i - 1], nominal_vdd(technology_nodes()[i - 1]));
    CAPTURE(s.node_nm);
    CHECK(s.area < prev.area);
    CHECK(s.energy < prev.energy);
    CHECK(s.delay < 1.0);
  }
  CHECK_THROWS_AS(scaling_from_45nm(22, 0.8), config_error);
}

TEST_CASE("the physical keys are validated with the key named", "[physical][options]") {
  const auto fails = [](const std::string& ini_text, const std::string& part) {
    const std::string ini = "/tmp/triada_unit_physical.ini";
    std::ofstream(ini) << ini_text;
    CAPTURE(ini_text);
    CHECK_THROWS_WITH(parse_mesh_file(ini), Catch::Contains(part));
  };
  fails("[timing]\ndriver_ps = -1\n",
        "[timing] driver_ps: expected 0 or a number in [1e-6, 1e9] (ps)");
  fails("[timing]\nwire_ps_per_mm = nan\n", "[timing] wire_ps_per_mm");
  fails("[timing]\nmac_ps_fp64 = 0\n", "[timing] mac_ps_fp64: expected a number in [1e-6, 1e9]");
  fails("[timing]\nbus_model = wireless\n", "expected a bus model ideal | repeated");
  fails("[timing]\nclock = fast\n", "[timing] clock");
  fails("[timing]\nactuator_heads = 0\n", "[timing] actuator_heads");
  fails("[technology]\nnode_nm = 22\n", "[technology] node_nm: expected one of 45, 32, 20");
  fails("[technology]\nnode_nm = 7nm\n", "[technology] node_nm");
  fails("[technology]\nvdd = 3\n", "[technology] vdd");
  fails("[technology]\narea_factor = -0.5\n", "[technology] area_factor");
  fails("[energy]\nbus_model = optical\n", "[energy] bus_model");
  fails("[area]\nlayout = round\n", "[area] layout");
  fails("[area]\ncell_pitch_um = 0\n", "[area] cell_pitch_um");
  fails("[area]\nbit_um2 = inf\n", "[area] bit_um2");
}

TEST_CASE("meshcfg/default.ini holds the physical model's built-in defaults", "[physical]") {
  const MeshConfig file = parse_mesh_file(TRIADA_SOURCE_DIR "/meshcfg/default.ini");
  CHECK(file.physical == PhysicalParams());
  CHECK(parse_mesh_file("").physical == PhysicalParams());
  std::ifstream in(TRIADA_SOURCE_DIR "/meshcfg/default.ini");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const ModePhysical& m : kModePhysicalTable) {
    CHECK_THAT(text, Catch::Contains(m.mac_ps_key));
    CHECK_THAT(text, Catch::Contains(m.mac_um2_key));
  }
}
