#pragma once
// One stage on one brick as plain data: the boxes, lines, Y-line members, pivot-plane
// owners, fold tables and batch budget the executors consume. Built from the plan alone
// (no MPI), so the schedule is tested without mpirun (heFFTe's logic_plan3d).
#include <array>
#include <cstddef>
#include <vector>

#include "core/types.hpp"
#include "geometry/brick.hpp"
#include "geometry/plan.hpp"

namespace triada {

struct BrickStage {
  // The stage.
  int stage = 0;                       // index into Plan::stages
  int axis = 3;                        // summation axis, 1..3
  int a = 2;                           // axis - 1
  std::array<int, 2> line_axes{0, 1};  // the two other axes (0-based), increasing
  index_t n = 0, k = 0;                // N_axis (pivot planes), K_axis (output planes)

  // The brick.
  std::array<int, 3> coords{0, 0, 0};  // grid coordinates of the brick
  int brick_rank = 0;                  // row-major rank in the grid (Plan::brick_rank)
  Brick cells;                         // virtual cells of the brick (Plan::brick_cells)
  Brick in_box;                        // cells ∩ the stage's input (V), C order in memory
  Brick out_box;                       // cells ∩ the stage's output (W)
  Brick union_box;                     // cells ∩ input with extent max(N, K) along the axis
  index_t plane_lo = 0;                // first plane of the brick along the axis (cells.lo[a])
  index_t in_planes = 0;               // in_box.extent(a): pivot planes the brick holds
  index_t out_planes = 0;              // out_box.extent(a): W planes the brick holds
  // Lines: the brick's extents along line_axes (the same for V and W) and their number;
  // line (l1, l2) has index l1 * line_extent[1] + l2.
  std::array<index_t, 2> line_extent{0, 0};
  index_t n_lines = 0;

  // The Y line through the brick: the bricks sharing its other two coordinates, ordered
  // by their coordinate along the axis (the rank in the line communicator).
  int line_size = 1;                      // grid[a]
  int line_rank = 0;                      // coords[a]
  std::vector<int> line_members;          // brick rank of each line rank
  std::vector<Range> member_planes;       // virtual cells along the axis of each line rank
  std::vector<index_t> member_in_planes;  // of those, pivot planes (below N)
  std::vector<int> plane_owner;           // line rank holding pivot plane t, t in [0, N)

  // Folding: physical cell of each virtual cell, relative to the brick's first one. A
  // table is empty where its axes are not folded (the identity); plane_cell and line_cell
  // read either way.
  bool axis_folded = false;         // fold along the axis > 1
  bool lines_folded = false;        // fold along a line axis > 1
  std::vector<index_t> phys_plane;  // per plane of union_box along the axis
  index_t n_phys_planes = 0;        // distinct physical cells among those planes
  std::vector<index_t> phys_line;   // per line
  index_t n_phys_lines = 0;         // distinct physical cells among the lines
  index_t plane_cell(index_t p) const {
    return axis_folded ? phys_plane[static_cast<std::size_t>(p)] : p;
  }
  index_t line_cell(index_t ln) const {
    return lines_folded ? phys_line[static_cast<std::size_t>(ln)] : ln;
  }

  // Pivot planes received per batch (fused executor, off one node): bytes of planes a
  // batch buffer holds; plane_batch_bytes, or max(2 MiB, a quarter of the V brick).
  std::size_t element_bytes = 0;
  index_t batch_budget = 0;

  // Batches of `steps` pivot planes: all in one when the line is this brick alone or its
  // planes are read in place, else as many planes of the lines as the budget holds.
  index_t batch_planes(index_t steps, bool in_place) const;
  bool owns_plane(index_t t) const { return plane_owner[static_cast<std::size_t>(t)] == line_rank; }
};

// Stage `stage_index` of `plan` on the brick at grid coordinates `coords`, for elements of
// `element_bytes`; plane_batch_bytes 0: the automatic budget.
BrickStage make_brick_stage(const Plan& plan, int stage_index, const std::array<int, 3>& coords,
                            std::size_t element_bytes, std::size_t plane_batch_bytes = 0);

// Actuator side of a stage: the virtual cells along the axis of every brick rank (the
// coefficients each brick's messages carry).
std::vector<Range> stage_plane_ranges(const Plan& plan, int stage_index);

// Elements of this brick's largest stage result (the register every stage writes into).
index_t register_elements(const Plan& plan, const std::array<int, 3>& coords);

}  // namespace triada
