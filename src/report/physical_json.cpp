#include "report/physical_json.hpp"

#include <cstdio>

#include "physical/band.hpp"

namespace triada {

using nlohmann::json;

namespace {

json optional_json(const std::optional<double>& v) {
  return v ? json(*v) : json("auto");
}

json technology_json(const PhysicalResult& r, const PhysicalParams& p) {
  const NodeScaling& n = r.node;
  return {{"node_nm", n.node_nm},
          {"vdd", n.vdd},
          {"factors_from_45nm",
           {{"delay", n.delay}, {"energy", n.energy}, {"power", n.power}, {"area", n.area}}},
          {"factors_given",
           {{"delay", optional_json(p.technology.delay_factor)},
            {"energy", optional_json(p.technology.energy_factor)},
            {"power", optional_json(p.technology.power_factor)},
            {"area", optional_json(p.technology.area_factor)}}},
          {"source",
           "Stillmaker and Baas, Integration 58 (2017): HP delay/energy/power fits and area "
           "table"}};
}

// The parameters as the run used them: the 45 nm inputs of the run's cell mode.
json parameters_json(const PhysicalResult& r, const PhysicalParams& p) {
  const TimingParams& t = p.timing;
  const size_t m = static_cast<size_t>(r.mode);
  const json heads = t.actuator_heads ? json(*t.actuator_heads) : json("auto");
  return {{"timing",
           {{"bus_model", to_string(t.bus_model)},
            {"clock", to_string(t.clock)},
            {"driver_ps", t.driver_ps},
            {"wire_ps_per_mm", t.wire_ps_per_mm},
            {"wire_ohm_per_mm", t.wire_ohm_per_mm},
            {"wire_ff_per_mm", t.wire_ff_per_mm},
            {"stage_ps", t.stage_ps},
            {"overhead_ps", t.overhead_ps},
            {"mac_ps", t.mac_ps[m]},
            {"mac_latency_ps", t.mac_latency_ps[m]},
            {"actuator_heads", heads},
            {"control_cycles", t.control_cycles}}},
          {"energy",
           {{"bus_model", to_string(p.energy.model)},
            {"driver_fj_per_bit", p.energy.driver_fj_per_bit},
            {"wire_fj_per_bit_mm", p.energy.wire_fj_per_bit_mm},
            {"leakage_uw_per_cell", p.energy.leakage_uw_per_cell}}},
          {"area",
           {{"layout", to_string(p.area.layout)},
            {"mac_um2", p.area.mac_um2[m]},
            {"bit_um2", p.area.bit_um2},
            {"wire_pitch_um", p.area.wire_pitch_um},
            {"via_um2_per_bit", p.area.via_um2_per_bit},
            {"tier_pitch_um", p.area.tier_pitch_um},
            {"cell_pitch_um", optional_json(p.area.cell_pitch_um)}}},
          {"word_bits", r.word_bits},
          {"cell_mode", to_string(r.mode)}};
}

json path_json(const CriticalPath& c) {
  return {{"x_bus", c.x_bus}, {"y_bus", c.y_bus}, {"mac", c.mac}, {"overhead", c.overhead}};
}

json stage_json(const StagePhysical& s) {
  return {{"axis", s.axis},
          {"period_ps", s.period_ps},
          {"cycles", s.cycles()},
          {"seconds", s.seconds},
          {"critical_path_ps", path_json(s.path)},
          {"busiest_cell_macs", s.busiest},
          {"stream_cycles", s.stream_cycles},
          {"fill_cycles", s.fill_cycles},
          {"control_cycles", s.control_cycles},
          {"x_line", {{"cells", s.x_line_cells}, {"mm", s.x_line_mm}}},
          {"y_line", {{"cells", s.y_line_cells}, {"mm", s.y_line_mm}}}};
}

json storage_json(const CellStorage& s) {
  return {{"words_per_cell", s.words},
          {"bits_per_cell", s.bits},
          {"kind", s.sram ? "sram" : "registers"},
          {"um2_per_cell", s.um2},
          {"access_fj_per_mac", s.fj_per_mac},
          {"leakage_w_per_cell", s.leakage_w}};
}

json actuators_json(const std::vector<ActuatorMemory>& a) {
  json out = json::array();
  for (const ActuatorMemory& m : a)
    out.push_back({{"axis", m.axis},
                   {"actuator", actuator_name(m.axis)},
                   {"words", m.words},
                   {"bits", m.bits},
                   {"coefficient_words", m.coefficient_words},
                   {"holds_coefficients", m.holds},
                   {"mm2", m.um2 * 1e-6},
                   {"heads", m.heads},
                   {"gbytes_per_s", m.gbytes_per_s}});
  return out;
}

json or_none(const std::optional<double>& v) {
  return v ? json(*v) : json(nullptr);
}

// The die around the mesh: budgets, what fitted and why, the area split, the power cap.
json chip_json(const PhysicalResult& r, const PhysicalParams& p, const Plan& plan) {
  const ChipResult& c = *r.chip;
  const PhysicalArea& a = r.area;
  return {{"budget", {{"area_mm2", or_none(c.budget_mm2)}, {"power_w", or_none(c.budget_w)}}},
          {"mesh", plan.mesh},
          {"fold", plan.fold},
          {"bound", c.bound},
          {"area_mm2",
           {{"cells_logic", a.cells},
            {"cell_storage", a.storage},
            {"buses", a.buses},
            {"actuator_memories", a.actuator_memories},
            {"overhead", a.overhead},
            {"spares", a.spares},
            {"total", a.total()}}},
          {"outline_mm", c.outline_mm},
          {"max_die_mm", p.chip.max_die_mm},
          {"overhead_fraction", p.chip.overhead_fraction},
          {"spare_fraction", p.chip.spare_fraction},
          {"leakage_mw_per_mm2", p.chip.leakage_mw_per_mm2},
          {"clock_fraction", p.chip.clock_fraction},
          {"max_tiers", p.chip.max_tiers},
          {"actuator_kib", or_none(p.chip.actuator_kib)},
          {"cell_storage", storage_json(c.storage)},
          {"actuator_memories", actuators_json(c.actuators)},
          {"power",
           {{"uncapped_w", c.power_uncapped_w},
            {"w", r.power_w},
            {"clock_capped", c.stretch > 1},
            {"period_stretch", c.stretch},
            {"fits", c.power_fits}}},
          {"sram",
           {{"um2_per_bit", p.chip.sram_um2_per_bit},
            {"fj_per_bit", p.chip.sram_fj_per_bit},
            {"leakage_pw_per_bit", p.chip.sram_leakage_pw_per_bit},
            {"register_words", p.chip.register_words},
            {"port_factor", p.chip.sram_port_factor},
            {"at", "45 nm, scaled to the node"}}}};
}

// The band (doc/physical.md §4.6): the run at its corners, and the constants that vary.
json range_json(const PhysicalRange& r) {
  json constants = json::array();
  for (const BandConstant& b : band_constants())
    constants.push_back({{"constant", b.name},
                         {b.absolute ? "optimistic" : "optimistic_factor", b.optimistic},
                         {b.absolute ? "pessimistic" : "pessimistic_factor", b.pessimistic},
                         {"source", b.source}});
  return {{"seconds", r.seconds},
          {"energy_j", r.energy_j},
          {"order", "optimistic, nominal, pessimistic"},
          {"constants", constants}};
}

// The chip's line: its area split, what bound the mesh, the power cap.
std::string chip_summary(const PhysicalResult& r) {
  if (!r.chip) return "";
  const ChipResult& c = *r.chip;
  char stretch[64];
  std::snprintf(stretch, sizeof stretch, "stretched x%.4g to fit the power", c.stretch);
  const std::string clock = c.stretch > 1 ? stretch : "not capped by power";
  char chip[400];
  std::snprintf(chip, sizeof chip,
                "  chip %.4g mm^2, %.3g x %.3g mm (cells %.4g, storage %.4g %s, buses %.4g, "
                "spares %.4g, actuator memories %.4g, overhead %.4g), %s; clock %s\n",
                r.area.total(), c.outline_mm[0], c.outline_mm[1], r.area.cells, r.area.storage,
                c.storage.sram ? "SRAM" : "registers", r.area.buses, r.area.spares,
                r.area.actuator_memories, r.area.overhead, c.bound.c_str(), clock.c_str());
  return chip;
}

// Off-chip memory: the kind, the passes and their bytes and seconds.
json memory_json(const OffChipResult& m, const PhysicalParams& p, const PhysicalResult& r,
                 const Plan& plan) {
  json passes = json::array();
  for (const OffChipPass& ps : m.per_pass) {
    json axes = json::array();
    for (int i : ps.traffic.stages) axes.push_back(plan.stages[static_cast<size_t>(i)].axis);
    passes.push_back({{"axes", axes},
                      {"bytes_read", ps.traffic.bytes_read},
                      {"bytes_written", ps.traffic.bytes_written},
                      {"coefficient_bytes", ps.traffic.coefficient_bytes},
                      {"tiles", ps.traffic.tiles},
                      {"compute_seconds", ps.compute_seconds},
                      {"memory_seconds", ps.memory_seconds},
                      {"seconds", ps.seconds},
                      {"exposed_memory_seconds", ps.seconds - ps.compute_seconds}});
  }
  return {{"kind", to_string(p.memory.kind)},
          {"gbps", p.memory.bandwidth_gbps()},
          {"efficiency", p.memory.efficiency},
          {"achieved_gbps", p.memory.achieved_gbps()},
          {"pj_per_bit", p.memory.energy_pj_per_bit()},
          {"host_pj_per_bit", p.memory.host_pj_per_bit},
          {"overlap", to_string(p.memory.overlap)},
          {"passes", m.passes},
          {"held_block", m.held_block},
          {"bytes_read", m.bytes_read},
          {"bytes_written", m.bytes_written},
          {"coefficient_bytes", m.coefficient_bytes},
          {"energy_j", r.energy.off_chip},
          {"per_pass", passes}};
}

void add_memory(json& out, const PhysicalResult& r, const PhysicalParams& p, const Plan& plan) {
  const OffChipResult& m = *r.memory;
  out["compute_seconds"] = m.compute_seconds;
  out["memory_seconds"] = m.memory_seconds;
  out["bound"] = m.memory_bound ? "memory" : "compute";
  out["roofline"] = {{"flops_per_byte", m.flops_per_byte},
                     {"ridge_flops_per_byte", m.ridge_flops_per_byte},
                     {"compute_flops", m.compute_flops},
                     {"bytes_per_s", p.memory.achieved_gbps() * 1e9}};
  out["memory"] = memory_json(m, p, r, plan);
  out["energy_j"]["breakdown"]["off_chip"] = r.energy.off_chip;
}

// The off-chip line: passes, bytes, compute and memory seconds, the bound.
std::string memory_summary(const PhysicalResult& r, const PhysicalParams& p) {
  if (!r.memory) return "";
  const OffChipResult& m = *r.memory;
  char line[400];
  std::snprintf(line, sizeof line,
                "  memory %s %.4g GB/s, %s overlap: %d pass(es), %.4g B read, %.4g B written; "
                "compute %.4g s, memory %.4g s, %s-bound (%.3g flop/B, ridge %.3g)\n",
                to_string(p.memory.kind).c_str(), p.memory.bandwidth_gbps(),
                to_string(p.memory.overlap).c_str(), m.passes, m.bytes_read, m.bytes_written,
                m.compute_seconds, m.memory_seconds, m.memory_bound ? "memory" : "compute",
                m.flops_per_byte, m.ridge_flops_per_byte);
  return line;
}

}  // namespace

json physical_json(const PhysicalResult& r, const PhysicalParams& p, const Plan& plan) {
  json stages = json::array();
  for (const StagePhysical& s : r.stages) stages.push_back(stage_json(s));
  const PhysicalEnergy& e = r.energy;
  json out = {{"technology", technology_json(r, p)},
              {"period_ps", r.period_ps},
              {"critical_path_ps", path_json(r.stages[r.critical_stage].path)},
              {"critical_stage", r.stages[r.critical_stage].axis},
              {"per_stage", stages},
              {"seconds", r.seconds},
              {"throughput_gmacs", r.throughput_gmacs},
              {"peak_flops", r.peak_flops},
              {"energy_j",
               {{"dynamic", e.dynamic()},
                {"static", e.static_},
                {"total", e.total()},
                {"breakdown",
                 {{"mac", e.mac}, {"x_bus", e.x_bus}, {"y_bus", e.y_bus}, {"cells", e.cells}}}}},
              {"power_w", r.power_w},
              {"edp_js", r.edp_js},
              {"area_mm2",
               {{"cells", r.area.cells},
                {"buses", r.area.buses},
                {"total", r.area.total()},
                {"footprint", r.area.footprint}}},
              {"cell_pitch_um", r.cell_pitch_um},
              {"hop_um", r.hop_um},
              {"parameters", parameters_json(r, p)}};
  if (r.memory) add_memory(out, r, p, plan);
  if (r.range) out["range"] = range_json(*r.range);
  if (!r.chip) return out;
  out["chip"] = chip_json(r, p, plan);
  out["energy_j"]["breakdown"]["cell_storage"] = e.storage;
  out["energy_j"]["breakdown"]["actuator_memories"] = e.actuator_memories;
  out["energy_j"]["breakdown"]["clock"] = e.clock;
  out["area_mm2"]["cell_storage"] = r.area.storage;
  out["area_mm2"]["actuator_memories"] = r.area.actuator_memories;
  out["area_mm2"]["overhead"] = r.area.overhead;
  out["area_mm2"]["spares"] = r.area.spares;
  return out;
}

std::string physical_summary_line(const PhysicalResult& r, const PhysicalParams& p) {
  const CriticalPath& c = r.stages[r.critical_stage].path;
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "  physical %d nm, %s bus, %s clock: period %.4g ns (X %.3g + Y %.3g + MAC "
                "%.3g + %.3g), %.4g s, %.4g J, %.4g W, %.4g mm^2 (%.4g um pitch)\n",
                r.node.node_nm, to_string(p.timing.bus_model).c_str(),
                to_string(p.timing.clock).c_str(), r.period_ps * 1e-3, c.x_bus * 1e-3,
                c.y_bus * 1e-3, c.mac * 1e-3, c.overhead * 1e-3, r.seconds, r.energy.total(),
                r.power_w, r.area.total(), r.cell_pitch_um);
  return buf + chip_summary(r) + memory_summary(r, p);
}

}  // namespace triada
