#pragma once
// triada-conv: convolution layers (one, or a network's from data/networks/*.csv) on the
// planar MXU by explicit and implicit channel-first im2col (conv/conv.hpp), checked
// against the direct convolution, with a per-layer table and a JSON report. Options are
// parsed into a plain struct (STYLE.md #6); the variables_map never leaves the parser.
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "conv/conv.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

struct ConvConfig {
  std::string network;     // --network FILE.csv ("" with --layer)
  std::string layer_spec;  // --layer N,CI,HI,WI,CO,HF,WF,stride,pad[,dil[,groups]]
  bool run_explicit = true, run_implicit = true;
  index_t mxu = 16;              // S: the unit is S x S cells (m = S^2)
  std::optional<index_t> batch;  // --batch: overrides N of every layer
  std::int64_t latency = 0;      // l of the TCU model, per call
  CellMode cell_mode = CellMode::fp64;
  std::string mesh;            // INI with the [energy] keys ("" = built-in defaults)
  std::string report;          // JSON report ("" = none)
  bool force = false;          // --force: replace an existing report
  std::string input, weights;  // HDF5 FILE[:/DSET] ("" = random), --layer only
  std::uint64_t seed = 1;
  bool verify = false;         // direct convolution on every layer
  double verify_budget = 2e9;  // without --verify: direct only up to this many MACs
  std::optional<std::int64_t> max_layers;
};

// Parses and validates the command line. Returns nothing for --help (text in `help`).
// Throws config_error with one clear line for a bad, unknown or missing option, and for a
// malformed network file (naming file:line).
std::optional<ConvConfig> parse_conv_options(int argc, char** argv, std::ostream& help);

// MAC energy of `mode` and the static energy per cell step, from the [energy] keys of the
// mesh config `mesh_path` (built-in defaults = meshcfg/default.ini if empty): mac_pj for
// fp64, mac_pj_<mode> otherwise.
struct ConvEnergy {
  double mac_pj = 0;
  double static_pj_per_cell_step = 0;
};
ConvEnergy conv_energy_model(const std::string& mesh_path, CellMode mode);

// Runs the configured layers, prints the table to `out` as layers finish, writes the
// report. Returns the exit code: 0, or 4 if a checked layer failed (fp64 cells only).
int run_conv_job(const ConvConfig& cfg, std::ostream& out);

// One layer, both methods as configured: the report's layer object (without "index").
nlohmann::json run_conv_layer(const ConvLayer& layer, const std::vector<double>& input,
                              const std::vector<double>& weights, const ConvConfig& cfg,
                              const ConvEnergy& energy);

}  // namespace triada
