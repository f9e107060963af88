#include "config/machine_keys.hpp"

#include <cmath>
#include <fstream>
#include <initializer_list>

#include "config/key_readers.hpp"
#include "config/options.hpp"
#include "core/error.hpp"

namespace po = boost::program_options;

namespace triada {

namespace {

// Defaults: meshcfg/default.ini gives their sources.
constexpr KeySpec kKeys[] = {
    {"machine.calibration", "none",
     "the time model's machine: none (built-in constants) or a triada-bench --calibrate JSON"},
    {"machine.ranks_per_node", "auto",
     "ranks on a node for the model: auto = as this run's ranks are placed; N to plan for "
     "another machine (with --dry-run --world-size)"},
    {"machine.net_alpha_us", "1.0", "latency of one message between nodes (us), assumed"},
    {"machine.net_gbytes_per_s", "24", "bandwidth between nodes (GB/s), assumed"},
};

// cal[path...] as a positive finite number.
double measured(const nlohmann::json& cal, const std::string& name,
                std::initializer_list<const char*> path) {
  const nlohmann::json* j = &cal;
  std::string where;
  for (const char* k : path) {
    where += std::string(where.empty() ? "" : ".") + k;
    if (!j->is_object() || !j->contains(k))
      throw config_error(name + ": calibration has no " + where);
    j = &(*j)[k];
  }
  if (!j->is_number() || !(j->get<double>() > 0) || !std::isfinite(j->get<double>()))
    throw config_error(name + ": calibration's " + where + " is not a positive number");
  return j->get<double>();
}

nlohmann::json read_json(const std::string& path, const std::string& name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw config_error(name + ": cannot open '" + printable(path, 200) + "'");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw config_error(name + ": '" + printable(path, 200) + "' is not JSON");
  }
}

}  // namespace

void add_machine_options(po::options_description& d) {
  add_keys(d, kKeys);
}

MachineModel machine_from_calibration(const nlohmann::json& cal, const std::string& name) {
  if (!cal.is_object() || cal.value("schema", "") != "triada-calibration/1")
    throw config_error(name + ": not a calibration (schema triada-calibration/1)");
  MachineModel m;
  m.source = name;
  m.cores_per_node = static_cast<int>(measured(cal, name, {"machine", "cores"}));
  // The largest calibrated brick: closest to the bricks of the runs worth modelling.
  const nlohmann::json& shapes = cal["compute"].value("shapes", nlohmann::json::array());
  if (shapes.empty()) throw config_error(name + ": calibration has no compute.shapes");
  const nlohmann::json& big = shapes.back();
  m.left_rate_all = measured(big, name, {"left_macs_per_s", "median"});
  m.right_rate_all = measured(big, name, {"right_macs_per_s", "median"});
  m.left_rate_alone = m.left_rate_all;  // unless measured alone
  m.right_rate_alone = m.right_rate_all;
  if (big.contains("alone")) {
    m.left_rate_alone = measured(big, name, {"alone", "left_macs_per_s"});
    m.right_rate_alone = measured(big, name, {"alone", "right_macs_per_s"});
  }
  // memcpy counts bytes read and written: a copy moves half of them.
  m.copy_bytes_per_s = measured(cal, name, {"memory", "all_ranks", "bytes_per_s", "median"}) / 2;
  if (cal.contains("sync") && cal["sync"].is_object() && cal["sync"].contains("fence"))
    m.fence_s = measured(cal, name, {"sync", "fence", "seconds"});
  if (cal.contains("sync") && cal["sync"].is_object() && cal["sync"].contains("flag_handshake") &&
      !cal["sync"]["flag_handshake"].is_null())
    m.handshake_s = measured(cal, name, {"sync", "flag_handshake", "seconds"});
  const nlohmann::json& pairs = cal["point_to_point"].value("pairs", nlohmann::json::array());
  for (const nlohmann::json& p : pairs)
    if (p.value("same_node", false)) {
      m.node_alpha_s = measured(p, name, {"fit", "alpha_s"});
      m.node_beta_s_per_byte = measured(p, name, {"fit", "beta_s_per_byte"});
      break;
    }
  return m;
}

MachineModel machine_from(const po::variables_map& vm, const KeySource& src) {
  MachineModel m;
  const std::string& file = key_text(vm, "machine.calibration");
  if (file.empty()) throw config_error(src("machine.calibration") + ": empty file name");
  if (file != "none")
    m = machine_from_calibration(read_json(file, src("machine.calibration")),
                                 src("machine.calibration") + " " + printable(file, 200));
  if (key_text(vm, "machine.ranks_per_node") != "auto")
    m.ranks_per_node =
        static_cast<int>(key_integer(vm, src, "machine.ranks_per_node", 1, 1u << 20));
  m.net_alpha_s = key_quantity(vm, src, "machine.net_alpha_us", Quantity{"us"}) * 1e-6;
  m.net_beta_s_per_byte =
      1.0 / (key_quantity(vm, src, "machine.net_gbytes_per_s", Quantity{"GB/s"}) * 1e9);
  return m;
}

}  // namespace triada
