#pragma once
// Runs the stages of a plan on the mesh: actuator roles stream tagged coefficient
// vectors, brick ranks apply the cell rule, pivot planes travel on the Y lines.
#include <cstdint>
#include <functional>
#include <vector>

#include "actuator/coefficients.hpp"
#include "cell/cell_rule.hpp"
#include "counters/counters.hpp"
#include "mesh/topology.hpp"

namespace triada {

struct EngineOptions {
  Mode mode = Mode::esop;
  std::uint64_t shuffle_seed = 0;  // 0: rows streamed in natural order
  // Called once per stage on the rank hosting that stage's actuator (and nowhere else):
  // returns C_axis (N_axis x K_axis).
  std::function<CoeffMatrix(int axis)> coefficients;
  // Called on world rank 0 after each stage (for progress lines); may be empty.
  std::function<void(int stage_index, std::uint64_t steps)> on_stage_done;
};

template <class T>
struct EngineResult {
  std::vector<T> out;     // this brick's part of Y: brick cells ∩ [0, K), C order
  Brick out_box;          // that box
  RunCounters counters;   // reduced over all ranks; complete on world rank 0
};

// Reference executor: the cell rule cell by cell, step by step (STYLE.md #4).
// `in` is this brick's part of X: topo.cells() ∩ [0, N) in C order (empty on actuator ranks).
// Collective over topo.world().
template <class T>
EngineResult<T> run_reference(const Topology& topo, const EngineOptions& opt, std::vector<T> in);

}  // namespace triada
