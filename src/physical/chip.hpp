#pragma once
// The chip sizer (doc/physical.md §4.1): the mesh P1 x P2 x P3 of a die of [chip] area_mm2
// (and power_w) on which a problem runs fastest, the problem folded onto it.
#include <array>
#include <optional>
#include <string>

#include "core/types.hpp"
#include "counters/counters.hpp"
#include "physical/physical_model.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// What the sizer models: a dense run of these shapes in this cell mode.
struct ChipProblem {
  ext3 in_shape{};
  ext3 out_shape{};
  std::array<int, 3> stage_order{3, 1, 2};
  CellMode mode = CellMode::fp64;
  bool complex_data = false;
  EnergyModel energy;    // the run's per-event energies (its MAC term included)
  bool initial = false;  // the run reads Y0 (off-chip traffic)
};

// The sizes worth trying along one axis of `v` virtual cells: for each fold f = ceil(v / P),
// the fewest cells that give it (a larger P of the same fold only lengthens the lines).
std::vector<index_t> chip_axis_sizes(index_t v);

// The plan of a dense run of the problem on `mesh` (one rank).
Plan chip_plan(const ChipProblem& q, const ext3& mesh);

// The modelled seconds of a dense run on `mesh` (the power cap applied).
double chip_seconds(const ChipProblem& q, const ext3& mesh, const PhysicalParams& p);

// Among the meshes with P_d <= max(N_d, K_d) whose die fits p.chip's budgets (stacked: P3 <=
// max_tiers), the one of the least modelled time (ties: fewer cells). Throws config_error
// where none fits, saying what the storage alone needs.
ext3 size_chip(const ChipProblem& q, const PhysicalParams& p);

// The mesh a run uses: [chip] mesh if given (checked against the budgets), else the sized
// one with [chip] area_mm2, else `cells` ([mesh] cells; none: the full mesh), checked
// against power_w.
std::optional<ext3> chip_mesh(const ChipProblem& q, const PhysicalParams& p,
                              const std::optional<ext3>& cells);

// Why the plan's mesh is what it is, for the report: "given", "no area budget", "full
// mesh", "area" (no larger mesh fits; "and chip.max_tiers" where a tier more would) or
// "time" (a larger one fits but is not faster).
std::string chip_bound(const Plan& plan, const PhysicalParams& p, CellMode mode, bool complex_data);

}  // namespace triada
