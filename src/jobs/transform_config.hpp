#pragma once
// What a transform run is (doc/design.md §10.6): the configuration TransformJob takes
// (jobs/transform_job.hpp), checked by validate(); triada-transform builds it from its
// command line and the mesh INI file, the Python module from its arguments.
#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "actuator/coefficients.hpp"
#include "config/mesh_config.hpp"
#include "counters/progress.hpp"
#include "engine/executors.hpp"
#include "io/dataset_ref.hpp"

namespace triada {

struct TransformConfig {
  DatasetRef input;
  DatasetRef output;
  // --initial: the affine form's initial output Y0 (Y = Y0 + X x1 C1 x2 C2 x3 C3); an
  // empty file: none (Y0 = +0).
  DatasetRef initial;
  std::array<TransformKind, 3> kinds{};  // per axis 1..3
  std::string transform_spec;            // as given, e.g. "dft" or "dft,dct,wht"
  bool inverse = false;
  Norm norm = Norm::ortho;
  std::string coeffs;  // HDF5 file with /C1 /C2 /C3 (gemt)
  std::array<int, 3> stage_order{3, 1, 2};
  MeshConfig mesh = builtin_mesh_config();  // every key at its built-in value
  std::string report;                       // JSON report path, empty: none
  std::string trace;                        // per-step CSV path, empty: none

  // Look instead of read (doc/transform.md "Looking at a run"): --xdmf, the output's XDMF sidecar
  // (io/xdmf.hpp); --activity, the per-cell activity HDF5 file (empty: none).
  bool xdmf = false;
  std::string activity;

  bool force = false;
  bool quiet = false;
  ProgressMode progress = ProgressMode::automatic;  // --progress (counters/progress.hpp)
  std::string command_line;        // the words of the run, shell-quoted (report/provenance.hpp)
  OptionSpellings spelled;         // how each option was typed (-i, --input): messages name it so
  std::string executor = "fused";  // fused | reference
  PivotTransport transport = PivotTransport::automatic;  // --transport
  std::uint64_t shuffle_seed = 0;
  bool check = false;               // rerun in fp64 and report the output's error
  std::optional<ext3> model_shape;  // --model-only: no data, a dense input of this shape
  bool dry_run = false;             // --dry-run: print the plan, read no data, write no output
  int plan_world_size = 0;          // --world-size: the dry run plans for this many ranks
};

// Every check of a config that needs no file: what its fields can hold wrongly (a stage
// order that is no permutation, an unknown executor, ...) and the rules between them
// (--model-only takes no data options, gemt needs --coeffs, --world-size needs --dry-run,
// ...), in the program's order. Throws config_error with the program's message, naming
// options as cfg.spelled says.
void validate(const TransformConfig& cfg);

// "dct" -> dct on every axis, "dft,dct,wht" -> one per axis; errors name `option`.
std::array<TransformKind, 3> parse_transform_list(const std::string& spec,
                                                  const std::string& option);

// --trace's second file, the time split of every rank's pieces of each stage: TRACE with
// its ".csv" replaced by ".batches.csv" (else with that appended); none ("") when the
// trace goes to a descriptor ("-", /dev/..., /proc/...) or there is no trace.
std::string batch_trace_path(const std::string& trace);

// "dft,dct,wht": the transform of each axis, as the output and the report name it.
std::string transform_list(const TransformConfig& cfg);
}  // namespace triada
