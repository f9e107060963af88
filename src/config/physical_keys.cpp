#include "config/physical_keys.hpp"

#include <cmath>

#include "config/key_readers.hpp"
#include "config/options.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace triada {

namespace {

// Defaults: the 45 nm baseline of meshcfg/default.ini, which gives every source.
constexpr KeySpec kKeys[] = {
    {"technology.node_nm", "45",
     "technology node (nm): 45, 32, 20, 16, 14, 10 or 7 (Stillmaker and Baas 2017)"},
    {"technology.vdd", "auto", "supply voltage (V); auto = the node's nominal VDD"},
    {"technology.delay_factor", "auto", "gate-delay factor from 45 nm; auto = the tables"},
    {"technology.energy_factor", "auto", "switching-energy factor from 45 nm; auto = the tables"},
    {"technology.power_factor", "auto", "leakage-power factor from 45 nm; auto = the tables"},
    {"technology.area_factor", "auto", "logic-area factor from 45 nm; auto = the tables"},
    {"timing.bus_model", "repeated", "line delay: ideal | repeated | rc | tree | pipelined"},
    {"timing.clock", "global", "global: the slowest stage's period; per_stage: each its own"},
    {"timing.driver_ps", "50", "line driver delay (ps, 45 nm)"},
    {"timing.wire_ps_per_mm", "80", "optimally repeated wire delay (ps/mm)"},
    {"timing.wire_ohm_per_mm", "730", "unrepeated wire resistance (ohm/mm, 45 nm), rc model"},
    {"timing.wire_ff_per_mm", "200", "wire capacitance (fF/mm), rc model"},
    {"timing.stage_ps", "50", "one level of a buffered fan-out tree (ps, 45 nm), tree model"},
    {"timing.overhead_ps", "60", "latch and control per period (ps, 45 nm)"},
    {"timing.actuator_heads", "auto",
     "elements an actuator streams per period; auto = a whole row (one head per X line)"},
    {"timing.control_cycles", "1", "periods per control hand-over between actuators"},
    {"energy.bus_model", "per_event",
     "per_event: the *_pj bus energies; wire: driver + wire energy per line length"},
    {"energy.driver_fj_per_bit", "5", "line driver energy per bit (fJ, 45 nm), wire model"},
    {"energy.wire_fj_per_bit_mm", "100", "wire energy per bit and mm (fJ at 1.0 V), wire model"},
    {"energy.leakage_uw_per_cell", "50", "leakage power of one cell (uW, 45 nm)"},
    {"area.layout", "stacked", "stacked: P3 tiers of P1 x P2 cells; planar: one die"},
    {"area.bit_um2", "4.522", "one register bit (um^2, 45 nm)"},
    {"area.wire_pitch_um", "0.28", "one bus track (um, 45 nm)"},
    {"area.via_um2_per_bit", "25", "one vertical bus bit through a tier (um^2), stacked"},
    {"area.tier_pitch_um", "20", "distance between tiers (um), stacked"},
    {"area.cell_pitch_um", "auto", "cell pitch (um); auto = derived from the cell's area"},
    {"chip.area_mm2", "auto",
     "the die's area budget (mm^2): the mesh is sized to fit it; auto = none (the bare mesh)"},
    {"chip.power_w", "auto", "power budget (W): the clock stretches to fit it; auto = none"},
    {"chip.mesh", "auto", "P1,P2,P3: the chip's mesh, priced; auto = sized (or [mesh] cells)"},
    {"chip.max_tiers", "2", "stacked layout: the most tiers (P3) the die may stack"},
    {"chip.actuator_kib", "auto",
     "each actuator's coefficient memory (KiB); auto = each holds its C_s whole"},
    {"chip.overhead_fraction", "0.2",
     "share of the die for I/O, clocking, power delivery and the off-chip interface"},
    {"chip.max_die_mm", "26,33", "X,Y: the largest outline of one die (mm); a reticle"},
    {"chip.spare_fraction", "0.0909",
     "spare cells per used cell, for yield (priced in area; 12/132, the H100's SMs)"},
    {"chip.register_words", "32", "a cell's V and W words in flip-flops, at most; SRAM beyond"},
    {"chip.sram_port_factor", "2",
     "area per bit of a cell's multi-ported storage over a single-port macro's"},
    {"chip.leakage_mw_per_mm2", "31.5",
     "static power of the die's logic, buses and overhead (mW/mm^2, 45 nm)"},
    {"chip.clock_fraction", "0.25", "the clock network's share of the die's dynamic power"},
    {"chip.sram_um2_per_bit", "0.692", "one SRAM bit with its share of the macro (um^2, 45 nm)"},
    {"chip.sram_fj_per_bit", "156.25", "one SRAM bit read or written (fJ, 45 nm)"},
    {"chip.sram_leakage_pw_per_bit", "1000", "leakage of one SRAM bit (pW, 45 nm)"},
    {"memory.kind", "none",
     "off-chip memory: none (the tensor already in the cells) | hbm3 | hbm2e | ddr5"},
    {"memory.gbps", "auto", "off-chip bandwidth per chip (GB/s = 1e9 B/s); auto = the kind's"},
    {"memory.pj_per_bit", "auto", "off-chip energy per bit moved (pJ); auto = the kind's"},
    {"memory.overlap", "none",
     "none: memory time adds to compute; double_buffer: overlap as doc/physical.md §4.5"},
    {"memory.efficiency", "0.887", "the share of the peak bandwidth streaming achieves"},
    {"memory.host_pj_per_bit", "1.0",
     "the chip's side of a bit moved: PHY, controller, on-die distribution (pJ)"},
};

// A model constant in `unit`: within [1e-6, 1e9] of it (doc/transform.md "Mesh configs"); 0 too
// where the model may leave its term out (`positive` refuses it).
double number(const po::variables_map& vm, const KeySource& src, const std::string& key,
              const char* unit, bool positive = false) {
  return key_quantity(vm, src, key, Quantity{unit, 1e-6, 1e9, !positive});
}

std::optional<double> number_or_auto(const po::variables_map& vm, const KeySource& src,
                                     const std::string& key, const Quantity& q) {
  if (key_text(vm, key) == "auto") return std::nullopt;
  return key_quantity(vm, src, key, q);
}

template <class F>
auto choice(const KeySource& src, const std::string& key, F&& parse) {
  return named(src(key), parse);
}

TechnologyParams technology_from(const po::variables_map& vm, const KeySource& src) {
  TechnologyParams t;
  std::int64_t node = 0;
  const std::string& n = key_text(vm, "technology.node_nm");
  if (!parse_int(n, node) || node > 1000 || !is_technology_node(static_cast<int>(node)))
    throw config_error(src("technology.node_nm") + ": expected one of " + technology_node_names() +
                       " (nm), got '" + printable(n) + "'");
  t.node_nm = static_cast<int>(node);
  t.vdd = number_or_auto(vm, src, "technology.vdd", Quantity{"V", 0.1, 2});
  const Quantity factor{"times the 45 nm value", 1e-6, 1e6};
  t.delay_factor = number_or_auto(vm, src, "technology.delay_factor", factor);
  t.energy_factor = number_or_auto(vm, src, "technology.energy_factor", factor);
  t.power_factor = number_or_auto(vm, src, "technology.power_factor", factor);
  t.area_factor = number_or_auto(vm, src, "technology.area_factor", factor);
  return t;
}

TimingParams timing_from(const po::variables_map& vm, const KeySource& src) {
  TimingParams t;
  t.bus_model = choice(src, "timing.bus_model",
                       [&] { return parse_bus_model(key_text(vm, "timing.bus_model")); });
  t.clock =
      choice(src, "timing.clock", [&] { return parse_clock_mode(key_text(vm, "timing.clock")); });
  t.driver_ps = number(vm, src, "timing.driver_ps", "ps");
  t.wire_ps_per_mm = number(vm, src, "timing.wire_ps_per_mm", "ps/mm");
  t.wire_ohm_per_mm = number(vm, src, "timing.wire_ohm_per_mm", "ohm/mm");
  t.wire_ff_per_mm = number(vm, src, "timing.wire_ff_per_mm", "fF/mm");
  t.stage_ps = number(vm, src, "timing.stage_ps", "ps");
  t.overhead_ps = number(vm, src, "timing.overhead_ps", "ps");
  for (const ModePhysical& m : kModePhysicalTable) {
    t.mac_ps[static_cast<size_t>(m.mode)] =
        number(vm, src, std::string("timing.") + m.mac_ps_key, "ps", true);
    if (m.latency_ps_key)  // 0: unpipelined
      t.mac_latency_ps[static_cast<size_t>(m.mode)] =
          number(vm, src, std::string("timing.") + m.latency_ps_key, "ps");
  }
  if (key_text(vm, "timing.actuator_heads") != "auto")
    t.actuator_heads = key_integer(vm, src, "timing.actuator_heads", 1, 1000000000, "1e9");
  t.control_cycles = key_integer(vm, src, "timing.control_cycles", 0, 1000000000, "1e9");
  return t;
}

WireEnergyParams energy_from(const po::variables_map& vm, const KeySource& src) {
  WireEnergyParams e;
  e.model = choice(src, "energy.bus_model",
                   [&] { return parse_wire_energy(key_text(vm, "energy.bus_model")); });
  e.driver_fj_per_bit = number(vm, src, "energy.driver_fj_per_bit", "fJ/bit");
  e.wire_fj_per_bit_mm = number(vm, src, "energy.wire_fj_per_bit_mm", "fJ/bit/mm");
  e.leakage_uw_per_cell = number(vm, src, "energy.leakage_uw_per_cell", "uW");
  return e;
}

AreaParams area_from(const po::variables_map& vm, const KeySource& src) {
  AreaParams a;
  a.layout = choice(src, "area.layout", [&] { return parse_layout(key_text(vm, "area.layout")); });
  for (const ModePhysical& m : kModePhysicalTable)
    a.mac_um2[static_cast<size_t>(m.mode)] =
        number(vm, src, std::string("area.") + m.mac_um2_key, "um^2", true);
  a.bit_um2 = number(vm, src, "area.bit_um2", "um^2");
  a.wire_pitch_um = number(vm, src, "area.wire_pitch_um", "um");
  a.via_um2_per_bit = number(vm, src, "area.via_um2_per_bit", "um^2");
  a.tier_pitch_um = number(vm, src, "area.tier_pitch_um", "um", true);
  a.cell_pitch_um = number_or_auto(vm, src, "area.cell_pitch_um", Quantity{"um"});
  return a;
}

// chip.max_die_mm = X,Y: two lengths in mm.
std::array<double, 2> die_outline(const po::variables_map& vm, const KeySource& src) {
  const std::string& s = key_text(vm, "chip.max_die_mm");
  const size_t comma = s.find(',');
  std::array<double, 2> v{};
  const bool ok = comma != std::string::npos && parse_double(s.substr(0, comma), v[0]) &&
                  parse_double(s.substr(comma + 1), v[1]) && v[0] >= 0.1 && v[0] <= 1e4 &&
                  v[1] >= 0.1 && v[1] <= 1e4;
  if (!ok)
    throw config_error(src("chip.max_die_mm") +
                       ": expected X,Y, two lengths in [0.1, 1e4] (mm), got '" + printable(s) +
                       "'");
  return v;
}

ChipParams chip_from(const po::variables_map& vm, const KeySource& src) {
  ChipParams c;
  c.area_mm2 = number_or_auto(vm, src, "chip.area_mm2", Quantity{"mm^2"});
  c.power_w = number_or_auto(vm, src, "chip.power_w", Quantity{"W"});
  const std::string& mesh = key_text(vm, "chip.mesh");
  if (mesh != "auto") c.mesh = parse_ext3(mesh, src("chip.mesh"));
  c.max_tiers = static_cast<index_t>(key_integer(vm, src, "chip.max_tiers", 1, 1000000));
  c.actuator_kib = number_or_auto(vm, src, "chip.actuator_kib", Quantity{"KiB"});
  c.overhead_fraction =
      key_quantity(vm, src, "chip.overhead_fraction", Quantity{"(of the die)", 1e-6, 0.9, true});
  c.max_die_mm = die_outline(vm, src);
  c.spare_fraction =
      key_quantity(vm, src, "chip.spare_fraction", Quantity{"(of the cells)", 1e-6, 10, true});
  c.register_words = key_integer(vm, src, "chip.register_words", 0, 1000000000, "1e9");
  c.sram_port_factor = key_quantity(vm, src, "chip.sram_port_factor", Quantity{"x", 1, 100});
  c.leakage_mw_per_mm2 = number(vm, src, "chip.leakage_mw_per_mm2", "mW/mm^2");
  c.clock_fraction =
      key_quantity(vm, src, "chip.clock_fraction", Quantity{"(of the dynamic)", 1e-6, 0.9, true});
  c.sram_um2_per_bit = number(vm, src, "chip.sram_um2_per_bit", "um^2", true);
  c.sram_fj_per_bit = number(vm, src, "chip.sram_fj_per_bit", "fJ");
  c.sram_leakage_pw_per_bit = number(vm, src, "chip.sram_leakage_pw_per_bit", "pW");
  return c;
}

MemoryParams memory_from(const po::variables_map& vm, const KeySource& src) {
  MemoryParams m;
  m.kind =
      choice(src, "memory.kind", [&] { return parse_memory_kind(key_text(vm, "memory.kind")); });
  m.overlap =
      choice(src, "memory.overlap", [&] { return parse_overlap(key_text(vm, "memory.overlap")); });
  m.gbps = number_or_auto(vm, src, "memory.gbps", Quantity{"GB/s", 1e-6, 1e12});
  m.pj_per_bit = number_or_auto(vm, src, "memory.pj_per_bit", Quantity{"pJ", 1e-6, 1e6, true});
  m.efficiency =
      key_quantity(vm, src, "memory.efficiency", Quantity{"(of the peak)", 1e-3, 1, false});
  m.host_pj_per_bit = number(vm, src, "memory.host_pj_per_bit", "pJ");
  return m;
}

}  // namespace

void add_physical_options(po::options_description& d) {
  const auto add = [&](const std::string& key, const char* value, const std::string& help) {
    d.add_options()(key.c_str(), po::value<std::string>()->default_value(value), help.c_str());
  };
  add_keys(d, kKeys);
  for (const ModePhysical& m : kModePhysicalTable) {
    const std::string mode = to_string(m.mode);
    add(std::string("timing.") + m.mac_ps_key, m.mac_ps_default,
        "one sub-step of a " + mode + " MAC (ps, 45 nm)");
    add(std::string("area.") + m.mac_um2_key, m.mac_um2_default,
        "a " + mode + " MAC unit (um^2, 45 nm)");
    if (m.latency_ps_key)
      add(std::string("timing.") + m.latency_ps_key, m.latency_ps_default,
          "latency of the pipelined " + mode + " MAC unit (ps, 45 nm); 0: unpipelined");
  }
}

PhysicalParams physical_from(const po::variables_map& vm, const KeySource& src) {
  PhysicalParams p;
  p.technology = technology_from(vm, src);
  p.timing = timing_from(vm, src);
  p.energy = energy_from(vm, src);
  p.area = area_from(vm, src);
  p.chip = chip_from(vm, src);
  p.memory = memory_from(vm, src);
  return p;
}

}  // namespace triada
