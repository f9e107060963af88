#pragma once
// Run configuration as a plain struct (STYLE.md #6). Every option is declared once with
// its description and default (so --help documents it), parsed from the command line
// and the mesh INI file (command line wins), validated, and the variables_map never
// leaves this file.
#include <array>
#include <boost/program_options.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "actuator/coefficients.hpp"
#include "cell/cell_rule.hpp"
#include "core/error.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "io/tensor_io.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// Keys of the mesh config ([mesh], [ranks], [cell], [esop], [energy]); each is also a
// command-line option --section.key.
struct MeshConfig {
  std::string file;                                            // the INI file read, empty if none
  std::optional<ext3> cells;                                   // [mesh] cells = auto | P1,P2,P3
  std::optional<std::array<int, 3>> grid;                      // [ranks] grid = auto | p1,p2,p3
  ActuatorPlacement actuators = ActuatorPlacement::automatic;  // [ranks] actuators
  CellMode cell_mode = CellMode::fp64;                         // [cell] mode
  Mode mode = Mode::esop;                                      // [esop] enabled = on | off
  EnergyModel energy;                                          // [energy] *_pj, mac_pj of cell_mode
  std::array<double, kCellModes> mode_mac_pj{};  // [energy] MAC energy of every cell mode
};

struct TransformConfig {
  DatasetRef input;
  DatasetRef output;
  std::array<TransformKind, 3> kinds{};  // per axis 1..3
  std::string transform_spec;            // as given, e.g. "dft" or "dft,dct,wht"
  bool inverse = false;
  Norm norm = Norm::ortho;
  std::string coeffs;  // HDF5 file with /C1 /C2 /C3 (gemt)
  std::array<int, 3> stage_order{3, 1, 2};
  MeshConfig mesh;
  std::string report;  // JSON report path, empty: none
  std::string trace;   // per-step CSV path, empty: none
  bool force = false;
  bool quiet = false;
  std::string executor = "fused";  // fused | reference
  std::uint64_t shuffle_seed = 0;
  bool check = false;  // rerun in fp64 and report the output's error
};

// Parses argv. Returns nullopt after printing --help to `out`. Throws config_error with
// one clear line for any bad option, key or value.
std::optional<TransformConfig> parse_transform_options(int argc, char** argv, std::ostream& out);

// Parses only a mesh INI file with defaults (used by tests and other apps).
MeshConfig parse_mesh_file(const std::string& path);

// Parses argv against `desc` and runs notify. Strict: no abbreviated option names and no
// positional words (each is refused by name); any Boost.Program_options error becomes one
// config_error line with the user's text escaped. Every app's parser uses it.
boost::program_options::variables_map parse_command_line_strict(
    int argc, char** argv, const boost::program_options::options_description& desc);

// User text fit for a one-line message: bytes outside printable ASCII as \xNN, and at most
// `max` characters (then "...").
std::string printable(const std::string& s, std::size_t max = 64);

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

// "4,5,6" -> {4,5,6}; throws config_error naming `what` unless three integers in [1, max]
// (spaces allowed around an item, never inside a number).
ext3 parse_ext3(const std::string& s, const std::string& what,
                std::int64_t max = std::int64_t{1} << 30);

}  // namespace triada
