// The chip around the mesh (doc/physical.md §4.1-4.3): the sizer against a brute-force
// search with its own area formula written here from the doc's equations, the budgets
// honoured, the cells' storage and the actuators' memories in closed form, and the bare
// mesh unchanged without [chip] keys.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "counters/counters.hpp"
#include "physical/chip.hpp"
#include "physical/physical_model.hpp"
#include "report/physical_json.hpp"
#include "support/catch.hpp"
#include "support/key_errors.hpp"

using namespace triada;

namespace {

ChipProblem problem(ext3 n, ext3 k, CellMode mode = CellMode::fp64) {
  ChipProblem q;
  q.in_shape = n;
  q.out_shape = k;
  q.mode = mode;
  q.energy = EnergyModel{};
  return q;
}

PhysicalResult run_on(const ChipProblem& q, const ext3& mesh, const PhysicalParams& p) {
  const Plan plan = chip_plan(q, mesh);
  return physical_model(plan, dense_run_counters(plan, 1), p, q.energy, q.mode, q.complex_data);
}

// The die of doc/physical.md §4.1-4.3, stacked layout, written from the doc: the cell's logic
// (MAC, two operand latches), its 2 b words of storage, its tracks and via, its pitch; the
// actuators' N_s K_s words; the spare cells; the overhead share of what is built; the
// outline (one tier, spares along the long edge, the rest a band along it).
struct OwnDie {
  double mm2 = 0, leakage_w = 0;
  double short_mm = 0, long_mm = 0;
};
OwnDie own_die(const ChipProblem& q, const ext3& P, const PhysicalParams& p) {
  const NodeScaling s = scaling_from_45nm(p.technology.node_nm, nominal_vdd(p.technology.node_nm));
  const double bits = q.mode == CellMode::fp64 ? 64 : 32;
  double b = 1, cells = 1, act_bits = 0;
  for (int d = 0; d < 3; ++d) {
    const index_t v = std::max(q.in_shape[d], q.out_shape[d]);
    b *= double((v + P[d] - 1) / P[d]);
    cells *= double(P[d]);
    act_bits += double(q.in_shape[d]) * double(q.out_shape[d]) * bits;
  }
  const ChipParams& c = p.chip;
  const bool sram = 2 * b > double(c.register_words);
  const double store = s.area * 2 * b * bits * (sram ? c.sram_um2_per_bit : p.area.bit_um2);
  const double logic = s.area * (p.area.mac_um2[0] + 2 * bits * p.area.bit_um2);
  const double t = 2 * bits * p.area.wire_pitch_um * std::sqrt(s.area);
  const double via = bits * p.area.via_um2_per_bit;
  const double pitch = (t + std::sqrt(t * t + 4 * (logic + store + via))) / 2;
  OwnDie d;
  const double array = cells * (logic + store + t * pitch + via) * 1e-6;
  const double actuators = act_bits * c.sram_um2_per_bit * s.area * 1e-6;
  const double built = array * (1 + c.spare_fraction) + actuators;
  const double overhead = built * c.overhead_fraction / (1 - c.overhead_fraction);
  d.mm2 = built + overhead;
  const double x = double(P[0]) * pitch * 1e-3, y = double(P[1]) * pitch * 1e-3;
  d.long_mm = std::max(x, y) * (1 + c.spare_fraction);
  d.short_mm = std::min(x, y) + (actuators + overhead) / double(P[2]) / d.long_mm;
  const double sram_bits = act_bits + (sram ? cells * 2 * b * bits : 0);
  d.leakage_w = (sram_bits * c.sram_leakage_pw_per_bit * 1e-12 +
                 cells * p.energy.leakage_uw_per_cell * 1e-6) *
                s.power;
  return d;
}

// Every mesh P_d <= max(N_d, K_d): the least time among those that fit, ties fewer cells.
std::optional<ext3> brute_force(const ChipProblem& q, const PhysicalParams& p) {
  std::optional<ext3> best;
  double best_s = 0, best_cells = 0;
  const index_t v1 = std::max(q.in_shape[0], q.out_shape[0]);
  const index_t v2 = std::max(q.in_shape[1], q.out_shape[1]);
  const index_t v3 = std::max(q.in_shape[2], q.out_shape[2]);
  for (index_t a = 1; a <= v1; ++a)
    for (index_t b = 1; b <= v2; ++b)
      for (index_t c = 1; c <= v3; ++c) {
        const ext3 m{a, b, c};
        if (p.area.layout == Layout::stacked && c > p.chip.max_tiers) continue;
        const OwnDie d = own_die(q, m, p);
        if (d.mm2 > *p.chip.area_mm2 * (1 - 1e-12)) continue;
        if (std::min(d.short_mm, d.long_mm) > 26 || std::max(d.short_mm, d.long_mm) > 33) continue;
        if (p.chip.power_w && d.leakage_w >= *p.chip.power_w) continue;
        const double t = run_on(q, m, p).seconds, cells = double(a * b * c);
        if (!best || t < best_s || (t == best_s && cells < best_cells)) {
          best = m;
          best_s = t;
          best_cells = cells;
        }
      }
  return best;
}

PhysicalParams budget(double mm2, std::optional<double> w = std::nullopt) {
  PhysicalParams p;
  p.technology.node_nm = 7;
  p.chip.area_mm2 = mm2;
  p.chip.power_w = w;
  p.chip.register_words = 8;  // small folds reach SRAM
  return p;
}

}  // namespace

TEST_CASE("the chip sizer finds the brute-force search's mesh", "[chip]") {
  for (const auto& [n, k] :
       std::vector<std::pair<ext3, ext3>>{{{6, 5, 4}, {6, 5, 4}}, {{4, 7, 3}, {5, 2, 6}}}) {
    const ChipProblem q = problem(n, k);
    const double full = own_die(q, {6, 7, 6}, budget(1e9)).mm2;
    for (double share : {0.02, 0.05, 0.1, 0.3, 0.6, 1.0, 2.0}) {
      const PhysicalParams p = budget(full * share);
      CAPTURE(n, k, share);
      const std::optional<ext3> want = brute_force(q, p);
      if (!want) {
        CHECK_THROWS_AS(size_chip(q, p), config_error);
        continue;
      }
      CHECK(size_chip(q, p) == *want);
    }
  }
}

TEST_CASE("a stacked die has at most chip.max_tiers tiers; a planar one is one die", "[chip]") {
  const ChipProblem q = problem({6, 5, 4}, {6, 5, 4});
  for (index_t tiers : {1, 2, 3, 4}) {
    PhysicalParams p = budget(1e9);  // the full mesh fits the area
    p.chip.max_tiers = tiers;
    CAPTURE(tiers);
    const ext3 m = size_chip(q, p);
    CHECK(m[2] <= tiers);
    CHECK(m == *brute_force(q, p));
    if (tiers < 4) {
      p.chip.mesh = ext3{6, 5, tiers + 1};
      CHECK_THROWS_WITH(chip_mesh(q, p, std::nullopt),
                        Catch::Contains("stacks " + std::to_string(tiers + 1) + " tiers") &&
                            Catch::Contains("chip.max_tiers = " + std::to_string(tiers)));
      p.chip.mesh.reset();
      const PhysicalResult r = run_on(q, m, p);
      CHECK_THAT(r.chip->bound, Catch::Contains("chip.max_tiers"));
    }
    p.area.layout = Layout::planar;
    CHECK(size_chip(q, p) == *brute_force(q, p));
  }
  PhysicalParams planar = budget(1e9);
  planar.area.layout = Layout::planar;
  planar.chip.max_tiers = 1;
  CHECK(size_chip(q, planar)[2] > 1);  // one die: P3 is not a tier count
}

TEST_CASE("the chip's area and power never exceed the budgets", "[chip]") {
  const ChipProblem q = problem({12, 10, 8}, {12, 10, 8});
  const double full = run_on(q, {12, 10, 8}, budget(1e9)).area.total();
  for (double share : {0.05, 0.2, 0.5, 1.5})
    for (double watts : {1e-3, 0.05, 1.0, 100.0}) {
      const PhysicalParams p = budget(full * share, watts);
      CAPTURE(share, watts);
      std::optional<ext3> mesh;
      try {
        mesh = chip_mesh(q, p, std::nullopt);
      } catch (const config_error&) {
        continue;  // nothing fits: the refusal is tested below
      }
      const PhysicalResult r = run_on(q, *mesh, p);
      REQUIRE(r.chip);
      CHECK(r.area.total() <= *p.chip.area_mm2);
      CHECK(r.power_w <= watts);
      const PhysicalResult uncapped = run_on(q, *mesh, budget(full * share));
      CHECK(r.seconds == Approx(uncapped.seconds * r.chip->stretch).epsilon(1e-12));
      CHECK(r.chip->stretch >= 1);
      if (uncapped.power_w > watts) {
        CHECK(r.chip->stretch > 1);
        CHECK(r.power_w == Approx(watts).epsilon(1e-9));
      }
    }
}

TEST_CASE("no mesh fits: one line saying what the storage needs", "[chip]") {
  const ChipProblem q = problem({64, 64, 64}, {64, 64, 64});
  PhysicalParams p = budget(0.5);
  p.chip.register_words = 32;
  // the cells' V and W in multi-ported SRAM, the actuators' C_s single-port
  const double cell_bits = 2.0 * 64 * 64 * 64 * 64, actuator_bits = 3.0 * 64 * 64 * 64;
  const double need = (cell_bits * p.chip.sram_port_factor + actuator_bits) *
                      p.chip.sram_um2_per_bit * 0.059 * 1e-6;
  CHECK_THROWS_WITH(size_chip(q, p), Catch::Contains("fits chip.area_mm2 = 0.5 mm^2") &&
                                         Catch::Contains("storage alone") &&
                                         Catch::Contains(std::to_string(need).substr(0, 4)));
}

TEST_CASE("a cell's storage: flip-flops up to register_words, SRAM beyond", "[chip]") {
  ChipParams c;
  c.register_words = 12;
  const AreaParams a;
  const NodeScaling s = scaling_from_45nm(45, 1.0);
  const CellStorage regs = cell_storage(6, 64, c, a, s);  // 12 words
  CHECK(regs.words == 12);
  CHECK(regs.bits == 768);
  CHECK_FALSE(regs.sram);
  CHECK(regs.um2 == Approx(768 * a.bit_um2));
  CHECK(regs.fj_per_mac == 0);
  const CellStorage sram = cell_storage(12, 32, c, a, s);  // 24 words of 32 bits
  CHECK(sram.sram);
  CHECK(sram.um2 == Approx(768 * c.sram_um2_per_bit * c.sram_port_factor));  // ports
  CHECK(sram.fj_per_mac == Approx(3 * 32 * c.sram_fj_per_bit));
  CHECK(sram.leakage_w == Approx(768 * c.sram_leakage_pw_per_bit * 1e-12));
  const NodeScaling n7 = scaling_from_45nm(7, 0.7);
  const CellStorage small = cell_storage(12, 32, c, a, n7);
  CHECK(small.um2 == Approx(sram.um2 * n7.area));
  CHECK(small.fj_per_mac == Approx(sram.fj_per_mac * n7.energy));
  CHECK(small.leakage_w == Approx(sram.leakage_w * n7.power));
}

TEST_CASE("the actuators' memories hold N_s x K_s words and stream heads words a period",
          "[chip]") {
  const ChipProblem q = problem({4, 5, 6}, {3, 5, 2});
  PhysicalParams p;
  p.chip.mesh = ext3{2, 5, 3};
  const PhysicalResult r = run_on(q, *p.chip.mesh, p);
  REQUIRE(r.chip);
  double words = 0;
  for (const ActuatorMemory& m : r.chip->actuators) {
    const int d = m.axis - 1;
    CHECK(m.words == std::uint64_t(q.in_shape[d] * q.out_shape[d]));
    CHECK(m.heads == std::uint64_t(std::max(q.in_shape[d], q.out_shape[d])));
    CHECK(m.gbytes_per_s == Approx(double(m.heads) * 8 / r.period_ps * 1e3));
    words += double(m.words);
  }
  CHECK(r.area.actuator_memories == Approx(words * 64 * p.chip.sram_um2_per_bit * 1e-6));
  CHECK(r.energy.actuator_memories ==
        Approx(double(dense_run_counters(chip_plan(q, *p.chip.mesh)).total(Counter::x_bus_sends)) *
               64 * p.chip.sram_fj_per_bit * 1e-15));
  // the overhead is its share of what is built, whatever the budget; the spares theirs of
  // the cell array
  CHECK(r.area.overhead == Approx(0.2 * r.area.total()));
  CHECK(r.area.spares ==
        Approx(p.chip.spare_fraction * (r.area.cells + r.area.storage + r.area.buses)));
  CHECK(r.chip->bound == "given (chip.mesh)");
}

TEST_CASE("actuators of chip.actuator_kib: that capacity priced, a larger C_s not held", "[chip]") {
  const ChipProblem q = problem({4, 5, 6}, {3, 5, 2});  // C_s of 12, 25 and 12 words
  PhysicalParams p;
  p.chip.mesh = ext3{2, 5, 2};
  p.chip.actuator_kib = 0.125;  // 1024 bits: 16 words of 64 bits
  const PhysicalResult r = run_on(q, *p.chip.mesh, p);
  REQUIRE(r.chip);
  for (const ActuatorMemory& m : r.chip->actuators) {
    const int d = m.axis - 1;
    CAPTURE(m.axis);
    CHECK(m.words == 16);
    CHECK(m.coefficient_words == std::uint64_t(q.in_shape[d] * q.out_shape[d]));
    CHECK(m.holds == (m.axis != 2));
  }
  CHECK(r.area.actuator_memories == Approx(3 * 1024 * p.chip.sram_um2_per_bit * 1e-6));
  const nlohmann::json j = physical_json(r, p, chip_plan(q, *p.chip.mesh));
  CHECK(j["chip"]["actuator_kib"] == 0.125);
  for (const nlohmann::json& m : j["chip"]["actuator_memories"]) {
    CHECK(m["holds_coefficients"] == (m["axis"] != 2));
    CHECK(m["coefficient_words"] == (m["axis"] == 2 ? 25 : 12));
  }
}

TEST_CASE("without [chip] keys the physical section is the bare mesh's", "[chip]") {
  const ChipProblem q = problem({8, 6, 4}, {8, 6, 4});
  for (const ext3& mesh : {ext3{8, 6, 4}, ext3{3, 2, 2}}) {
    const Plan plan = chip_plan(q, mesh);
    const RunCounters rc = dense_run_counters(plan, 1);
    const PhysicalParams bare;
    PhysicalParams other;  // the chip's constants alone change nothing
    other.chip.sram_um2_per_bit = 99;
    other.chip.sram_fj_per_bit = 99;
    other.chip.register_words = 0;
    other.chip.overhead_fraction = 0.5;
    const PhysicalResult r = physical_model(plan, rc, bare, q.energy, q.mode, false);
    const nlohmann::json j = physical_json(r, bare, plan);
    CHECK_FALSE(r.chip);
    CHECK_FALSE(j.contains("chip"));
    CHECK(j == physical_json(physical_model(plan, rc, other, q.energy, q.mode, false), bare, plan));
    std::vector<std::string> keys;
    for (const auto& [k, v] : j["area_mm2"].items()) keys.push_back(k);
    CHECK(keys == std::vector<std::string>{"buses", "cells", "footprint", "total"});
    CHECK(j["energy_j"]["breakdown"].size() == 4);
    // the bare cell: MAC and 2 b + 2 registers of 64 bits (doc/physical.md §4)
    const double b = double(plan.fold[0] * plan.fold[1] * plan.fold[2]);
    const double cells = double(mesh[0] * mesh[1] * mesh[2]);
    CHECK(r.area.cells ==
          Approx(cells * (bare.area.mac_um2[0] + (2 * b + 2) * 64 * bare.area.bit_um2) * 1e-6));
  }
}

TEST_CASE("bad [chip] keys give one clear line", "[chip][options]") {
  const auto fails = test::refuses_key;
  fails("chip.area_mm2", "-5", "--chip.area_mm2");
  fails("chip.area_mm2", "nan", "--chip.area_mm2");
  fails("chip.area_mm2", "0", "--chip.area_mm2");
  fails("chip.power_w", "0", "--chip.power_w");
  fails("chip.power_w", "inf", "--chip.power_w");
  fails("chip.overhead_fraction", "1", "--chip.overhead_fraction");
  fails("chip.overhead_fraction", "-0.1", "--chip.overhead_fraction");
  fails("chip.mesh", "4,0,4", "--chip.mesh");
  fails("chip.mesh", "big", "--chip.mesh");
  fails("chip.sram_um2_per_bit", "0", "--chip.sram_um2_per_bit");
  fails("chip.register_words", "-1", "--chip.register_words");
  fails("chip.max_tiers", "0", "--chip.max_tiers");
  fails("chip.max_tiers", "2.5", "--chip.max_tiers");
  fails("chip.actuator_kib", "0", "--chip.actuator_kib");
  fails("chip.actuator_kib", "nan", "--chip.actuator_kib");
  fails("chip.size", "1", "chip.size");
  CHECK_THROWS_WITH(mesh_config("", {{"mesh.cells", "2,2,2"}, {"chip.area_mm2", "100"}}),
                    Catch::Contains("--mesh.cells") && Catch::Contains("area_mm2"));
  const MeshConfig ok = mesh_config("", {{"chip.area_mm2", "814"}, {"chip.mesh", "4,4,2"}});
  CHECK(*ok.physical.chip.area_mm2 == 814);
  CHECK(*ok.physical.chip.mesh == ext3{4, 4, 2});
}

TEST_CASE("a die fits the reticle outline; its area does not depend on the budget", "[chip]") {
  const ChipProblem q = problem({12, 10, 8}, {12, 10, 8});
  PhysicalParams p = budget(1e9);
  p.area.layout = Layout::planar;
  const PhysicalResult full = run_on(q, {12, 10, 8}, p);
  REQUIRE(full.chip);
  const auto [lo, hi] = full.chip->outline_mm;
  CHECK(lo <= hi);
  // The outline from the doc: the planar array P1 x P2 P3 cells at the pitch, the spares
  // along its long edge, actuator memories and overhead a band along it.
  const double a = 12 * full.cell_pitch_um * 1e-3, b = 10 * 8 * full.cell_pitch_um * 1e-3;
  const double longer = std::max(a, b) * (1 + p.chip.spare_fraction);
  const double band = (full.area.actuator_memories + full.area.overhead) / longer;
  CHECK(hi == Approx(std::max(longer, std::min(a, b) + band)));
  CHECK(lo == Approx(std::min(longer, std::min(a, b) + band)));
  for (double shrink : {0.3, 0.6, 0.9}) {  // outlines smaller than the full mesh's
    p.chip.max_die_mm = {lo * shrink, hi * shrink};
    CAPTURE(shrink);
    try {
      const ext3 m = size_chip(q, p);
      const PhysicalResult r = run_on(q, m, p);
      CHECK(r.chip->outline_mm[0] <= lo * shrink);
      CHECK(r.chip->outline_mm[1] <= hi * shrink);
    } catch (const config_error& e) {
      CHECK_THAT(e.what(), Catch::Contains("chip.max_die_mm"));
    }
    PhysicalParams given = p;
    given.chip.area_mm2.reset();
    given.chip.mesh = ext3{12, 10, 8};
    CHECK_THROWS_WITH(chip_mesh(q, given, std::nullopt), Catch::Contains("chip.max_die_mm"));
  }
  // The same mesh under two budgets that both hold it: the same die, overhead included.
  PhysicalParams small = budget(full.area.total() * 1.01), large = budget(full.area.total() * 4);
  small.area.layout = large.area.layout = Layout::planar;
  small.chip.mesh = large.chip.mesh = ext3{12, 10, 8};
  CHECK(run_on(q, {12, 10, 8}, small).area.total() == run_on(q, {12, 10, 8}, large).area.total());
}
