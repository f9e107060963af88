#include "geometry/brick_stage.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace triada {

namespace {

// Line members, their planes along the axis and the owner of every pivot plane.
void fill_line(const Plan& plan, BrickStage& bs) {
  bs.line_size = plan.ranks.grid[bs.a];
  bs.line_rank = bs.coords[bs.a];
  std::array<int, 3> c = bs.coords;
  for (int r = 0; r < bs.line_size; ++r) {
    c[bs.a] = r;
    bs.line_members.push_back(plan.brick_rank(c));
    const Range rg = plan.cell_range(bs.axis, r);
    bs.member_planes.push_back(rg);
    bs.member_in_planes.push_back(
        std::max<index_t>(0, std::min(rg.hi, bs.n) - std::min(rg.lo, bs.n)));
  }
  bs.plane_owner.resize(static_cast<std::size_t>(bs.n));
  for (index_t t = 0; t < bs.n; ++t)
    bs.plane_owner[static_cast<std::size_t>(t)] = plan.owner_along(bs.axis, t);
}

// Physical cell of each plane and line of the brick, relative to its first (folding).
void fill_fold(const Plan& plan, BrickStage& bs) {
  const auto [d1, d2] = bs.line_axes;
  const Brick& u = bs.union_box;
  bs.axis_folded = plan.fold[bs.a] > 1;
  bs.lines_folded = plan.fold[d1] > 1 || plan.fold[d2] > 1;
  // Unfolded, a physical cell holds one virtual cell (Plan::phys_of is the identity).
  const index_t planes = u.extent(bs.a);
  if (planes > 0 && bs.axis_folded) {
    const index_t p0 = plan.phys_of(bs.axis, u.lo[bs.a]);
    bs.phys_plane.resize(static_cast<std::size_t>(planes));
    for (index_t p = 0; p < planes; ++p)
      bs.phys_plane[static_cast<std::size_t>(p)] = plan.phys_of(bs.axis, u.lo[bs.a] + p) - p0;
  }
  if (planes > 0) bs.n_phys_planes = bs.plane_cell(planes - 1) + 1;
  if (bs.n_lines > 0 && bs.lines_folded) {
    const index_t le2 = bs.line_extent[1];
    const index_t q1 = plan.phys_of(d1 + 1, u.lo[d1]), q2 = plan.phys_of(d2 + 1, u.lo[d2]);
    const index_t n2 = plan.phys_of(d2 + 1, u.lo[d2] + le2 - 1) - q2 + 1;
    bs.phys_line.resize(static_cast<std::size_t>(bs.n_lines));
    for (index_t ln = 0; ln < bs.n_lines; ++ln) {
      const index_t g1 = u.lo[d1] + ln / le2, g2 = u.lo[d2] + ln % le2;
      bs.phys_line[static_cast<std::size_t>(ln)] =
          (plan.phys_of(d1 + 1, g1) - q1) * n2 + (plan.phys_of(d2 + 1, g2) - q2);
    }
  }
  if (bs.n_lines > 0) bs.n_phys_lines = bs.line_cell(bs.n_lines - 1) + 1;
}

}  // namespace

BrickStage make_brick_stage(const Plan& plan, int stage_index, const std::array<int, 3>& coords,
                            std::size_t element_bytes, std::size_t plane_batch_bytes) {
  if (stage_index < 0 || stage_index >= static_cast<int>(plan.stages.size()))
    throw internal_error("make_brick_stage: no such stage");
  const StagePlan& sp = plan.stages[static_cast<std::size_t>(stage_index)];
  BrickStage bs;
  bs.stage = stage_index;
  bs.axis = sp.axis;
  bs.a = sp.axis - 1;
  bs.line_axes = {bs.a == 0 ? 1 : 0, bs.a == 2 ? 1 : 2};
  bs.n = sp.n();
  bs.k = sp.k();
  bs.coords = coords;
  bs.brick_rank = plan.brick_rank(coords);
  bs.cells = plan.brick_cells(bs.brick_rank);
  bs.in_box = bs.cells.intersect(whole(sp.in_shape));
  bs.out_box = bs.cells.intersect(whole(sp.out_shape));
  ext3 union_shape = sp.in_shape;
  union_shape[bs.a] = std::max(bs.n, bs.k);
  bs.union_box = bs.cells.intersect(whole(union_shape));
  bs.plane_lo = bs.cells.lo[bs.a];
  bs.in_planes = bs.in_box.extent(bs.a);
  bs.out_planes = bs.out_box.extent(bs.a);
  // Brick::intersect keeps the line extents even where the brick holds no plane.
  bs.line_extent = {bs.in_box.extent(bs.line_axes[0]), bs.in_box.extent(bs.line_axes[1])};
  bs.n_lines = bs.line_extent[0] * bs.line_extent[1];
  fill_line(plan, bs);
  fill_fold(plan, bs);
  bs.element_bytes = element_bytes;
  bs.batch_budget =
      plane_batch_bytes > 0
          ? static_cast<index_t>(plane_batch_bytes)
          : std::max<index_t>(index_t{2} << 20,
                              bs.in_box.count() * static_cast<index_t>(element_bytes) / 4);
  return bs;
}

index_t BrickStage::batch_planes(index_t steps, bool in_place) const {
  const index_t all = std::max<index_t>(steps, 1);
  if (line_size == 1 || in_place) return all;
  const index_t plane_bytes = std::max<index_t>(1, n_lines * static_cast<index_t>(element_bytes));
  return std::clamp<index_t>(batch_budget / plane_bytes, 1, all);
}

std::vector<Range> stage_plane_ranges(const Plan& plan, int stage_index) {
  const int axis = plan.stages[static_cast<std::size_t>(stage_index)].axis;
  std::vector<Range> out;
  for (int r = 0; r < plan.ranks.n_bricks; ++r)
    out.push_back(plan.cell_range(axis, plan.brick_coords(r)[axis - 1]));
  return out;
}

index_t register_elements(const Plan& plan, const std::array<int, 3>& coords) {
  const Brick cells = plan.brick_cells(plan.brick_rank(coords));
  index_t most = 0;
  for (const auto& st : plan.stages)
    most = std::max(most, cells.intersect(whole(st.out_shape)).count());
  return most;
}

}  // namespace triada
