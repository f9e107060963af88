#include "report/physical_json.hpp"

#include <cstdio>

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

}  // namespace

json physical_json(const PhysicalResult& r, const PhysicalParams& p) {
  json stages = json::array();
  for (const StagePhysical& s : r.stages) stages.push_back(stage_json(s));
  const PhysicalEnergy& e = r.energy;
  return {{"technology", technology_json(r, p)},
          {"period_ps", r.period_ps},
          {"critical_path_ps", path_json(r.stages[r.critical_stage].path)},
          {"critical_stage", r.stages[r.critical_stage].axis},
          {"per_stage", stages},
          {"seconds", r.seconds},
          {"throughput_gmacs", r.throughput_gmacs},
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
  return buf;
}

}  // namespace triada
