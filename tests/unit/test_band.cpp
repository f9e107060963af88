// The band (doc/physical.md §4.6): the model at its optimistic and pessimistic corners
// brackets the nominal result, each corner moves the constants its table row says, and
// only a run that prices a chip or its memory reports a range.
#include <algorithm>

#include "config/options.hpp"
#include "counters/counters.hpp"
#include "physical/band.hpp"
#include "physical/chip.hpp"
#include "report/physical_json.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

Plan plan_on(ext3 n, ext3 mesh) {  // one rank, the chip sizer's plan
  ChipProblem q;
  q.in_shape = q.out_shape = n;
  return chip_plan(q, mesh);
}

PhysicalParams chip_params() {
  PhysicalParams p;
  p.technology.node_nm = 7;
  p.chip.mesh = ext3{4, 3, 2};
  p.memory.kind = MemoryKind::hbm3;
  p.memory.overlap = Overlap::double_buffer;
  return p;
}

}  // namespace

TEST_CASE("the corners bracket the nominal time and energy", "[physical][band]") {
  const MeshConfig cfg = parse_mesh_file("");
  for (const bool complex_data : {false, true})
    for (const ext3& n : {ext3{8, 6, 4}, ext3{64, 48, 40}}) {
      CAPTURE(complex_data, n);
      const Plan plan = plan_on(n, {4, 3, 2});
      const RunCounters rc = dense_run_counters(plan, substeps(CellMode::fp64, complex_data));
      const EnergyModel em = cfg.energy_for(complex_data);
      const PhysicalResult r =
          with_range(plan, rc, chip_params(), em, CellMode::fp64, complex_data);
      REQUIRE(r.range);
      CHECK(r.range->seconds[1] == r.seconds);
      CHECK(r.range->energy_j[1] == r.energy.total());
      CHECK(r.range->seconds[0] < r.seconds);
      CHECK(r.seconds < r.range->seconds[2]);
      CHECK(r.range->energy_j[0] < r.energy.total());
      CHECK(r.energy.total() < r.range->energy_j[2]);
      const nlohmann::json j = physical_json(r, chip_params(), plan);
      CHECK(j["range"]["seconds"][0] == r.range->seconds[0]);
      CHECK(j["range"]["constants"].size() == band_constants().size());
    }
}

TEST_CASE("a corner moves each constant as its row says", "[physical][band]") {
  const PhysicalParams p = chip_params();
  EnergyModel em;
  em[Counter::macs] = 100;
  for (const Corner c : {Corner::optimistic, Corner::pessimistic}) {
    PhysicalParams q = p;
    EnergyModel e = em;
    at_corner(c, CellMode::fp64, q, e);
    const bool o = c == Corner::optimistic;
    // the rows, written here from doc/physical.md §6.1
    CHECK(q.timing.mac_ps[0] == Approx(p.timing.mac_ps[0] * (o ? 1.98 / 3.74 : 1.98 / 1.41)));
    CHECK(q.timing.mac_latency_ps[0] ==
          Approx(p.timing.mac_latency_ps[0] * (o ? 1.98 / 3.74 : 1.98 / 1.41)));
    CHECK(e[Counter::macs] == Approx(100 * (o ? 18.4 / 108.9 : 43.7 / 36)));
    CHECK(q.chip.leakage_mw_per_mm2 == Approx(p.chip.leakage_mw_per_mm2 * (o ? 0.5 : 2)));
    CHECK(q.chip.clock_fraction == (o ? 0 : 0.4));
    CHECK(q.memory.efficiency == (o ? 1 : 0.83));
    CHECK(q.memory.host_pj_per_bit == Approx(p.memory.host_pj_per_bit * (o ? 0.5 : 2)));
    // the die stays the nominal one
    CHECK(q.area == p.area);
    CHECK(q.chip.sram_port_factor == p.chip.sram_port_factor);
  }
}

TEST_CASE("a bare mesh reports no range", "[physical][band]") {
  const Plan plan = plan_on({8, 6, 4}, {8, 6, 4});
  const PhysicalResult r = with_range(plan, dense_run_counters(plan, 1), PhysicalParams{},
                                      parse_mesh_file("").energy, CellMode::fp64, false);
  CHECK_FALSE(r.range);
  CHECK_FALSE(physical_json(r, PhysicalParams{}, plan).contains("range"));
}
