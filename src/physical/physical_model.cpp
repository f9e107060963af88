#include "physical/physical_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "physical/chip.hpp"
#include "physical/named_choices.hpp"

namespace triada {

namespace {

// Sources of every default: meshcfg/default.ini and doc/physical.md §6. fp64 is FPMax's
// pipelined DP unit issuing at the H100's 1.98 GHz at 7 nm; fp32 (the paper's FP32-MXU) and
// the M3XU modes are the fp16 unit scaled by the M3XU paper's Table III.
constexpr std::array<ModePhysical, kCellModes> kTable{{
    {CellMode::fp64, "mac_ps_fp64", "1949", "mac_um2_fp64", "53940", "mac_latency_ps_fp64", "2007"},
    {CellMode::fp32, "mac_ps_fp32", "600", "mac_um2_fp32", "20675", "mac_latency_ps_fp32", "0"},
    {CellMode::tf32, "mac_ps_tf32", "600", "mac_um2_tf32", "5824"},
    {CellMode::bf16, "mac_ps_bf16", "600", "mac_um2_bf16", "5054"},
    {CellMode::fp16, "mac_ps_fp16", "600", "mac_um2_fp16", "5824"},
    {CellMode::m3xu_fp32, "mac_ps_m3xu_fp32", "726", "mac_um2_m3xu_fp32", "8212"},
    {CellMode::m3xu_fp32c, "mac_ps_m3xu_fp32c", "726", "mac_um2_m3xu_fp32c", "8212"},
    {CellMode::m3xu_fp32_wide, "mac_ps_m3xu_fp32_wide", "726", "mac_um2_m3xu_fp32_wide", "8212"},
    {CellMode::x3tf32, "mac_ps_3xtf32", "600", "mac_um2_3xtf32", "5824"},
    {CellMode::x4tf32, "mac_ps_4xtf32", "600", "mac_um2_4xtf32", "5824"},
    {CellMode::x3bf16, "mac_ps_3xbf16", "600", "mac_um2_3xbf16", "5054"},
}};

constexpr std::array<std::pair<const char*, BusModel>, 5> kBusModels{
    {{"ideal", BusModel::ideal},
     {"repeated", BusModel::repeated},
     {"rc", BusModel::rc},
     {"tree", BusModel::tree},
     {"pipelined", BusModel::pipelined}}};
constexpr std::array<std::pair<const char*, ClockMode>, 2> kClocks{
    {{"global", ClockMode::global}, {"per_stage", ClockMode::per_stage}}};
constexpr std::array<std::pair<const char*, WireEnergy>, 2> kWireEnergies{
    {{"per_event", WireEnergy::per_event}, {"wire", WireEnergy::wire}}};
constexpr std::array<std::pair<const char*, Layout>, 2> kLayouts{
    {{"stacked", Layout::stacked}, {"planar", Layout::planar}}};

}  // namespace

// Indexed by the cell mode, like kCellModeTable.
constexpr bool table_in_order() {
  for (int i = 0; i < kCellModes; ++i)
    if (static_cast<int>(kTable[i].mode) != i) return false;
  return true;
}
static_assert(table_in_order());

const std::array<ModePhysical, kCellModes> kModePhysicalTable = kTable;

std::string to_string(BusModel m) {
  return name_of(m, kBusModels);
}
std::string to_string(ClockMode m) {
  return name_of(m, kClocks);
}
std::string to_string(WireEnergy m) {
  return name_of(m, kWireEnergies);
}
std::string to_string(Layout m) {
  return name_of(m, kLayouts);
}
BusModel parse_bus_model(const std::string& s) {
  return parse_choice(s, kBusModels, "a bus model");
}
ClockMode parse_clock_mode(const std::string& s) {
  return parse_choice(s, kClocks, "a clock");
}
WireEnergy parse_wire_energy(const std::string& s) {
  return parse_choice(s, kWireEnergies, "a bus energy model");
}
Layout parse_layout(const std::string& s) {
  return parse_choice(s, kLayouts, "a layout");
}

PhysicalParams::PhysicalParams() {
  for (const ModePhysical& m : kTable) {
    timing.mac_ps[static_cast<size_t>(m.mode)] = std::stod(m.mac_ps_default);
    if (m.latency_ps_default)
      timing.mac_latency_ps[static_cast<size_t>(m.mode)] = std::stod(m.latency_ps_default);
    area.mac_um2[static_cast<size_t>(m.mode)] = std::stod(m.mac_um2_default);
  }
}

CellStorage cell_storage(std::uint64_t block, int word_bits, const ChipParams& c,
                         const AreaParams& a, const NodeScaling& s) {
  CellStorage st;
  st.words = 2 * block;
  st.bits = st.words * static_cast<std::uint64_t>(word_bits);
  st.sram = st.words > c.register_words;
  const double bits = double(st.bits);
  if (!st.sram) {
    st.um2 = s.area * bits * a.bit_um2;
    return st;
  }
  st.um2 = s.area * bits * c.sram_um2_per_bit * c.sram_port_factor;
  st.fj_per_mac = 3.0 * word_bits * c.sram_fj_per_bit * s.energy;
  st.leakage_w = bits * c.sram_leakage_pw_per_bit * 1e-12 * s.power;
  return st;
}

double line_delay_ps(BusModel m, std::uint64_t n, double mm, const TimingParams& t,
                     double delay_factor) {
  switch (m) {
    case BusModel::ideal:
      return 0;
    case BusModel::repeated:
    case BusModel::pipelined:  // called with one hop
      return delay_factor * t.driver_ps + mm * t.wire_ps_per_mm;
    case BusModel::rc:  // Elmore, 50% point of a distributed RC line: 0.38 r c L^2 (ohm fF = fs)
      return delay_factor * t.driver_ps +
             0.38 * t.wire_ohm_per_mm * t.wire_ff_per_mm * mm * mm * 1e-3;
    case BusModel::tree: {
      int levels = 0;
      while ((std::uint64_t{1} << levels) < n) ++levels;  // ceil(log2 n)
      return levels * delay_factor * t.stage_ps;
    }
  }
  return 0;
}

namespace {

int bus_axis(Bus b) {
  return b == Bus::H ? 3 : b == Bus::L ? 1 : 2;
}

NodeScaling node_of(const TechnologyParams& t) {
  NodeScaling s = scaling_from_45nm(t.node_nm, t.vdd.value_or(nominal_vdd(t.node_nm)));
  s.delay = t.delay_factor.value_or(s.delay);
  s.energy = t.energy_factor.value_or(s.energy);
  s.power = t.power_factor.value_or(s.power);
  s.area = t.area_factor.value_or(s.area);
  return s;
}

// The cell: MAC, registers (V and W of each virtual cell it holds, plus the X and Y operand
// latches) and its share of bus tracks; its pitch solves pitch^2 = logic + tracks * pitch
// + vias unless given (doc/physical.md §4). With [chip], V and W are the cell's storage
// (§4.2): flip-flops or SRAM, apart from the logic. `block`: the virtual cells it holds.
struct CellGeometry {
  double logic_um2 = 0, storage_um2 = 0, track_um = 0, via_um2 = 0, pitch_um = 0;
  double bus_um2() const { return track_um * pitch_um + via_um2; }
};

CellGeometry cell_geometry(const Plan& plan, const PhysicalParams& p, const NodeScaling& s,
                           CellMode mode, int bits, std::uint64_t block) {
  const AreaParams& a = p.area;
  const double mac = a.mac_um2[static_cast<size_t>(mode)];
  CellGeometry g;
  if (p.chip.modelled()) {
    g.logic_um2 = s.area * (mac + 2.0 * bits * a.bit_um2);
    g.storage_um2 = cell_storage(block, bits, p.chip, a, s).um2;
  } else {
    const double registers = 2 * double(block) + 2;
    g.logic_um2 = s.area * (mac + registers * bits * a.bit_um2);
  }
  // stacked: the L and F lines of a tier cross the cell, the H line goes through a via;
  // planar: L (along the column) and H (along the row) cross it, and so do the P3 F lines
  // of its column, which run past it to their cells P3 rows apart.
  const double tracks = a.layout == Layout::stacked ? 2.0 : 2.0 + double(plan.mesh[2]);
  g.track_um = tracks * bits * a.wire_pitch_um * std::sqrt(s.area);
  g.via_um2 = a.layout == Layout::stacked ? bits * a.via_um2_per_bit : 0.0;
  const double need = g.logic_um2 + g.storage_um2 + g.via_um2;
  g.pitch_um =
      a.cell_pitch_um.value_or((g.track_um + std::sqrt(g.track_um * g.track_um + 4 * need)) / 2);
  return g;
}

std::array<double, 3> hops_um(const Plan& plan, const AreaParams& a, double pitch) {
  if (a.layout == Layout::stacked) return {pitch, pitch, a.tier_pitch_um};
  return {pitch, double(plan.mesh[2]) * pitch, pitch};
}

// Gate delays follow the node; a repeated wire's delay per mm is taken as constant across
// nodes, and an unrepeated wire's resistance grows as its cross-section shrinks.
TimingParams scaled_timing(const TimingParams& t, const NodeScaling& s) {
  TimingParams x = t;
  x.wire_ohm_per_mm = t.wire_ohm_per_mm / s.area;
  x.overhead_ps = t.overhead_ps * s.delay;
  for (double& m : x.mac_ps) m *= s.delay;
  for (double& m : x.mac_latency_ps) m *= s.delay;
  return x;  // driver_ps and stage_ps: scaled by line_delay_ps
}

std::uint64_t stage_busiest(const RunCounters& rc, int stage) {
  std::uint64_t b = 1;
  for (const StepRecord& r : rc.steps)
    if (r.stage == stage) b = std::max(b, r.cycles());
  return b;
}

}  // namespace

namespace {

// What every part of the model reads.
struct Env {
  const Plan& plan;
  const RunCounters& rc;
  const PhysicalParams& p;
  NodeScaling s;
  TimingParams t;  // scaled to the node
  std::array<double, 3> hop_um;
  CellMode mode;
  int substeps;
  int bits;
  bool complex_data;
};

// The MAC's share of a period (doc/physical.md §2.2): the busiest cell issues its `busiest`
// MACs' sub-steps one a mac_ps; a pipelined unit also waits for each W's chain of dependent
// FMAs in the step (one a real MAC's W; two per component of a complex one's).
double mac_term(const Env& e, std::uint64_t busiest) {
  const size_t m = static_cast<size_t>(e.mode);
  const double issue = e.t.mac_ps[m] * e.substeps * double(busiest);
  const int chain = e.complex_data ? e.substeps / 2 : e.substeps;
  return std::max(issue, chain * e.t.mac_latency_ps[m]);
}

StagePhysical stage_path(const Env& e, int i) {
  const StagePlan& sp = e.plan.stages[i];
  const int a = sp.axis, b = bus_axis(sp.x_bus());
  StagePhysical st;
  st.axis = a;
  st.y_line_cells = static_cast<std::uint64_t>(e.plan.mesh[a - 1]);
  st.x_line_cells = static_cast<std::uint64_t>(e.plan.mesh[b - 1]);
  st.y_line_mm = double(st.y_line_cells) * e.hop_um[a - 1] / 1000;
  st.x_line_mm = double(st.x_line_cells) * e.hop_um[b - 1] / 1000;
  const BusModel m = e.t.bus_model;
  if (m == BusModel::pipelined) {  // the period holds one hop; each line fills in n - 1
    st.path.x_bus = line_delay_ps(m, 1, e.hop_um[b - 1] / 1000, e.t, e.s.delay);
    st.path.y_bus = line_delay_ps(m, 1, e.hop_um[a - 1] / 1000, e.t, e.s.delay);
    st.fill_cycles = (st.x_line_cells - 1) + (st.y_line_cells - 1);
  } else {
    st.path.x_bus = line_delay_ps(m, st.x_line_cells, st.x_line_mm, e.t, e.s.delay);
    st.path.y_bus = line_delay_ps(m, st.y_line_cells, st.y_line_mm, e.t, e.s.delay);
  }
  st.busiest = stage_busiest(e.rc, i);
  st.path.mac = mac_term(e, st.busiest);
  st.path.overhead = e.t.overhead_ps;
  st.control_cycles = i > 0 ? e.t.control_cycles : 0;
  return st;
}

// Periods one step takes: the actuator's heads stream `heads` elements per period.
std::uint64_t step_periods(const StepRecord& r, std::uint64_t heads) {
  const std::uint64_t n = r[Counter::x_bus_sends];
  return std::max<std::uint64_t>(1, n / heads + (n % heads != 0));
}

std::uint64_t heads_of(const Env& e, int i) {
  const StagePlan& sp = e.plan.stages[i];
  return e.t.actuator_heads.value_or(static_cast<std::uint64_t>(std::max(sp.n(), sp.k())));
}

// Periods, cycles and seconds of every stage and step.
void clock_stages(const Env& e, PhysicalResult& r) {
  const int ns = static_cast<int>(r.stages.size());
  for (int i = 0; i < ns; ++i)
    if (r.stages[i].path.total() > r.stages[r.critical_stage].path.total()) r.critical_stage = i;
  r.period_ps = r.stages[r.critical_stage].path.total();
  for (StagePhysical& st : r.stages)
    st.period_ps = e.t.clock == ClockMode::global ? r.period_ps : st.path.total();
  for (const StepRecord& rec : e.rc.steps) {
    StagePhysical& st = r.stages[rec.stage];
    const std::uint64_t n = step_periods(rec, heads_of(e, rec.stage));
    st.stream_cycles += n * rec.repeat;
    r.step_ps.push_back(double(n) * st.period_ps);
  }
  for (StagePhysical& st : r.stages) {
    st.seconds = double(st.cycles()) * st.period_ps * 1e-12;
    r.seconds += st.seconds;
  }
}

// Joules of driving one line of `mm` with one word (wire model).
double line_energy_j(const Env& e, double mm) {
  const double v = e.s.vdd;  // wire capacitance per mm stays; the swing follows VDD
  return e.bits *
         (e.p.energy.driver_fj_per_bit * e.s.energy + e.p.energy.wire_fj_per_bit_mm * v * v * mm) *
         1e-15;
}

PhysicalEnergy run_energy(const Env& e, const PhysicalResult& r, const EnergyModel& em,
                          double cells) {
  PhysicalEnergy en;
  const double pj = 1e-12 * e.s.energy;
  const bool wire = e.p.energy.model == WireEnergy::wire;
  for (size_t i = 0; i < e.rc.stages.size(); ++i) {
    const StageTotals& t = e.rc.stages[i];
    const StagePhysical& st = r.stages[i];
    en.mac += double(t[Counter::macs]) * em.mac_pj() * pj;
    en.cells += (double(t[Counter::y_bus_receives]) * em[Counter::y_bus_receives] +
                 double(t[Counter::waits]) * em[Counter::waits]) *
                pj;
    const StagePlan& sp = e.plan.stages[i];
    // An X element goes to every X line of its plane: the third axis's cells of them.
    const double x_lines = double(e.plan.mesh[6 - sp.axis - bus_axis(sp.x_bus()) - 1]);
    en.x_bus += double(t[Counter::x_bus_sends]) *
                (wire ? x_lines * line_energy_j(e, st.x_line_mm) : em[Counter::x_bus_sends] * pj);
    en.y_bus += double(t[Counter::y_bus_sends]) *
                (wire ? line_energy_j(e, st.y_line_mm) : em[Counter::y_bus_sends] * pj);
  }
  en.static_ = e.p.energy.leakage_uw_per_cell * 1e-6 * e.s.power * cells * r.seconds;
  return en;
}

// An actuator's memory in words of `bits`: actuator_kib's, or its C_s's N_s x K_s.
std::uint64_t actuator_words(const StagePlan& sp, const ChipParams& c, int bits) {
  if (c.actuator_kib) return static_cast<std::uint64_t>(*c.actuator_kib * 1024 * 8 / bits);
  return static_cast<std::uint64_t>(sp.n()) * static_cast<std::uint64_t>(sp.k());
}

// What the die adds to the mesh, from the plan alone (no counters): the sizer's test.
struct Die {
  double storage_mm2 = 0, actuator_mm2 = 0, spares_mm2 = 0, overhead_mm2 = 0, total_mm2 = 0;
  double sram_leakage_w = 0, logic_leakage_w = 0, leakage_w = 0;  // leakage_w: their sum
  std::array<double, 2> outline_mm{};                             // one die's short and long edge
};

// One die's outline (doc/physical.md §4.1): its tier of the cell array, the spare cells as
// extra length along its long edge, and its share of the rest (actuator memories, overhead)
// as a band along that edge.
std::array<double, 2> outline_of(const Plan& plan, const PhysicalParams& p, double pitch_um,
                                 double rest_mm2) {
  const bool stacked = p.area.layout == Layout::stacked;
  const double a = double(plan.mesh[0]) * pitch_um * 1e-3;
  const double b = double(plan.mesh[1]) * (stacked ? 1.0 : double(plan.mesh[2])) * pitch_um * 1e-3;
  const double dies = stacked ? double(plan.mesh[2]) : 1.0;
  const double longer = std::max(a, b) * (1 + p.chip.spare_fraction);
  const double shorter = std::min(a, b) + rest_mm2 / dies / longer;
  return {std::min(shorter, longer), std::max(shorter, longer)};
}

Die die_of(const Plan& plan, const PhysicalParams& p, const NodeScaling& s, const CellGeometry& g,
           int bits, std::uint64_t block) {
  const ChipParams& c = p.chip;
  const double cells = double(plan.mesh[0]) * double(plan.mesh[1]) * double(plan.mesh[2]);
  Die d;
  d.storage_mm2 = g.storage_um2 * cells * 1e-6;
  d.sram_leakage_w = cell_storage(block, bits, c, p.area, s).leakage_w * cells;
  double actuator_bits = 0;
  for (const StagePlan& sp : plan.stages)
    actuator_bits += double(actuator_words(sp, c, bits)) * bits;
  d.actuator_mm2 = actuator_bits * c.sram_um2_per_bit * s.area * 1e-6;
  d.sram_leakage_w += actuator_bits * c.sram_leakage_pw_per_bit * 1e-12 * s.power;
  const double array = g.logic_um2 * cells * 1e-6 + g.bus_um2() * cells * 1e-6 + d.storage_mm2;
  d.spares_mm2 = array * c.spare_fraction;
  const double rest = array + d.spares_mm2 + d.actuator_mm2;
  // The overhead is a share of what is built, not of the budget: a mesh costs the same
  // whatever budget it was sized under.
  d.overhead_mm2 = rest * c.overhead_fraction / (1 - c.overhead_fraction);
  d.total_mm2 = rest + d.overhead_mm2;
  d.outline_mm = outline_of(plan, p, g.pitch_um, d.actuator_mm2 + d.overhead_mm2);
  // The die's logic leaks by area (the spares power-gated), its SRAM by bit.
  const double logic_mm2 = (g.logic_um2 + g.bus_um2()) * cells * 1e-6 + d.overhead_mm2;
  d.logic_leakage_w = c.leakage_mw_per_mm2 * 1e-3 * s.power / s.area * logic_mm2;
  d.leakage_w = d.sram_leakage_w + d.logic_leakage_w;
  return d;
}

// The die fits its budgets: area, outline and (leakage below) power.
bool die_fits(const Die& d, const ChipParams& c) {
  return (!c.area_mm2 || d.total_mm2 <= *c.area_mm2) && outline_fits(d.outline_mm, c) &&
         (!c.power_w || d.leakage_w < *c.power_w);
}

std::vector<ActuatorMemory> actuator_memories(const Env& e, const PhysicalResult& r) {
  std::vector<ActuatorMemory> out;
  const double bit_um2 = e.p.chip.sram_um2_per_bit * e.s.area;
  for (int i = 0; i < static_cast<int>(e.plan.stages.size()); ++i) {
    const StagePlan& sp = e.plan.stages[i];
    ActuatorMemory m;
    m.axis = sp.axis;
    m.words = actuator_words(sp, e.p.chip, e.bits);
    m.bits = m.words * static_cast<std::uint64_t>(e.bits);
    m.coefficient_words = static_cast<std::uint64_t>(sp.n()) * static_cast<std::uint64_t>(sp.k());
    m.holds = m.coefficient_words <= m.words;
    m.heads = heads_of(e, i);
    m.um2 = double(m.bits) * bit_um2;
    m.gbytes_per_s = double(m.heads) * e.bits / 8 / r.stages[i].period_ps * 1e3;
    out.push_back(m);
  }
  return out;
}

// The clock stretched by `k`: every period, step and second, and the leakage with them.
void stretch_clock(PhysicalResult& r, double k, double leakage_w) {
  r.period_ps *= k;
  for (double& t : r.step_ps) t *= k;
  r.seconds = 0;
  for (StagePhysical& st : r.stages) {
    st.period_ps *= k;
    st.seconds = double(st.cycles()) * st.period_ps * 1e-12;
    r.seconds += st.seconds;
  }
  r.energy.static_ = leakage_w * r.seconds;
}

// End to end with the compute's seconds stretched by k: the passes one after another (a
// pass reads what the one before wrote, so its fill and drain are exposed).
double end_to_end(const OffChipResult& m, Overlap o, double k = 1) {
  double t = 0;
  for (const OffChipPass& ps : m.per_pass) t += pass_seconds(ps, o, k);
  return t;
}

// The off-chip bytes of a run of `passes` passes and their energy (doc/physical.md §4.4).
OffChipResult offchip_traffic(const Env& e, int passes, std::uint64_t block, bool initial,
                              PhysicalResult& r) {
  OffChipResult m;
  m.passes = passes;
  m.held_block = block;
  const double bw = e.p.memory.achieved_gbps() * 1e9;
  std::optional<double> capacity;  // bytes of an actuator's memory
  if (e.p.chip.modelled() && e.p.chip.actuator_kib) capacity = *e.p.chip.actuator_kib * 1024;
  for (const PassTraffic& t : pass_traffic(e.plan, passes, e.bits, initial, capacity)) {
    m.bytes_read += t.bytes_read;
    m.bytes_written += t.bytes_written;
    m.coefficient_bytes += t.coefficient_bytes;
    OffChipPass ps;
    ps.traffic = t;
    ps.memory_seconds = (t.bytes_read + t.bytes_written) / bw;
    ps.coefficient_seconds = t.held_coefficient_bytes / bw;
    ps.load_seconds = (t.bytes_read - t.held_coefficient_bytes) / bw;
    ps.store_seconds = t.bytes_written / bw;
    m.per_pass.push_back(ps);
    m.memory_seconds += ps.memory_seconds;
  }
  const double bytes = m.bytes_read + m.bytes_written;
  r.energy.off_chip = bytes * 8 * e.p.memory.total_pj_per_bit() * 1e-12;
  m.flops_per_byte = 2 * double(e.rc.total(Counter::macs)) / bytes;
  return m;
}

// seconds from the stages' (compute) seconds: end to end, the leakage over it, the power,
// the throughput and the roofline point.
void finish_offchip(const Env& e, PhysicalResult& r) {
  OffChipResult& m = *r.memory;
  m.compute_seconds = r.seconds;
  for (OffChipPass& ps : m.per_pass) {
    ps.compute_seconds = 0;
    for (int i : ps.traffic.stages) ps.compute_seconds += r.stages[static_cast<size_t>(i)].seconds;
    const size_t first = static_cast<size_t>(ps.traffic.stages.front());
    ps.first_stage_seconds = r.stages[first].seconds;
    ps.first_stage_steps = std::max<std::uint64_t>(1, e.rc.stages[first].steps);
    ps.seconds = pass_seconds(ps, e.p.memory.overlap);
  }
  const double t = end_to_end(m, e.p.memory.overlap);
  if (t != r.seconds && r.seconds > 0) r.energy.static_ *= t / r.seconds;
  r.seconds = t;
  const double macs = double(e.rc.total(Counter::macs));
  m.compute_flops = m.compute_seconds > 0 ? 2 * macs / m.compute_seconds : 0;
  m.ridge_flops_per_byte = m.compute_flops / (e.p.memory.achieved_gbps() * 1e9);
  m.memory_bound = m.memory_seconds > m.compute_seconds;
  r.throughput_gmacs = t > 0 ? macs / t * 1e-9 : 0;
  r.power_w = t > 0 ? r.energy.total() / t : 0;
}

// The least stretch k of the compute's seconds whose average power fits: dynamic / T(k) +
// leakage <= budget, T(k) the end-to-end seconds. Without off-chip memory T(k) = k T(1), a
// closed form; with it, bisection below that form's k (which fits, as T(k) >= k compute).
double least_stretch(const PhysicalResult& r, Overlap o, double dynamic, double leakage_w,
                     double budget) {
  const double compute = r.memory ? r.memory->compute_seconds : r.seconds;
  const auto seconds_at = [&](double k) {
    return r.memory ? end_to_end(*r.memory, o, k) : r.seconds * k;
  };
  const auto fits = [&](double k) { return dynamic / seconds_at(k) + leakage_w <= budget; };
  double k = dynamic / (compute * (budget - leakage_w));
  if (r.memory) {
    double lo = 1, hi = std::max(1.0, k);
    for (int i = 0; i < 200 && lo < hi && std::nextafter(lo, hi) < hi; ++i) {
      const double mid = lo + (hi - lo) / 2;
      (fits(mid) ? hi : lo) = mid;
    }
    k = hi;
  }
  while (!fits(k)) k = std::nextafter(k, 2 * k);
  return k;
}

// With power_w: the clock stretched by the least k that fits the budget, end to end.
void cap_power(const Env& e, PhysicalResult& r, ChipResult& c) {
  const PhysicalParams& p = e.p;
  c.power_uncapped_w = r.power_w;
  if (!p.chip.power_w || r.seconds <= 0 || r.power_w <= *p.chip.power_w) return;
  const double budget = *p.chip.power_w, leakage_w = r.energy.static_ / r.seconds;
  if (leakage_w >= budget) {
    c.power_fits = false;
    return;
  }
  double k = least_stretch(r, p.memory.overlap, r.energy.dynamic(), leakage_w, budget);
  const PhysicalResult uncapped = r;
  for (;; k = std::nextafter(k, 2 * k)) {  // the report's own rounding must fit too
    r = uncapped;
    stretch_clock(r, k, leakage_w);
    if (r.memory) {
      finish_offchip(e, r);
    } else {
      r.power_w = r.energy.total() / r.seconds;
      r.throughput_gmacs = double(e.rc.total(Counter::macs)) / r.seconds * 1e-9;
    }
    if (r.power_w <= budget) break;
  }
  c.stretch = k;
}

// The die around the mesh: storage and actuator memories in area and energy, the overhead
// (doc/physical.md §4.1-4.3).
ChipResult price_chip(const Env& e, const CellGeometry& g, std::uint64_t block, PhysicalResult& r) {
  ChipResult c;
  c.budget_mm2 = e.p.chip.area_mm2;
  c.budget_w = e.p.chip.power_w;
  c.storage = cell_storage(block, e.bits, e.p.chip, e.p.area, e.s);
  c.actuators = actuator_memories(e, r);
  const Die d = die_of(e.plan, e.p, e.s, g, e.bits, block);
  r.area.storage = d.storage_mm2;
  r.area.actuator_memories = d.actuator_mm2;
  r.area.overhead = d.overhead_mm2;
  r.area.spares = d.spares_mm2;
  c.outline_mm = d.outline_mm;
  const double macs = double(e.rc.total(Counter::macs));
  r.energy.storage = macs * c.storage.fj_per_mac * 1e-15;
  const double fj = e.p.chip.sram_fj_per_bit * e.s.energy * e.bits;
  r.energy.actuator_memories = double(e.rc.total(Counter::x_bus_sends)) * fj * 1e-15;
  r.energy.static_ = d.leakage_w * r.seconds;  // the die's, in place of the bare cells'
  const double f = e.p.chip.clock_fraction;    // of the on-die dynamic power, clock included
  r.energy.clock = r.energy.on_die() * f / (1 - f);
  r.power_w = r.seconds > 0 ? r.energy.total() / r.seconds : 0;
  return c;
}

// The passes over the tensor and the block a cell holds: one pass (the whole fold) unless
// [memory] is set and an area budget given; then the fewest passes whose die fits, or the
// most where none does (doc/physical.md §4.4).
struct Tiling {
  int passes = 1;
  std::uint64_t block = 1;
  CellGeometry g;
  Die die;
};

Tiling tiling_of(const Plan& plan, const PhysicalParams& p, const NodeScaling& s, CellMode mode,
                 int bits) {
  const int most = p.memory.modelled() && p.chip.area_mm2
                       ? std::max(1, static_cast<int>(plan.stages.size()))
                       : 1;
  Tiling t;
  for (t.passes = 1;; ++t.passes) {
    t.block = held_block(plan, t.passes, p.memory.overlap);
    t.g = cell_geometry(plan, p, s, mode, bits, t.block);
    t.die = die_of(plan, p, s, t.g, bits, t.block);
    if (die_fits(t.die, p.chip) || t.passes == most) return t;
  }
}

}  // namespace

// doc/physical.md §4.5. Within a tile the first stage takes its planes in step order: step
// j waits for plane j, so with n steps it ends at max(l/n + c1, l + c1/n). A tile's store
// follows its last step. Double-buffered, tile i + 1 loads and tile i - 1 stores while tile
// i computes; the first load and the last store are exposed.
double pass_seconds(const OffChipPass& ps, Overlap o, double k) {
  const double t = double(std::max<std::uint64_t>(1, ps.traffic.tiles));
  const double l = ps.load_seconds / t, s = ps.store_seconds / t;
  const double c = k * ps.compute_seconds / t, c1 = k * ps.first_stage_seconds / t;
  if (o == Overlap::none) return ps.coefficient_seconds + t * (l + c + s);
  const double n = double(ps.first_stage_steps);
  const double exposed_load = std::max(l / n, l + c1 / n - c1);  // the first tile's
  return ps.coefficient_seconds + exposed_load + c + (t - 1) * std::max(c, l + s) + s;
}

int word_bits_of(CellMode mode, bool complex_data) {
  return (mode == CellMode::fp64 ? 64 : 32) * (complex_data ? 2 : 1);
}

ChipFit chip_fit(const Plan& plan, const PhysicalParams& p, CellMode mode, bool complex_data) {
  const NodeScaling s = node_of(p.technology);
  const int bits = word_bits_of(mode, complex_data);
  const Tiling t = tiling_of(plan, p, s, mode, bits);
  const Die& d = t.die;
  ChipFit f;
  f.area_mm2 = d.total_mm2;
  f.storage_mm2 = d.storage_mm2 + d.actuator_mm2;
  f.leakage_w = d.leakage_w;
  f.outline_mm = d.outline_mm;
  f.passes = t.passes;
  f.fits = die_fits(d, p.chip);
  return f;
}

bool outline_fits(const std::array<double, 2>& outline, const ChipParams& c) {
  const double lo = std::min(c.max_die_mm[0], c.max_die_mm[1]);
  const double hi = std::max(c.max_die_mm[0], c.max_die_mm[1]);
  return outline[0] <= lo && outline[1] <= hi;
}

PhysicalResult physical_model(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                              const EnergyModel& energy, CellMode mode, bool complex_data,
                              bool initial) {
  PhysicalResult r;
  r.node = node_of(p.technology);
  r.mode = mode;
  r.complex_data = complex_data;
  r.word_bits = word_bits_of(mode, complex_data);
  const Tiling tiles = tiling_of(plan, p, r.node, mode, r.word_bits);
  const CellGeometry& g = tiles.g;
  r.cell_pitch_um = g.pitch_um;
  r.hop_um = hops_um(plan, p.area, g.pitch_um);
  const Env e{plan,
              rc,
              p,
              r.node,
              scaled_timing(p.timing, r.node),
              r.hop_um,
              mode,
              substeps(mode, complex_data),
              r.word_bits,
              complex_data};
  for (int i = 0; i < static_cast<int>(plan.stages.size()); ++i)
    r.stages.push_back(stage_path(e, i));
  clock_stages(e, r);
  const double cells = double(plan.mesh[0]) * double(plan.mesh[1]) * double(plan.mesh[2]);
  r.energy = run_energy(e, r, energy, cells);
  r.throughput_gmacs = r.seconds > 0 ? double(rc.total(Counter::macs)) / r.seconds * 1e-9 : 0;
  r.power_w = r.seconds > 0 ? r.energy.total() / r.seconds : 0;
  r.edp_js = r.energy.total() * r.seconds;
  r.area.cells = g.logic_um2 * cells * 1e-6;
  r.area.buses = g.bus_um2() * cells * 1e-6;
  const double die_cells = p.area.layout == Layout::stacked ? cells / double(plan.mesh[2]) : cells;
  r.area.footprint = die_cells * g.pitch_um * g.pitch_um * 1e-6;
  if (p.chip.modelled()) r.chip = price_chip(e, g, tiles.block, r);
  if (p.memory.modelled()) {
    r.memory = offchip_traffic(e, tiles.passes, tiles.block, initial, r);
    finish_offchip(e, r);
  }
  if (r.chip) {
    cap_power(e, r, *r.chip);
    r.chip->bound = chip_bound(plan, p, mode, complex_data);
  }
  if (r.chip || r.memory) r.edp_js = r.energy.total() * r.seconds;
  const double fmas = double(r.stages[r.critical_stage].busiest) * e.substeps / substeps(mode);
  r.peak_flops = r.period_ps > 0 ? 2 * cells * fmas / (r.period_ps * 1e-12) : 0;
  return r;
}

}  // namespace triada
