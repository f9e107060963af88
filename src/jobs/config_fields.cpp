#include "jobs/config_fields.hpp"

#include <cstdio>

#include "config/options.hpp"
#include "core/error.hpp"

namespace triada {

namespace {

// Words of values, exact: a double by its 17 significant digits.
std::string word(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}
std::string word(std::int64_t v) {
  return std::to_string(v);
}
std::string word(std::uint64_t v) {
  return std::to_string(v);
}
std::string word(int v) {
  return std::to_string(v);
}
std::string word(bool v) {
  return v ? "on" : "off";
}
std::string word(const std::string& v) {
  return v;
}
std::string word(const char* v) {  // not bool's
  return v;
}
std::string word(const ext3& v) {
  return to_string(v);
}
std::string word(const Decimal& v) {
  return v.text;
}
template <class T>
std::string word(const std::optional<T>& v) {
  return v ? word(*v) : "auto";
}
template <class T, std::size_t N>
std::string word(const std::array<T, N>& a) {
  std::string out;
  for (const T& v : a) out += (out.empty() ? "" : ",") + word(v);
  return out;
}
template <class T>
std::string word(const std::vector<T>& a) {
  std::string out;
  for (const T& v : a) out += (out.empty() ? "" : ",") + word(v);
  return out;
}

// Appends name = word(value) to a description, its names under a prefix.
class Describe {
 public:
  Describe(Fields& out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}
  template <class T>
  Describe& operator()(const std::string& name, const T& value) {
    out_.push_back({prefix_ + name, word(value)});
    return *this;
  }

 private:
  Fields& out_;
  std::string prefix_;
};

void physical_fields(const PhysicalParams& p, Fields& out) {
  const TechnologyParams& t = p.technology;
  Describe(out, "technology.")("node_nm", t.node_nm)("vdd", t.vdd)("delay_factor", t.delay_factor)(
      "energy_factor", t.energy_factor)("power_factor", t.power_factor)("area_factor",
                                                                        t.area_factor);
  const TimingParams& g = p.timing;
  Describe(out, "timing.")("bus_model", to_string(g.bus_model))("clock", to_string(g.clock))(
      "driver_ps", g.driver_ps)("wire_ps_per_mm", g.wire_ps_per_mm)(
      "wire_ohm_per_mm", g.wire_ohm_per_mm)("wire_ff_per_mm", g.wire_ff_per_mm)(
      "stage_ps", g.stage_ps)("overhead_ps", g.overhead_ps)("mac_ps_<mode>", g.mac_ps)(
      "mac_latency_ps_<mode>", g.mac_latency_ps)("actuator_heads", g.actuator_heads)(
      "control_cycles", g.control_cycles);
  const WireEnergyParams& w = p.energy;
  Describe(out, "energy.")("bus_model", to_string(w.model))(
      "driver_fj_per_bit", w.driver_fj_per_bit)("wire_fj_per_bit_mm", w.wire_fj_per_bit_mm)(
      "leakage_uw_per_cell", w.leakage_uw_per_cell);
  const AreaParams& a = p.area;
  Describe(out, "area.")("layout", to_string(a.layout))("mac_um2_<mode>", a.mac_um2)(
      "bit_um2", a.bit_um2)("wire_pitch_um", a.wire_pitch_um)("via_um2_per_bit", a.via_um2_per_bit)(
      "tier_pitch_um", a.tier_pitch_um)("cell_pitch_um", a.cell_pitch_um);
  const ChipParams& c = p.chip;
  Describe(out, "chip.")("area_mm2", c.area_mm2)("power_w", c.power_w)("mesh", c.mesh)(
      "max_tiers", std::int64_t{c.max_tiers})("actuator_kib", c.actuator_kib)(
      "overhead_fraction", c.overhead_fraction)("max_die_mm", c.max_die_mm)(
      "spare_fraction", c.spare_fraction)("register_words", c.register_words)(
      "sram_port_factor", c.sram_port_factor)("leakage_mw_per_mm2", c.leakage_mw_per_mm2)(
      "clock_fraction", c.clock_fraction)("sram_um2_per_bit", c.sram_um2_per_bit)(
      "sram_fj_per_bit", c.sram_fj_per_bit)("sram_leakage_pw_per_bit", c.sram_leakage_pw_per_bit);
  const MemoryParams& m = p.memory;
  Describe(out, "memory.")("kind", to_string(m.kind))("gbps", m.gbps)("pj_per_bit", m.pj_per_bit)(
      "overlap", to_string(m.overlap))("efficiency", m.efficiency)("host_pj_per_bit",
                                                                   m.host_pj_per_bit);
}

void machine_fields(const MachineModel& m, Fields& out) {
  Describe(out, "machine.")("source", m.source)("cores_per_node", m.cores_per_node)(
      "ranks_per_node", m.ranks_per_node)("left_rate_alone", m.left_rate_alone)(
      "left_rate_all", m.left_rate_all)("right_rate_alone", m.right_rate_alone)(
      "right_rate_all", m.right_rate_all)("copy_bytes_per_s", m.copy_bytes_per_s)(
      "stream_bytes_per_s", m.stream_bytes_per_s)("fence_s", m.fence_s)(
      "handshake_s", m.handshake_s)("node_alpha_s", m.node_alpha_s)(
      "node_beta_s_per_byte", m.node_beta_s_per_byte)("net_alpha_s", m.net_alpha_s)(
      "net_beta_s_per_byte", m.net_beta_s_per_byte);
}

void mxu_fields(const MxuMemoryParams& m, const std::string& prefix, Fields& out) {
  Describe(out, prefix)("sram_kib", m.sram_kib)("word_bits", m.word_bits)("dram_gbps", m.dram_gbps)(
      "clock_ghz", m.clock_ghz);
}

}  // namespace

Fields mesh_fields(const MeshConfig& m) {
  Fields out;
  Describe(out, "")("file", m.file)("mesh.cells", m.cells)(
      "ranks.grid", m.grid ? word(*m.grid) : std::string("auto"))(
      "ranks.actuators", m.actuators == ActuatorPlacement::colocated ? "colocated" : "auto")(
      "cell.mode", to_string(m.cell_mode))("esop.enabled", word(m.mode == Mode::esop))(
      "energy (per counter, pJ)", m.energy.pj)(
      "energy.static_pj_per_cell_step", m.energy.static_pj_per_cell_step)("energy.mac_pj_<mode>",
                                                                          m.mode_mac_pj);
  physical_fields(m.physical, out);
  mxu_fields(m.mxu, "mxu.", out);
  machine_fields(m.machine, out);
  return out;
}

Fields config_fields(const TransformConfig& c) {
  Fields out;
  Describe(out, "")("input", c.input.str())("output", c.output.str())("initial", c.initial.str())(
      "kinds", word(std::array<std::string, 3>{to_string(c.kinds[0]), to_string(c.kinds[1]),
                                               to_string(c.kinds[2])}))(
      "transform_spec", c.transform_spec)("inverse", c.inverse)("norm", to_string(c.norm))(
      "coeffs", c.coeffs)("stage_order", to_string(c.stage_order))("report", c.report)(
      "trace", c.trace)("xdmf", c.xdmf)("activity", c.activity)("force", c.force)("quiet", c.quiet)(
      "progress", to_string(c.progress))("executor", c.executor)(
      "transport", std::string(to_string(c.transport)))("shuffle_seed", c.shuffle_seed)(
      "check", c.check)("model_shape", c.model_shape)("dry_run", c.dry_run)("plan_world_size",
                                                                            c.plan_world_size);
  for (mpi::Field& f : mesh_fields(c.mesh)) out.push_back({"mesh " + f.name, std::move(f.value)});
  return out;
}

Fields config_fields(const TcuConfig& c) {
  Fields out;
  Describe(out, "")("algo", c.algo)("size", c.size)("m", c.m)("latency", c.latency)("seed", c.seed)(
      "input", c.input)("weak", c.weak)("report", c.report)("force", c.force)("sweep", c.sweep)(
      "sizes", c.sizes)("ms", c.ms)("cell_mode", to_string(c.cell_mode))("mesh", c.mesh)(
      "executor", to_string(c.executor))("product", to_string(c.product))(
      "both_products", c.both_products)("sweeps", c.sweeps)("kernel", c.kernel)("points", c.points)(
      "progress", to_string(c.progress));
  mxu_fields(c.memory, "memory.", out);
  return out;
}

Fields config_fields(const ConvConfig& c) {
  Fields out;
  Describe(out, "")("network", c.network)("layer_spec", c.layer_spec)(
      "run_explicit", c.run_explicit)("run_implicit", c.run_implicit)("mxu", std::int64_t{c.mxu})(
      "batch", c.batch ? word(std::int64_t{*c.batch}) : std::string("auto"))("latency", c.latency)(
      "cell_mode", to_string(c.cell_mode))("executor", to_string(c.executor))("mesh", c.mesh)(
      "report", c.report)("csv", c.csv)("force", c.force)("input", c.input)("weights", c.weights)(
      "seed", c.seed)("verify", c.verify)("verify_budget", c.verify_budget)(
      "max_layers", c.max_layers)("progress", to_string(c.progress))("keep_outputs",
                                                                     c.keep_outputs);
  mxu_fields(c.memory, "memory.", out);
  return out;
}

Fields input_fields(const ArrayInputs& in) {
  Fields out;
  Describe(out, "ArrayInputs::")("distributed", in.distributed)("gather", in.gather);
  if (in.distributed)
    Describe(out, "ArrayInputs::")("global_shape", in.global_shape)("initial.given",
                                                                    in.initial.given);
  else
    Describe(out, "ArrayInputs::")("global_shape", std::string("-"))("initial.given",
                                                                     std::string("-"));
  return out;
}

void agree_on(MPI_Comm comm, const Fields& fields, const std::string& what) {
  const std::optional<mpi::Disagreement> d = mpi::first_disagreement(comm, fields);
  if (!d) return;
  throw config_error("the ranks disagree on " + what + "'s " + d->field + ": rank 0 has '" +
                     printable(d->value0) + "', rank " + std::to_string(d->rank) + " has '" +
                     printable(d->value) +
                     "' (every rank of a job runs the same config on the same inputs)");
}

}  // namespace triada
