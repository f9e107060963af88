#pragma once
// triada-conv: convolution layers (one, or a network's from data/networks/*.csv) on the
// planar MXU by explicit and implicit channel-first im2col (conv/conv.hpp), checked
// against the direct convolution, with a per-layer table and a JSON report.
#include <mpi.h>

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "jobs/conv_config.hpp"
#include "jobs/conv_distributed.hpp"
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

// What a run computed: the report (rank 0's, as written, on every rank), the exit code
// (0, or 4 if a checked layer failed, fp64 cells only; the same on every rank) and, with
// cfg.keep_outputs, on rank 0, each layer's outcome with the outputs of the checked layers.
struct ConvRun {
  nlohmann::json report;
  int code = 0;
  std::vector<LayerOutcome> outcomes;
};

class ConvJob {
 public:
  // Checks the config (validate: config_error with triada-conv's message).
  explicit ConvJob(ConvConfig cfg);
  const ConvConfig& config() const { return cfg_; }

  // Runs the configured layers over the ranks of `comm` (jobs/conv_distributed.hpp),
  // prints the table to `out` (rank 0's is the one to show), rank 0 writes the report and
  // the CSV. Collective.
  ConvRun run(MPI_Comm comm, std::ostream& out) const;

 private:
  ConvConfig cfg_;
};

// The report's object of one layer (without "index") from its outcome over the ranks.
nlohmann::json conv_layer_json(const ConvLayer& layer, const LayerOutcome& outcome,
                               const ConvConfig& cfg, const ConvEnergy& energy);

}  // namespace triada
