#pragma once
// What a convolution run is (doc/design.md §10.6): the configuration the job takes
// (jobs/conv_job.hpp) and its checks; triada-conv builds it from its command line, the
// Python module from its arguments.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "counters/progress.hpp"
#include "mxu/tensor_unit.hpp"
#include "physical/mxu_memory.hpp"
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
  MxuExecutor executor = MxuExecutor::fused;  // --executor
  std::string mesh;            // INI with the [energy] and [mxu] keys ("" = built-in defaults)
  MxuMemoryParams memory;      // [mxu] of --mesh: the unit's buffer and DRAM
  std::string report;          // JSON report ("" = none)
  std::string csv;             // per-layer CSV report ("" = none)
  bool force = false;          // --force: replace an existing report or CSV
  std::string input, weights;  // HDF5 FILE[:/DSET] ("" = random), --layer only
  std::uint64_t seed = 1;
  bool verify = false;         // direct convolution on every layer
  double verify_budget = 2e9;  // without --verify: direct only up to this many MACs
  std::optional<std::int64_t> max_layers;
  ProgressMode progress = ProgressMode::automatic;  // --progress (counters/progress.hpp)
  std::string command_line;  // the words of the run, shell-quoted (report/provenance.hpp)
  // Not options (the Python module's): each checked layer's outputs kept, on rank 0; and
  // --layer's operands in memory (NCHW input, OIHW weights, with their dims) instead of
  // the files of --input and --weights, which then only name them.
  bool keep_outputs = false;
  std::vector<double> input_values, weight_values;
  std::array<index_t, 4> input_dims{}, weight_dims{};
};

// Refuses a config triada-conv would refuse: --network and --layer both or neither, no
// method, a value out of its range, an MXU whose unit or [mxu] buffer cannot be, --input
// or --weights with a network, a bad layer or network file (read here). config_error with
// the program's message (options named as --name), checks in its order.
void validate(const ConvConfig& c);

}  // namespace triada
