#pragma once
// triada-conv over the ranks of a communicator. The work items are (layer, method, work
// unit) (conv/conv.hpp: a unit is one group's C_O tile of S columns), in the order layer,
// explicit before implicit, unit. They are split into K contiguous runs of about equal
// cost (a unit's cost: the r S^2 of its calls, the same for every unit of a layer and
// method), so a rank runs, per layer and method, one contiguous range of units. Every
// counter is a sum over units, summed over the ranks as exact integers; peak memory and
// wall times are maxima. The direct-convolution check of a layer runs on the first rank
// holding units of it, with the other ranks' output blocks sent there. Results, counters
// and model times are therefore the same for every rank count.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "jobs/conv_config.hpp"
#include "mxu/memory_side.hpp"

namespace triada {

// A rank's units [u0, u1) of one layer and method.
struct ConvPart {
  std::size_t layer = 0;
  bool is_explicit = true;
  index_t u0 = 0, u1 = 0;
};

// The split's measure of one work unit: its dense MACs (conv_unit_dense_macs) plus
// kUnitWeightCost per word of its weight slice (S x round_up(K_group, S)). Each weight is
// generated, transposed or packed into right tiles and hashed by the memory side once per
// unit, which on the fused executor costs about as much as 128 MACs (measured on VGG16's
// layers, doc/mxu.md); without it, layers with few output pixels per weight (VGG16's last
// ones) were 30% to 80% slower than their MACs said, and the rank holding them finished last.
constexpr std::uint64_t kUnitWeightCost = 128;
std::uint64_t conv_unit_split_cost(const ConvLayer& l, index_t side, bool is_explicit);

// parts[r]: rank r's parts in item order. Contiguous over the ranks, covering every unit
// of the enabled methods once; a unit goes to the rank whose share [r T / K, (r + 1) T / K)
// of the total cost T holds the unit's midpoint.
std::vector<std::vector<ConvPart>> split_conv_work(const std::vector<ConvLayer>& layers,
                                                   index_t side, bool run_explicit,
                                                   bool run_implicit, int ranks);

// What one method did on one layer, over all ranks.
struct MethodOutcome {
  bool ran = false;
  ConvStats stats;
  MemoryCost memory;                    // the memory side's counters, cold at each work unit
  double wall_seconds = 0;              // the slowest rank's time on its units
  std::optional<double> max_rel_error;  // when the layer was checked
  // With cfg.keep_outputs, on rank 0, when the layer was checked: the output (NHWC).
  std::vector<double> output;
};

struct LayerOutcome {
  bool checked = false;  // the direct convolution ran (--verify or within the budget)
  double direct_seconds = 0;
  MethodOutcome ex, im;
};

// Runs this rank's parts of every layer and the checks it is the host of; collective over
// `comm`, the same outcome on every rank. Operands: the files' (--layer only) when given,
// else random_tensor(seed, 2 i) and (seed, 2 i + 1) for layer i.
std::vector<LayerOutcome> run_conv_distributed(const std::vector<ConvLayer>& layers,
                                               const ConvConfig& cfg,
                                               const std::vector<double>& file_input,
                                               const std::vector<double>& file_weights,
                                               MPI_Comm comm);

}  // namespace triada
