#include "geometry/plan.hpp"

#include <algorithm>
#include <numeric>

#include "core/checked.hpp"
#include "core/error.hpp"

namespace triada {

std::array<int, 3> Plan::brick_coords(int r) const {
  const auto& g = ranks.grid;
  return {r / (g[1] * g[2]), (r / g[2]) % g[1], r % g[2]};
}

int Plan::brick_rank(const std::array<int, 3>& c) const {
  const auto& g = ranks.grid;
  return (c[0] * g[1] + c[1]) * g[2] + c[2];
}

Range Plan::cell_range(int axis, int c) const {
  const int d = axis - 1;
  const Range phys = split_range(mesh[d], ranks.grid[d], c);
  return {phys_block(axis, phys.lo).lo, phys_block(axis, phys.hi - 1).hi};
}

int Plan::owner_along(int axis, index_t i) const {
  const int d = axis - 1;
  // A grid coordinate: below ranks.grid[d], an int.
  return static_cast<int>(owner_of(mesh[d], ranks.grid[d], phys_of(axis, i)));
}

Brick Plan::brick_cells(int r) const {
  const auto c = brick_coords(r);
  Brick b;
  for (int d = 0; d < 3; ++d) {
    const Range rg = cell_range(d + 1, c[d]);
    b.lo[d] = rg.lo;
    b.hi[d] = rg.hi;
  }
  return b;
}

int brick_rank_count(int world_size, ActuatorPlacement placement) {
  return (world_size >= 4 && placement == ActuatorPlacement::automatic) ? world_size - 3
                                                                        : world_size;
}

std::array<int, 3> parse_stage_order(const std::string& s) {
  std::array<int, 3> o{};
  bool ok = s.size() == 3;
  for (size_t i = 0; ok && i < 3; ++i) {
    ok = s[i] >= '1' && s[i] <= '3';
    if (ok) o[i] = s[i] - '0';
  }
  if (ok) {
    auto sorted = o;
    std::sort(sorted.begin(), sorted.end());
    ok = sorted == std::array<int, 3>{1, 2, 3};
  }
  if (!ok) throw config_error("expected a permutation of 1, 2, 3 such as 312, got '" + s + "'");
  return o;
}

std::string to_string(const std::array<int, 3>& order) {
  return std::to_string(order[0]) + std::to_string(order[1]) + std::to_string(order[2]);
}

Plan make_plan(const PlanRequest& req) {
  Plan p;
  p.in_shape = req.in_shape;
  p.out_shape = req.out_shape;
  p.stage_order = req.stage_order;
  for (int d = 0; d < 3; ++d) {
    if (req.in_shape[d] < 1 || req.out_shape[d] < 1)
      throw input_error("problem shape " + to_string(req.in_shape) + " -> " +
                        to_string(req.out_shape) + " has an empty extent");
    p.mesh[d] = std::max(req.in_shape[d], req.out_shape[d]);
  }
  p.virtual_cells = p.mesh;
  if (req.mesh) {
    // A smaller mesh folds: each physical cell holds a block of ceil(V / P) virtual cells.
    for (int d = 0; d < 3; ++d) {
      const index_t P = (*req.mesh)[d];
      if (P < 1) throw config_error("mesh.cells: every extent must be positive");
      if (P > (index_t{1} << 30)) throw config_error("mesh.cells: too many cells along an axis");
      p.fold[d] = (p.virtual_cells[d] + P - 1) / P;
      if (p.fold[d] == 1) p.virtual_cells[d] = P;  // a larger mesh: spare cells idle
    }
    p.mesh = *req.mesh;
  }
  // Every buffer, counter and report figure is sized from these counts: they must fit.
  checked_product<index_t>(p.in_shape, "input shape " + to_string(p.in_shape));
  checked_product<index_t>(p.out_shape, "output shape " + to_string(p.out_shape));
  checked_product<index_t>(p.mesh, "mesh.cells " + to_string(p.mesh) + " (number of cells)");
  checked_product<index_t>(p.virtual_cells,
                           "mesh of " + to_string(p.virtual_cells) + " virtual cells");
  {
    auto sorted = req.stage_order;
    std::sort(sorted.begin(), sorted.end());
    if (sorted != std::array<int, 3>{1, 2, 3})
      throw config_error("stage order must be a permutation of 1, 2, 3");
  }

  RankLayout& L = p.ranks;
  L.world_size = req.world_size;
  L.n_bricks = brick_rank_count(req.world_size, req.actuators);
  L.dedicated_actuators = L.n_bricks != req.world_size;
  if (req.grid) {
    L.grid = *req.grid;
    L.grid_modelled = req.grid_modelled;
    const long prod = long(L.grid[0]) * L.grid[1] * L.grid[2];
    if (L.grid[0] < 1 || L.grid[1] < 1 || L.grid[2] < 1 || prod != L.n_bricks)
      throw config_error("ranks.grid: a " + std::to_string(L.grid[0]) + "x" +
                         std::to_string(L.grid[1]) + "x" + std::to_string(L.grid[2]) +
                         " brick grid needs " + std::to_string(prod) + " brick ranks, but " +
                         std::to_string(req.world_size) + " ranks give " +
                         std::to_string(L.n_bricks) + " brick ranks" +
                         (L.dedicated_actuators ? " (3 are actuator ranks)" : ""));
  } else {
    // MPI_Dims_create's factors (non-increasing) go to the axes with the most cells, so
    // that a non-cubic mesh gets a grid that fits it.
    std::array<int, 3> dims = req.balanced_dims;
    if (long(dims[0]) * dims[1] * dims[2] != L.n_bricks)
      throw config_error("internal: balanced dims do not multiply to the brick rank count");
    std::sort(dims.begin(), dims.end(), std::greater<>());
    std::array<int, 3> axes{0, 1, 2};
    std::stable_sort(axes.begin(), axes.end(), [&](int a, int b) { return p.mesh[a] > p.mesh[b]; });
    for (int i = 0; i < 3; ++i) L.grid[axes[i]] = dims[i];
  }
  for (int d = 0; d < 3; ++d)
    if (L.grid[d] > p.mesh[d])
      throw config_error(std::to_string(L.n_bricks) + " brick ranks in a " +
                         std::to_string(L.grid[0]) + "x" + std::to_string(L.grid[1]) + "x" +
                         std::to_string(L.grid[2]) + " grid put " + std::to_string(L.grid[d]) +
                         " ranks along axis " + std::to_string(d + 1) + ", which has only " +
                         std::to_string(p.mesh[d]) + " cells; use fewer ranks or set ranks.grid");
  for (int a = 1; a <= 3; ++a)
    L.actuator_rank[a - 1] = L.dedicated_actuators ? L.n_bricks + (a - 1) : (a - 1) % L.n_bricks;

  ext3 shape = req.in_shape;
  for (int axis : req.stage_order) {
    StagePlan s;
    s.axis = axis;
    s.in_shape = shape;
    shape[axis - 1] = req.out_shape[axis - 1];
    s.out_shape = shape;
    p.stages.push_back(s);
  }
  return p;
}

}  // namespace triada
