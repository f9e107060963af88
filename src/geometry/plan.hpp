#pragma once
// The run plan as plain data (doc/design.md §10.2): mesh, rank layout, brick decomposition and
// the per-stage shapes and buses. Computed without MPI, tested without mpirun; the
// executors only consume it.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "geometry/brick.hpp"

namespace triada {

// Operand buses of doc/design.md §2: H lines run along axis 3, L along axis 1, F along axis 2.
enum class Bus { H = 0, L = 1, F = 2 };
inline const char* to_string(Bus b) {
  return b == Bus::H ? "H" : b == Bus::L ? "L" : "F";
}

// Axes are numbered 1, 2, 3 as in the paper; arrays index them as axis - 1.
// Data (Y) bus of a stage along `axis`: the line that runs along it.
inline Bus data_bus(int axis) {
  return axis == 3 ? Bus::H : axis == 1 ? Bus::L : Bus::F;
}
// Coefficient (X) bus as the paper names it (Sec. 5.2-5.4): along 3 -> L, along 1 -> H,
// along 2 -> L.
inline Bus coeff_bus(int axis) {
  return axis == 1 ? Bus::H : Bus::L;
}
// The actuator that streams C_axis (doc/design.md §2): lateral C3, horizontal C1, frontal C2.
inline const char* actuator_name(int axis) {
  return axis == 3 ? "lateral" : axis == 1 ? "horizontal" : "frontal";
}

struct StagePlan {
  int axis = 3;      // summation axis, 1..3
  ext3 in_shape{};   // V: extent N_axis along axis
  ext3 out_shape{};  // W: extent K_axis along axis, others as in_shape
  index_t n() const { return in_shape[axis - 1]; }
  index_t k() const { return out_shape[axis - 1]; }
  // Number of Y lines (product of the two other extents).
  index_t lines() const {
    index_t p = 1;
    for (int d = 0; d < 3; ++d)
      if (d != axis - 1) p *= in_shape[d];
    return p;
  }
  Bus y_bus() const { return data_bus(axis); }
  Bus x_bus() const { return coeff_bus(axis); }
};

enum class ActuatorPlacement { automatic, colocated };

struct RankLayout {
  int world_size = 1;
  int n_bricks = 1;
  bool dedicated_actuators = false;           // true: world ranks n_bricks .. n_bricks+2
  std::array<int, 3> grid{1, 1, 1};           // brick ranks along axes 1..3
  std::array<int, 3> actuator_rank{0, 0, 0};  // world rank hosting the actuator of axis 1..3
  bool grid_modelled = false;  // the time model chose the grid (geometry/time_model.hpp)
};

struct Plan {
  ext3 in_shape{};   // X: (N1, N2, N3)
  ext3 out_shape{};  // Y: (K1, K2, K3)
  ext3 mesh{};       // physical cells (P1, P2, P3)
  // Folding (a mesh smaller than the problem): physical cell p along axis d holds the
  // block split_range(virtual_cells[d], mesh[d], p) of virtual cells, blocks at most one
  // apart; fold[d] is the largest block, 1 when P >= max(N, K).
  ext3 fold{1, 1, 1};
  ext3 virtual_cells{};  // max(N, K) per axis when folded, else P (spare cells idle)
  std::array<int, 3> stage_order{3, 1, 2};
  std::vector<StagePlan> stages;
  RankLayout ranks;

  bool folded() const { return fold[0] * fold[1] * fold[2] > 1; }
  // Virtual cells held by physical cell p along axis (1..3).
  Range phys_block(int axis, index_t p) const {
    return split_range(virtual_cells[axis - 1], mesh[axis - 1], p);
  }
  // Physical cell along axis (1..3) holding virtual cell i.
  index_t phys_of(int axis, index_t i) const {
    return owner_of(virtual_cells[axis - 1], mesh[axis - 1], i);
  }
  // Grid coordinates of brick rank r (row-major, as MPI_Cart_create with reorder = 0).
  std::array<int, 3> brick_coords(int r) const;
  int brick_rank(const std::array<int, 3>& c) const;
  // The (virtual) cells brick rank r owns: a block split of the physical mesh, at most one
  // physical cell apart, each physical cell standing for its block of virtual cells.
  Brick brick_cells(int r) const;
  // Range of virtual cells along axis (1..3) held by grid coordinate c.
  Range cell_range(int axis, int c) const;
  // Grid coordinate along axis (1..3) that holds virtual cell i.
  int owner_along(int axis, index_t i) const;
};

struct PlanRequest {
  ext3 in_shape{};
  ext3 out_shape{};
  std::optional<ext3> mesh;  // default: max(N, K) per axis; smaller folds
  std::array<int, 3> stage_order{3, 1, 2};
  int world_size = 1;
  std::optional<std::array<int, 3>> grid;  // fixed brick grid; else `balanced_dims`
  std::array<int, 3> balanced_dims{
      0, 0, 0};  // balanced factors of n_bricks (mpi::dims_create), if grid unset
  ActuatorPlacement actuators = ActuatorPlacement::automatic;
  bool grid_modelled = false;  // `grid` is the time model's choice, not the user's
};

// How many brick ranks a world of this size has (3 actuator ranks when >= 4 and automatic).
int brick_rank_count(int world_size, ActuatorPlacement placement);

// Validates and builds the plan; throws config_error with one clear line (mesh smaller
// than the problem, more brick ranks than cells along an axis, grid not matching the
// number of brick ranks, bad stage order).
Plan make_plan(const PlanRequest& req);

// "312" -> {3,1,2}; throws config_error unless a permutation of 1,2,3.
std::array<int, 3> parse_stage_order(const std::string& s);
std::string to_string(const std::array<int, 3>& order);

}  // namespace triada
