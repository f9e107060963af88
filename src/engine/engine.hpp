#pragma once
// Runs the stages of a plan on the mesh: actuator roles stream tagged coefficient
// vectors, brick ranks apply the cell rule, pivot planes travel on the Y lines.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "cell/cell_rule.hpp"
#include "counters/cell_activity.hpp"
#include "counters/counters.hpp"
#include "engine/executors.hpp"
#include "mesh/topology.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

struct EngineOptions {
  Executor executor = Executor::fused;
  Mode mode = Mode::esop;
  CellMode cell_mode = CellMode::fp64;  // the cells' arithmetic (precision/cell_mode.hpp)
  PivotTransport pivot_transport = PivotTransport::automatic;
  std::uint64_t shuffle_seed = 0;  // 0: rows streamed in natural order
  // Fused executor: bytes of pivot planes received per batch (bounds the buffers);
  // 0: automatic, max(2 MiB, a quarter of the brick).
  std::size_t plane_batch_bytes = 0;
  // Called once per stage on the rank hosting that stage's actuator (and nowhere else):
  // returns C_axis (N_axis x K_axis).
  std::function<CoeffMatrix(int axis)> coefficients;
  // Called on world rank 0 after each stage (for progress lines); may be empty.
  std::function<void(int stage_index, std::uint64_t steps)> on_stage_done;
  // Called by brick ranks as steps of a stage complete (fused executor); may be empty.
  std::function<void(int stage_index, std::uint64_t done, std::uint64_t total)> on_progress;
  // --activity: non-null on every rank or on none. Each brick rank records there what its
  // cells saw in each stage (counters/cell_activity.hpp), from the stage's input and the
  // coefficients, in a pass of its own before the stage; null: nothing is recorded and
  // nothing costs.
  CellActivity* activity = nullptr;
  // --trace: every rank's pieces of every stage (setup, batches, finish, idle; their time
  // split), gathered on world rank 0 into RunCounters::batch_times.
  bool record_batches = false;
};

template <class T>
struct EngineResult {
  std::vector<T> out;    // this brick's part of Y: brick cells ∩ [0, K), C order
  Brick out_box;         // that box
  RunCounters counters;  // reduced over all ranks; complete on world rank 0
};

// Runs every stage. `in` is this brick's part of X: topo.cells() ∩ [0, N) in C order
// (empty on actuator ranks). Collective over topo.world(). The reference executor runs the
// cell rule cell by cell, step by step (the readable spec, doc/design.md §10.4); the fused one
// computes the same bits and counters brick-wide (engine/fused/fused_stage.cpp).
// `spare` (optional): the brick's second register, allocated (and touched) by the caller
// ahead of time, e.g. by spare_register(); the first stage writes into it, and on return
// it holds whichever register is not in `out`, ready for the next run.
// `initial` (optional; given on every rank or on none, empty on actuator ranks): this
// brick's part of the affine form's initial output Y0 over the output box
// (topo.cells() ∩ [0, K), C order). The last stage's W registers start from it, in the cell
// mode's register format (seed_register), instead of +0, and accumulate onto it in
// streaming order (doc/design.md §3.1); counters are those of the run without it.
template <class T>
EngineResult<T> run_engine(const Topology& topo, const EngineOptions& opt, std::vector<T> in,
                           std::vector<T>* spare = nullptr,
                           const std::vector<T>* initial = nullptr);

// A register large enough for every stage's result of this brick, with its pages mapped
// (zero filled), so that no page fault of first touch lands inside run_engine.
template <class T>
std::vector<T> spare_register(const Topology& topo);

}  // namespace triada
