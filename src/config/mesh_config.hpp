#pragma once
// The mesh configuration as the library's configs carry it, without the command-line
// parser (config/options.hpp, Boost.Program_options, is the programs'): the keys of the INI
// file and --section.key options as a struct, their parsers by file or key list, and how
// a command line spelled its options. Installed with <triada/config.hpp>.
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cell/cell_rule.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "geometry/time_model.hpp"
#include "physical/mxu_memory.hpp"
#include "physical/physical_model.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// Keys of the mesh config ([mesh], [ranks], [cell], [esop], [energy], the physical
// model's [technology], [timing], [area], the MXU memory side's [mxu] and the time model's
// [machine]); each is also a command-line option --section.key.
struct MeshConfig {
  std::string file;                                            // the INI file read, empty if none
  std::optional<ext3> cells;                                   // [mesh] cells = auto | P1,P2,P3
  std::optional<std::array<int, 3>> grid;                      // [ranks] grid = auto | p1,p2,p3
  ActuatorPlacement actuators = ActuatorPlacement::automatic;  // [ranks] actuators
  CellMode cell_mode = CellMode::fp64;                         // [cell] mode
  Mode mode = Mode::esop;                                      // [esop] enabled = on | off
  EnergyModel energy;  // [energy] *_pj; the MAC term: one real MAC of cell_mode
  std::array<double, kCellModes> mode_mac_pj{};  // [energy] one sub-step of every cell mode
  PhysicalParams physical;  // [technology], [timing], [area], wire keys of [energy]
  MxuMemoryParams mxu;      // [mxu]: the planar MXU's buffer and DRAM (mxu/memory_side.hpp)
  MachineModel machine;     // [machine]: the time model's machine (geometry/time_model.hpp)
  // Runs the cells in `m`: energy's MAC term follows (it is derived, never set alone).
  void use_cell_mode(CellMode m) {
    cell_mode = m;
    energy = energy_for(false);
  }
  // The energy model of a run on real or complex data: its MAC term is one MAC, the
  // mode's sub-step energy times its sub-steps (doc/precision.md).
  EnergyModel energy_for(bool complex_data) const {
    EnergyModel e = energy;
    e[Counter::macs] =
        mode_mac_pj[static_cast<size_t>(cell_mode)] * substeps(cell_mode, complex_data);
    return e;
  }
};

// Parses only a mesh INI file with defaults (used by tests and other apps).
MeshConfig parse_mesh_file(const std::string& path);
// The built-in defaults (= meshcfg/default.ini), parsed once: what a config struct starts
// with, so that one built in code carries every key's value.
const MeshConfig& builtin_mesh_config();
// Refuses what the mesh keys' parser would: an out-of-range enum (a mode or cell mode set by
// a cast), an energy that is not a finite number >= 0. Throws config_error naming the key as
// a command line's --section.key.
void validate_mesh(const MeshConfig& m);

// The mesh keys of `ini_file` ("": none) with `keys` ({"section.key", value as the INI file
// writes it}) winning over them, as a command line's --section.key VALUE options would:
// every error is that command line's (an unknown key, a key given twice, a bad value named
// "--section.key"; the file's errors name the file and key).
MeshConfig mesh_config(const std::string& ini_file,
                       const std::vector<std::pair<std::string, std::string>>& keys);

// The same file with its [cell] mode replaced by `mode`: energy.mac_pj is then one real
// MAC of that mode ([energy] mac_pj for fp64, mac_pj_<mode> x sub-steps otherwise).
// Errors as above.
MeshConfig parse_mesh_file(const std::string& path, CellMode mode);

// How a command line spelled its options, so that every message names an option as the
// user typed it: "-t" where the user gave --transform's short alias.
class OptionSpellings {
 public:
  OptionSpellings() = default;
  // Records that `key` was typed as `typed` ("-t", "--transform"); the first spelling wins.
  void learn(const std::string& key, const std::string& typed);
  // The option `key` (its long name, without "--") as first typed; "--key" if not typed.
  std::string operator()(const std::string& key) const;

 private:
  std::map<std::string, std::string> typed_;
};

}  // namespace triada
