#pragma once
// The mesh configuration (INI file and --section.key options, command line wins) and the
// strict option helpers every program's parser uses (doc/design.md §10.6). Each key is declared
// once with its description and default, so --help documents it. The programs' own
// options live with them in apps/.
#include <array>
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
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
  explicit OptionSpellings(const boost::program_options::parsed_options& parsed);
  // The option `key` (its long name, without "--") as first typed; "--key" if not typed.
  std::string operator()(const std::string& key) const;

 private:
  std::map<std::string, std::string> typed_;
};

// A command line that takes the mesh keys besides the program's own options: argv parsed
// against `app` plus the mesh keys (each also --section.key); the INI file named by the
// program's `mesh_option` (if given) fills the keys the command line left unset.
class MeshCommandLine {
 public:
  // Returns nothing after writing --help (the program's options and the mesh keys) to
  // `help`. Throws config_error with one line for a bad option, file, key or value.
  static std::optional<MeshCommandLine> parse(
      int argc, char** argv, const boost::program_options::options_description& app,
      const std::string& mesh_option, std::ostream& help);

  const boost::program_options::variables_map& values() const { return vm_; }
  const OptionSpellings& spelled() const { return spelled_; }
  // The mesh keys, validated; errors name the INI file and key, or the option.
  MeshConfig mesh() const;

 private:
  boost::program_options::variables_map vm_;
  OptionSpellings spelled_;
  std::string file_;                    // the INI file read ("" if none)
  std::vector<std::string> from_file_;  // keys whose value came from that file
};

// "on" / "off" (and true/false, 1/0, yes/no); throws config_error naming `source`.
bool parse_on_off(const std::string& value, const std::string& source);

// Refuses an empty value of any of the path options `names` (without "--") that vm holds:
// config_error "--NAME: empty file name" (the option as `spelled`).
void refuse_empty_paths(const boost::program_options::variables_map& vm,
                        std::initializer_list<const char*> names,
                        const OptionSpellings& spelled = {});

// Parses argv against `desc` and runs notify. Strict: no abbreviated option names and no
// positional words (each is refused by name); any Boost.Program_options error becomes one
// config_error line naming the option as typed, the user's text escaped. Every app's
// parser uses it; `spelled` (if given) learns how each option was typed.
boost::program_options::variables_map parse_command_line_strict(
    int argc, char** argv, const boost::program_options::options_description& desc,
    OptionSpellings* spelled = nullptr);

// User text fit for a one-line message: bytes outside printable ASCII as \xNN, and at most
// `max` characters (then "...").
std::string printable(const std::string& s, std::size_t max = 64);

// A text file's first line without its UTF-8 byte-order mark, which spreadsheet exports and
// some editors put first.
std::string without_bom(const std::string& first_line);

// Runs a value parser of another module (cell mode, transform, ...) for `source` (an
// option, or FILE: [section] key): its config_error gets the source in front (once) and
// the user's text in it escaped.
template <class F>
auto named(const std::string& source, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const config_error& e) {
    const std::string what = printable(e.what(), 300);
    throw config_error(what.rfind(source + ":", 0) == 0 ? what : source + ": " + what);
  }
}

// The items of a comma-separated option list ("4,5,6" -> {"4", "5", "6"}), by the one rule
// of every list of every program: no spaces and no empty item. Throws config_error naming
// `option` (an option, or FILE: [section] key) otherwise.
std::vector<std::string> list_items(const std::string& option, const std::string& s);

// Whole-string integer parsing for option values: false unless all of `s` is one integer
// (no spaces, no sign for unsigned types, no overflow).
bool parse_int(const std::string& s, std::int64_t& out);
bool parse_uint64(const std::string& s, std::uint64_t& out);
// Whole-string finite real number (decimal or exponent form; no spaces, no hex, no inf/nan).
bool parse_double(const std::string& s, double& out);
// A positive integer option value; throws config_error naming the option otherwise.
std::int64_t parse_positive(const std::string& option, const std::string& s);
// An unsigned 64-bit option value (digits only); throws config_error naming the option.
std::uint64_t parse_unsigned(const std::string& option, const std::string& s);

// "4,5,6" -> {4,5,6}; throws config_error naming `what` unless a list (list_items) of three
// integers in [1, max].
ext3 parse_ext3(const std::string& s, const std::string& what,
                std::int64_t max = std::int64_t{1} << 30);

}  // namespace triada
