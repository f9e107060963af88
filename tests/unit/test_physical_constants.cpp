// The physical model's constants against their sources (doc/physical.md §6): each test runs
// the model at a published configuration and compares its output with the published figure,
// written here from the source, within the figure's printed precision (half its last digit).
// A constant derived from published figures is checked against that arithmetic to the digits
// the constant is written with. Every check runs on the built-in defaults and on
// meshcfg/default.ini read through the config loader, so a change to either fails it.
#include <cmath>
#include <optional>
#include <vector>

#include "config/options.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "physical/offchip.hpp"
#include "physical/physical_model.hpp"
#include "physical/technology.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

// Half the last printed digit of a figure given with `decimals` decimals (negative: tens...).
double half_unit(int decimals) {
  return 0.5 * std::pow(10.0, -decimals);
}

struct Source {
  const char* name;
  MeshConfig config;
};

// The two places the defaults are written: the code and the shipped INI file.
std::vector<Source> sources(CellMode mode = CellMode::fp64) {
  return {{"built-in", parse_mesh_file("", mode)},
          {"meshcfg/default.ini", parse_mesh_file(TRIADA_SOURCE_DIR "/meshcfg/default.ini", mode)}};
}

Plan plan_of(ext3 n, std::optional<ext3> mesh = std::nullopt) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = n;
  r.mesh = mesh;
  r.world_size = 1;
  r.balanced_dims = {1, 1, 1};
  return make_plan(r);
}

struct Run {
  RunCounters rc;
  PhysicalResult r;
};

// A dense run of `plan` in the config's cell mode, priced with `p` (real data).
Run run(const Plan& plan, const MeshConfig& c, const PhysicalParams& p) {
  Run out;
  out.rc = dense_run_counters(plan, substeps(c.cell_mode));
  out.r = physical_model(plan, out.rc, p, c.energy_for(false), c.cell_mode, false);
  return out;
}

double cells_of(const Plan& plan) {
  return double(plan.mesh[0]) * double(plan.mesh[1]) * double(plan.mesh[2]);
}

// The model's energy of one MAC sub-step (pJ) on a small dense run at 45 nm.
double mac_substep_pj(CellMode mode, const Source& s) {
  const Run x = run(plan_of({3, 3, 3}), s.config, s.config.physical);
  return x.r.energy.mac * 1e12 / double(x.rc.total(Counter::macs)) / substeps(mode);
}

// The MAC unit's area (um^2) the model gives a cell of an unfolded bare mesh at 45 nm: the
// cell's logic less its registers (V, W and the two operand latches).
double mac_um2(const Source& s) {
  const Plan plan = plan_of({3, 3, 3});
  const Run x = run(plan, s.config, s.config.physical);
  const double registers_um2 = 4.0 * x.r.word_bits * s.config.physical.area.bit_um2;
  return x.r.area.cells * 1e6 / cells_of(plan) - registers_um2;
}

// The sub-step latency (ps) of the MAC unit on the ideal bus at 45 nm.
double mac_substep_ps(CellMode mode, const Source& s) {
  PhysicalParams p = s.config.physical;
  p.timing.bus_model = BusModel::ideal;
  const Run x = run(plan_of({3, 3, 3}), s.config, p);
  return x.r.stages[0].path.mac / substeps(mode) / double(x.r.stages[0].busiest);
}

}  // namespace

TEST_CASE("Horowitz 45 nm: the MAC units' energy and area are his operations'",
          "[physical][constants]") {
  // M. Horowitz, "Computing's energy problem (and what we can do about it)", ISSCC 2014,
  // paper 1.1, its table of operations at 45 nm, 0.9 V: energy fp16 multiply 1.1 pJ, fp32
  // multiply 3.7 pJ, fp32 add 0.9 pJ (one decimal); area fp16 multiply 1640 um^2, fp32
  // multiply 7700, fp32 add 4184 (integers).
  const double mul16_pj = 1.1, add32_pj = 0.9;
  const double mul16_um2 = 1640, add32_um2 = 4184;
  for (const Source& s : sources(CellMode::fp16)) {
    CAPTURE(s.name);
    // fp16 unit: an fp16 multiply and an fp32 add (fp32 accumulation).
    CHECK(mac_substep_pj(CellMode::fp16, s) ==
          Approx(mul16_pj + add32_pj).margin(2 * half_unit(1)));
    CHECK(mac_um2(s) == Approx(mul16_um2 + add32_um2).margin(2 * half_unit(0)));
  }
}

namespace {

// The scaling tables have no 28 or 22 nm row: their factors interpolated log-linearly in the
// node between the 32 and 20 nm ones (doc/physical.md §6).
NodeScaling between_32_and_20(double node_nm) {
  const NodeScaling a = scaling_from_45nm(32, nominal_vdd(32));
  const NodeScaling b = scaling_from_45nm(20, nominal_vdd(20));
  const double w = std::log(32.0 / node_nm) / std::log(32.0 / 20);
  const auto mix = [w](double x, double y) { return x * std::pow(y / x, w); };
  NodeScaling s;
  s.delay = mix(a.delay, b.delay);
  s.energy = mix(a.energy, b.energy);
  s.area = mix(a.area, b.area);
  return s;
}

// The sub-step a pipelined unit issues at: a cell of a folded mesh issues 512 MACs a step,
// far more than its latency holds back.
double mac_issue_ps(const Source& s) {
  PhysicalParams p = s.config.physical;
  p.timing.bus_model = BusModel::ideal;
  const Run x = run(plan_of({8, 8, 8}, ext3{1, 1, 1}), s.config, p);
  return x.r.stages[0].path.mac / double(x.r.stages[0].busiest);
}

}  // namespace

TEST_CASE("FPMax 28 nm: the fp64 MAC is a measured pipelined DP FMA unit",
          "[physical][constants]") {
  // J. Pu, S. Galal, X. Yang, O. Shacham, M. Horowitz, "FPMax: a 106GFLOPS/W at
  // 217GFLOPS/mm2 Single-Precision FPU, and a 43.7GFLOPS/W at 74.6GFLOPS/mm2 Double-Precision
  // FPU, in 28nm UTBB FDSOI", title and abstract: DP 43.7 GFLOPS/W at 74.6 GFLOPS/mm^2,
  // latency 1.39 ns (two FLOPs an FMA). The issue clock: the H100's 1.98 GHz at 7 nm (its
  // 67 TFLOP/s fp64 on 132 SMs; NVIDIA H100 datasheet and whitepaper).
  const NodeScaling n28 = between_32_and_20(28), n7 = scaling_from_45nm(7, nominal_vdd(7));
  for (const Source& s : sources(CellMode::fp64)) {
    CAPTURE(s.name);
    const double issue_ps = mac_issue_ps(s);
    CHECK(1e3 / (issue_ps * n7.delay) == Approx(1.98).margin(half_unit(2)));  // GHz at 7 nm
    const double flops_per_w = 2 / (mac_substep_pj(CellMode::fp64, s) * 1e-12 * n28.energy);
    CHECK(flops_per_w * 1e-9 == Approx(43.7).margin(half_unit(1)));
    const double mm2 = mac_um2(s) * 1e-6 * n28.area, period_s = issue_ps * 1e-12 * n28.delay;
    CHECK(2 / (mm2 * period_s) * 1e-9 == Approx(74.6).margin(half_unit(1)));
    // unfolded, one MAC a step: the period's MAC term is the unit's latency
    CHECK(mac_substep_ps(CellMode::fp64, s) * n28.delay == Approx(1390).margin(half_unit(-1)));
  }
}

TEST_CASE("M3XU Table III: the fp32 and M3XU units relative to the fp16 unit",
          "[physical][constants]") {
  // Ha et al., "M3XU: Achieving High-Precision and Complex Matrix Multiplication with
  // Low-Precision MXUs", Table III, relative to the FP16 MXU (two decimals): "FP32 w/o FP32C"
  // area 3.55, cycle time 1.00, power 7.97; "M3XU" area 1.41, cycle time 1.21, power 0.69.
  // Energy per sub-step = power x cycle time. Written rounded: 20675, 8212 um^2, 1.67 pJ.
  struct Row {
    CellMode mode;
    double area, cycle, power;
  };
  const double d = half_unit(2);
  for (const Row& row :
       {Row{CellMode::fp32, 3.55, 1.00, 7.97}, Row{CellMode::m3xu_fp32, 1.41, 1.21, 0.69},
        Row{CellMode::m3xu_fp32c, 1.41, 1.21, 0.69},
        Row{CellMode::m3xu_fp32_wide, 1.41, 1.21, 0.69}}) {
    const std::vector<Source> fp16 = sources(CellMode::fp16), unit = sources(row.mode);
    for (size_t i = 0; i < unit.size(); ++i) {
      CAPTURE(unit[i].name, to_string(row.mode));
      const double ps = mac_substep_ps(row.mode, unit[i]) / mac_substep_ps(CellMode::fp16, fp16[i]);
      const double um2 = mac_um2(unit[i]) / mac_um2(fp16[i]);
      const double pj = mac_substep_pj(row.mode, unit[i]) / mac_substep_pj(CellMode::fp16, fp16[i]);
      CHECK(ps == Approx(row.cycle).margin(d));
      CHECK(um2 == Approx(row.area).margin(d));
      CHECK(pj == Approx(row.power * row.cycle).margin(d * (row.power + row.cycle)));
    }
  }
}

TEST_CASE("Horowitz 45 nm: an SRAM word costs his 64-bit read of an 8 KB SRAM",
          "[physical][constants]") {
  // Horowitz, ISSCC 2014, the same table: a 64-bit read of an 8 KB SRAM, 10 pJ (integer).
  const double read64_pj = 10;
  for (const Source& s : sources()) {
    CAPTURE(s.name);
    PhysicalParams p = s.config.physical;
    p.chip.mesh = ext3{2, 2, 2};
    const Plan plan = plan_of({8, 8, 8}, ext3{2, 2, 2});  // fold 4 x 4 x 4: 128 words, SRAM
    const Run x = run(plan, s.config, p);
    REQUIRE(x.r.chip);
    REQUIRE(x.r.chip->storage.sram);
    // A MAC reads W, writes W and reads V (doc/physical.md §4.2); an X send reads one word.
    const double macs = double(x.rc.total(Counter::macs));
    CHECK(x.r.energy.storage * 1e12 / (3 * macs) == Approx(read64_pj).margin(half_unit(0)));
    const double sends = double(x.rc.total(Counter::x_bus_sends));
    CHECK(x.r.energy.actuator_memories * 1e12 / sends == Approx(read64_pj).margin(half_unit(0)));
  }
}

TEST_CASE("an SRAM bit and a flip-flop bit at 45 nm: Intel's bitcell and NanGate's DFF_X1",
          "[physical][constants]") {
  // K. Mistry et al., "A 45nm Logic Technology with High-k+Metal Gate Transistors, Strained
  // Silicon, 9 Cu Interconnect Layers, 193nm Dry Patterning, and 100% Pb-free Packaging",
  // IEDM 2007: a 0.346 um^2 6T bitcell; over an array efficiency of 0.5 (an assumption).
  // NanGate FreePDK45 Open Cell Library: DFF_X1, 4.522 um^2. A cell's SRAM is multi-ported,
  // 2 x the single-port macro's area a bit (an assumption, doc/physical.md §6).
  const double bitcell_um2 = 0.346, efficiency = 0.5, dff_um2 = 4.522, ports = 2;
  const NodeScaling at45 = scaling_from_45nm(45, 1.0);
  for (const Source& s : sources()) {
    CAPTURE(s.name);
    const PhysicalParams& p = s.config.physical;
    const CellStorage sram = cell_storage(64, 64, p.chip, p.area, at45);  // 128 words
    REQUIRE(sram.sram);
    CHECK(sram.um2 / double(sram.bits) / ports ==
          Approx(bitcell_um2 / efficiency).margin(half_unit(3) / efficiency));
    const CellStorage ff = cell_storage(8, 64, p.chip, p.area, at45);  // 16 words
    REQUIRE_FALSE(ff.sram);
    CHECK(ff.um2 / double(ff.bits) == Approx(dff_um2).margin(half_unit(3)));
    // The same per bit in a run's die: every cell's storage.
    PhysicalParams chip = p;
    chip.chip.mesh = ext3{2, 2, 2};
    const Plan plan = plan_of({8, 8, 8}, ext3{2, 2, 2});
    const Run x = run(plan, s.config, chip);
    const double bits = double(x.r.chip->storage.bits) * cells_of(plan);
    CHECK(x.r.area.storage * 1e6 / bits / ports ==
          Approx(bitcell_um2 / efficiency).margin(half_unit(3) / efficiency));
    // the actuators' memories are single-port macros
    const double act_bits = double(x.r.chip->actuators.size()) * 8 * 8 * 64;
    CHECK(x.r.area.actuator_memories * 1e6 / act_bits ==
          Approx(bitcell_um2 / efficiency).margin(half_unit(3) / efficiency));
  }
}

TEST_CASE("wires at 45 nm: a repeated wire's delay per mm, the RC line, the wire energy",
          "[physical][constants]") {
  for (const Source& s : sources()) {
    CAPTURE(s.name);
    const PhysicalParams& p = s.config.physical;
    const TimingParams& t = p.timing;
    // Repeated: 80 ps per mm, an assumption of the order of Ho, Mai and Horowitz, "The future
    // of wires" (Proc. IEEE 2001); the driver's 50 ps, an assumption, on top.
    const double driver_ps = 50, wire_ps_per_mm = 80;
    CHECK(line_delay_ps(BusModel::repeated, 4, 1.0, t, 1.0) == driver_ps + 1 * wire_ps_per_mm);
    CHECK(line_delay_ps(BusModel::repeated, 40, 10.0, t, 1.0) == driver_ps + 10 * wire_ps_per_mm);
    // The wire term is not scaled with the node, the driver is (doc/physical.md §5).
    const NodeScaling at7 = scaling_from_45nm(7, 0.7);
    CHECK(line_delay_ps(BusModel::repeated, 40, 10.0, t, at7.delay) ==
          Approx(driver_ps * at7.delay + 10 * wire_ps_per_mm));
    // RC, derived: FreePDK45 metal 4-6, 0.14 um wide and 0.28 um thick; copper at 2.2e-8
    // ohm m x 1.3 for size effects (assumptions): r = 729.6 ohm/mm (written 730), with
    // c = 200 fF/mm (an assumption), 0.38 r c L^2 (Rabaey et al.).
    const double r_ohm_per_mm = 2.2e-8 * 1.3 / (0.14e-6 * 0.28e-6) * 1e-3, c_ff_per_mm = 200;
    const double rc_ps = line_delay_ps(BusModel::rc, 4, 1.0, t, 1.0) - driver_ps;
    CHECK(rc_ps / (0.38 * c_ff_per_mm * 1e-3) == Approx(r_ohm_per_mm).margin(half_unit(0)));
    // Wire energy, derived: C V^2 x activity = 200 fF x (1.0 V)^2 x 0.5 = 100 fJ per bit and
    // mm, plus a 5 fJ driver per bit (an assumption); charged per line a Y send drives.
    PhysicalParams wire = p;
    wire.energy.model = WireEnergy::wire;
    const Plan plan = plan_of({4, 4, 4});
    const Run x = run(plan, s.config, wire);
    double fj = 0;
    for (int i = 0; i < 3; ++i)
      fj += double(x.rc.stages[i][Counter::y_bus_sends]) * x.r.word_bits *
            (5 + 0.5 * c_ff_per_mm * 1.0 * 1.0 * x.r.stages[i].y_line_mm);
    CHECK(x.r.energy.y_bus * 1e15 == Approx(fj).epsilon(1e-12));
    // Per event, derived: a 64-bit word over ~1 mm at 0.1 pJ per bit and mm = 6.4 pJ a send.
    const Run e = run(plan, s.config, p);
    CHECK(e.r.energy.x_bus * 1e12 / double(e.rc.total(Counter::x_bus_sends)) ==
          Approx(64 * 1.0 * 0.1).margin(half_unit(1)));
    CHECK(e.r.energy.y_bus * 1e12 / double(e.rc.total(Counter::y_bus_sends)) ==
          Approx(64 * 1.0 * 0.1).margin(half_unit(1)));
    // Leakage, derived: 0.05 pJ per cell and 1 ns step (an assumption) = 50 uW a cell.
    CHECK(e.r.energy.static_ / (cells_of(plan) * e.r.seconds) ==
          Approx(0.05e-12 / 1e-9).margin(half_unit(0) * 1e-6));
  }
}

TEST_CASE("off-chip memory: each kind's bandwidth and energy per bit as a run is charged",
          "[physical][constants]") {
  struct Kind {
    MemoryKind kind;
    double gbps, pj_per_bit;
    int gbps_decimals, pj_decimals;
  };
  const Kind kinds[] = {
      // HBM3: NVIDIA H100 Tensor Core GPU datasheet, H100 SXM: 3.35 TB/s (exact). 3.9
      // pJ/bit: HBM2's figure below (an assumption for HBM3).
      {MemoryKind::hbm3, 3350, 3.9, 0, 1},
      // HBM2e: NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM: 2,039 GB/s (exact).
      // O'Connor et al., "Fine-Grained DRAM", MICRO 2017: HBM2 access energy ~3.9 pJ/bit.
      {MemoryKind::hbm2e, 2039, 3.9, 0, 1},
      // DDR5: JEDEC JESD79-5, DDR5-4800: 4800 MT/s x 8 bytes = 38.4 GB/s a channel, 8
      // channels (as a server socket); 15 pJ/bit an assumption.
      {MemoryKind::ddr5, 8 * 4800e6 * 8 / 1e9, 15, 1, 0},
  };
  const ext3 n{4, 5, 6};
  const Plan plan = plan_of(n);
  for (const Kind& k : kinds) {
    for (const Source& s : sources()) {
      CAPTURE(s.name, to_string(k.kind));
      PhysicalParams p = s.config.physical;
      p.memory.kind = k.kind;
      const Run x = run(plan, s.config, p);
      REQUIRE(x.r.memory);
      // One pass, fp64: X and every C_s read, Y written (doc/physical.md §4.4).
      const double volume = double(n[0]) * double(n[1]) * double(n[2]);
      const double bytes = 8 * (2 * volume + double(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]));
      REQUIRE(x.r.memory->bytes_read + x.r.memory->bytes_written == bytes);
      // Charged at the share of the peak a stream achieves, an H100's STREAM triad 2.97 of
      // 3.35 TB/s (three digits), and the host's 1.0 pJ/bit (an assumption) beside the device's.
      const double gbps = bytes / x.r.memory->memory_seconds * 1e-9 / (2.97 / 3.35);
      CHECK(gbps == Approx(k.gbps).margin(half_unit(k.gbps_decimals) + k.gbps * half_unit(3)));
      const double pj_per_bit = x.r.energy.off_chip * 1e12 / (bytes * 8) - 1.0;
      CHECK(pj_per_bit == Approx(k.pj_per_bit).margin(half_unit(k.pj_decimals)));
    }
  }
  // What the HBM3 figure is: JEDEC JESD238 allows 6.4 Gb/s a pin x 1024 pins = 819.2 GB/s a
  // stack; the H100's 3350 GB/s over its 5 stacks is 670 GB/s a stack, 5.23 Gb/s a pin.
  const double stack_gbps = 6.4 * 1024 / 8, stacks = 5;
  const double hbm3 = memory_kind_figures(MemoryKind::hbm3).gbps;
  CHECK(hbm3 / stacks < stack_gbps);
  CHECK(hbm3 / stacks * 8 / 1024 == Approx(5.23).margin(half_unit(2)));
}

TEST_CASE("Stillmaker and Baas: the node factors are their HP fits and area table",
          "[physical][constants]") {
  // A. Stillmaker and B. Baas, "Scaling equations for the accurate prediction of CMOS device
  // performance from 180 nm to 7 nm", Integration 58 (2017): the HP fits, delay
  // d3 V^3 + d2 V^2 + d1 V + d0, energy e2 V^2 + e1 V + e0, power p2 V^2 + p1 V + p0, as
  // published (to four significant figures), evaluated at each node's PTM nominal VDD.
  struct Fit {
    int node;
    double vdd;
    double d[4], e[3], p[3];
    double area;  // their area table, from 45 nm
  };
  const Fit hp45{
      45, 1.0, {-501.6, 1567, -1619, 566.1}, {1.018, -0.3107, 0.1539}, {5462, -1760, 522.4}, 1};
  const Fit nodes[] = {
      {14,
       0.8,
       {-40.66, 109.2, -100.6, 35.92},
       {0.2363, -0.09675, 0.02239},
       {1675, -711, 159},
       0.17},
      {7,
       0.7,
       {-28.58, 76.6, -70.26, 24.69},
       {0.1776, -0.09097, 0.02447},
       {1179, -515.7, 123.4},
       0.059},
  };
  const auto delay = [](const Fit& f) {
    const double v = f.vdd;
    return f.d[0] * v * v * v + f.d[1] * v * v + f.d[2] * v + f.d[3];
  };
  const auto quadratic = [](const double* c, double v) { return c[0] * v * v + c[1] * v + c[2]; };
  for (const Fit& f : nodes) {
    CAPTURE(f.node);
    CHECK(nominal_vdd(f.node) == f.vdd);
    const NodeScaling s = scaling_from_45nm(f.node, nominal_vdd(f.node));
    CHECK(s.delay == Approx(delay(f) / delay(hp45)).epsilon(1e-12));
    CHECK(s.energy == Approx(quadratic(f.e, f.vdd) / quadratic(hp45.e, hp45.vdd)).epsilon(1e-12));
    CHECK(s.power == Approx(quadratic(f.p, f.vdd) / quadratic(hp45.p, hp45.vdd)).epsilon(1e-12));
    CHECK(s.area == f.area);
  }
  // The doc's rounded 7 nm row (doc/physical.md §5).
  const NodeScaling s7 = scaling_from_45nm(7, 0.7);
  CHECK(s7.delay == Approx(0.259).margin(half_unit(3)));
  CHECK(s7.energy == Approx(0.0555).margin(half_unit(4)));
  CHECK(s7.power == Approx(0.0805).margin(half_unit(4)));
  // Their area table from 45 nm, and the PTM HP nominal supplies, for every node.
  const int node[] = {45, 32, 20, 16, 14, 10, 7};
  const double area[] = {1, 0.46, 0.21, 0.19, 0.17, 0.10, 0.059};
  const double vdd[] = {1.0, 0.9, 0.9, 0.85, 0.8, 0.75, 0.7};
  for (int i = 0; i < 7; ++i) {
    CAPTURE(node[i]);
    CHECK(scaling_from_45nm(node[i], vdd[i]).area == area[i]);
    CHECK(nominal_vdd(node[i]) == vdd[i]);
  }
}

TEST_CASE("validation: a published FMA the model was not calibrated on", "[physical][constants]") {
  // The chip comparison's fp32 cell, FPMax's SP unit (217 GFLOPS/mm^2, 106 GFLOPS/W and
  // 1.42 ns at 28 nm, issued at the H100's 1.98 GHz at 7 nm; run_scripts/chip_compare.sh),
  // modelled at 32 nm against H. Kaul et al., ISSCC 2012, 10.3: a single-precision FMA in
  // 32 nm, 0.045 mm^2 at 1.45 GHz, 52 GFLOPS/W at 1.05 V (abstract). Stated tolerance
  // (doc/physical.md §6.2): within 3x in FLOP/s per mm^2, within 2x in energy per FLOP at
  // the same VDD (Kaul's scaled by V^2 to the model's 0.9 V at 32 nm).
  const NodeScaling n28 = between_32_and_20(28), n7 = scaling_from_45nm(7, nominal_vdd(7));
  const double issue45 = 1e3 / 1.98 / n7.delay;
  const double um2_45 = 2 / (217e9 * n28.area * n28.delay * issue45 * 1e-12) * 1e6;
  const double pj_45 = 2 / 106e9 / n28.energy * 1e12;
  const double latency45 = 1420 / n28.delay;
  // the keys the chip comparison gives its fp32 cells, as written there
  CHECK(issue45 == Approx(1949).margin(half_unit(0)));
  CHECK(um2_45 == Approx(18544).margin(half_unit(0)));
  CHECK(pj_45 == Approx(44.9).margin(half_unit(1)));
  CHECK(latency45 == Approx(2050).margin(half_unit(0)));
  MeshConfig c = parse_mesh_file("", CellMode::fp32);
  const size_t m = static_cast<size_t>(CellMode::fp32);
  c.mode_mac_pj[m] = 44.9;
  PhysicalParams p = c.physical;
  p.technology.node_nm = 32;
  p.timing.bus_model = BusModel::ideal;
  p.timing.mac_ps[m] = 1949;
  p.timing.mac_latency_ps[m] = 2050;
  p.area.mac_um2[m] = 18544;
  // the issue interval on a folded cell, the unit's area on an unfolded one (its registers,
  // V, W and two latches of 32 bits, taken off)
  const Run folded = run(plan_of({8, 8, 8}, ext3{1, 1, 1}), c, p);
  const double issue_s = folded.r.stages[0].path.mac / double(folded.r.stages[0].busiest) * 1e-12;
  const Plan flat = plan_of({3, 3, 3});
  const Run x = run(flat, c, p);
  const double registers_mm2 = 4.0 * 32 * p.area.bit_um2 * x.r.node.area * 1e-6;
  const double mm2 = x.r.area.cells / cells_of(flat) - registers_mm2;
  const double model_density = 2 / (mm2 * issue_s) * 1e-9;  // GFLOP/s per mm^2
  const double model_pj = x.r.energy.mac * 1e12 / double(x.rc.total(Counter::macs));
  const double kaul_density = 2 * 1.45 / 0.045, kaul_pj = 2 / 52.0 * 1e3 * std::pow(0.9 / 1.05, 2);
  const double density_ratio = model_density / kaul_density, energy_ratio = model_pj / kaul_pj;
  CHECK(density_ratio < 3);
  CHECK(density_ratio > 1.0 / 3);
  CHECK(energy_ratio < 2);
  CHECK(energy_ratio > 0.5);
  // as doc/physical.md §6.2 gives them
  CHECK(model_density == Approx(180).margin(half_unit(0)));
  CHECK(density_ratio == Approx(2.79).margin(half_unit(2)));
  CHECK(model_pj == Approx(23.8).margin(half_unit(1)));
  CHECK(energy_ratio == Approx(0.84).margin(half_unit(2)));
}

TEST_CASE("validation: a published FP64 FMA's energy, in 22 nm", "[physical][constants]") {
  // S. Mach, F. Schuiki, F. Zaruba, L. Benini, "FPnew: an open-source multiformat
  // floating-point unit architecture for energy-proportional transprecision computing", IEEE
  // TVLSI 29(4), 2021, abstract: measured in GlobalFoundries 22FDX, up to 178 Gflop/sW on
  // FP64 (its best point over 0.45-1.2 V). The model's fp64 FMA (FPMax's DP unit) at 22 nm,
  // at the interpolated 22 nm energy factor and the tables' nominal VDD. Stated tolerance
  // (doc/physical.md §6.2): within 3x.
  const NodeScaling n22 = between_32_and_20(22);
  for (const Source& s : sources(CellMode::fp64)) {
    CAPTURE(s.name);
    const double pj = mac_substep_pj(CellMode::fp64, s) * n22.energy;  // one FMA at 22 nm
    const double gflops_per_w = 2 / (pj * 1e-12) * 1e-9;
    const double ratio = 178 / gflops_per_w;  // the model's energy over FPnew's
    CHECK(ratio < 3);
    CHECK(ratio > 1.0 / 3);
    CHECK(gflops_per_w == Approx(66.7).margin(half_unit(1)));  // as doc/physical.md §6.2
    CHECK(ratio == Approx(2.67).margin(half_unit(2)));
  }
}
