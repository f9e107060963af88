#pragma once
// triada-conv: convolution layers (one, or a network's from data/networks/*.csv) on the
// planar MXU by explicit and implicit channel-first im2col (conv/conv.hpp), checked
// against the direct convolution, with a per-layer table and a JSON report.
#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apps/conv/options.hpp"
#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// MAC energy of `mode` and the static energy per cell step, from the [energy] keys of the
// mesh config `mesh_path` (built-in defaults = meshcfg/default.ini if empty): mac_pj for
// fp64, mac_pj_<mode> otherwise, whatever the file's [cell] mode.
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
