// BrickStage is plain data: every field checked against a direct enumeration of cells,
// ranks and planes (no split/owner arithmetic of the plan), over many shapes and grids.
#include <map>

#include "geometry/brick_stage.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

// Sizes of `parts` blocks of n items, at most one apart, the larger first.
std::vector<index_t> block_sizes(index_t n, int parts) {
  std::vector<index_t> s(static_cast<size_t>(parts), 0);
  for (index_t i = 0; i < n; ++i) ++s[static_cast<size_t>(i % parts)];
  return s;
}

// Per axis: physical cell of each virtual cell, and grid coordinate of each virtual cell.
struct AxisMap {
  std::vector<index_t> phys;
  std::vector<int> coord;
};

AxisMap axis_map(const Plan& p, int d) {
  AxisMap m;
  const auto fold = block_sizes(p.virtual_cells[d], static_cast<int>(p.mesh[d]));
  std::vector<index_t> phys_of_virtual;
  for (size_t q = 0; q < fold.size(); ++q)
    for (index_t j = 0; j < fold[q]; ++j) phys_of_virtual.push_back(static_cast<index_t>(q));
  const auto bricks = block_sizes(p.mesh[d], p.ranks.grid[d]);
  std::vector<int> coord_of_phys;
  for (size_t c = 0; c < bricks.size(); ++c)
    for (index_t j = 0; j < bricks[c]; ++j) coord_of_phys.push_back(static_cast<int>(c));
  m.phys = phys_of_virtual;
  for (index_t q : phys_of_virtual) m.coord.push_back(coord_of_phys[static_cast<size_t>(q)]);
  return m;
}

// Relative ids of physical cells in order of first appearance.
std::vector<index_t> first_seen_ids(const std::vector<index_t>& phys, index_t& distinct) {
  std::map<index_t, index_t> id;
  std::vector<index_t> out;
  for (index_t q : phys) {
    auto it = id.find(q);
    if (it == id.end()) it = id.emplace(q, static_cast<index_t>(id.size())).first;
    out.push_back(it->second);
  }
  distinct = static_cast<index_t>(id.size());
  return out;
}

void check_stage(const Plan& p, const std::array<AxisMap, 3>& maps, int s,
                 const std::array<int, 3>& c, int rank, std::size_t elem, std::size_t batch_bytes) {
  const StagePlan& sp = p.stages[static_cast<size_t>(s)];
  const BrickStage bs = make_brick_stage(p, s, c, elem, batch_bytes);
  const int a = sp.axis - 1;
  INFO("stage " << s << " axis " << sp.axis << " brick " << rank);
  CHECK(bs.axis == sp.axis);
  CHECK(bs.brick_rank == rank);
  CHECK(bs.n == sp.in_shape[a]);
  CHECK(bs.k == sp.out_shape[a]);
  std::vector<int> others;
  for (int d = 0; d < 3; ++d)
    if (d != a) others.push_back(d);
  CHECK(bs.line_axes == std::array<int, 2>{others[0], others[1]});

  // Boxes: the brick's virtual cells, then those inside each shape.
  ext3 union_shape = sp.in_shape;
  union_shape[a] = std::max(sp.in_shape[a], sp.out_shape[a]);
  std::array<std::vector<index_t>, 3> mine;
  for (int d = 0; d < 3; ++d)
    for (index_t i = 0; i < p.virtual_cells[d]; ++i)
      if (maps[d].coord[static_cast<size_t>(i)] == c[d]) mine[d].push_back(i);
  auto check_box = [&](const Brick& b, const ext3& shape) {
    for (int d = 0; d < 3; ++d) {
      index_t n = 0;
      for (index_t i : mine[d]) n += i < shape[d] ? 1 : 0;
      CHECK(b.lo[d] == mine[d].front());
      CHECK(b.extent(d) == n);
    }
  };
  for (int d = 0; d < 3; ++d) {
    CHECK(bs.cells.lo[d] == mine[d].front());
    CHECK(bs.cells.hi[d] == mine[d].back() + 1);
    CHECK(bs.cells.extent(d) == static_cast<index_t>(mine[d].size()));
  }
  check_box(bs.in_box, sp.in_shape);
  check_box(bs.out_box, sp.out_shape);
  check_box(bs.union_box, union_shape);
  CHECK(bs.plane_lo == mine[a].front());
  CHECK(bs.in_planes == bs.in_box.extent(a));
  CHECK(bs.out_planes == bs.out_box.extent(a));
  index_t lines = 0;
  for (index_t i : mine[others[0]])
    for (index_t j : mine[others[1]])
      lines += (i < sp.in_shape[others[0]] && j < sp.in_shape[others[1]]) ? 1 : 0;
  CHECK(bs.n_lines == lines);
  CHECK(bs.line_extent[0] * bs.line_extent[1] == lines);

  // The line: every brick rank sharing the other two coordinates, by coordinate along a.
  std::vector<int> members;
  int r = 0;
  for (int i = 0; i < p.ranks.grid[0]; ++i)
    for (int j = 0; j < p.ranks.grid[1]; ++j)
      for (int l = 0; l < p.ranks.grid[2]; ++l, ++r) {
        const std::array<int, 3> rc{i, j, l};
        if (rc[others[0]] == c[others[0]] && rc[others[1]] == c[others[1]]) members.push_back(r);
      }
  CHECK(bs.line_members == members);
  CHECK(bs.line_size == static_cast<int>(members.size()));
  CHECK(bs.line_members[static_cast<size_t>(bs.line_rank)] == rank);
  REQUIRE(bs.member_planes.size() == members.size());
  for (int m = 0; m < bs.line_size; ++m) {
    index_t lo = -1, hi = -1, below_n = 0;
    for (index_t i = 0; i < p.virtual_cells[a]; ++i)
      if (maps[a].coord[static_cast<size_t>(i)] == m) {
        if (lo < 0) lo = i;
        hi = i + 1;
        below_n += i < sp.in_shape[a] ? 1 : 0;
      }
    CHECK(bs.member_planes[static_cast<size_t>(m)].lo == lo);
    CHECK(bs.member_planes[static_cast<size_t>(m)].hi == hi);
    CHECK(bs.member_in_planes[static_cast<size_t>(m)] == below_n);
  }
  REQUIRE(bs.plane_owner.size() == static_cast<size_t>(sp.in_shape[a]));
  for (index_t t = 0; t < sp.in_shape[a]; ++t) {
    CHECK(bs.plane_owner[static_cast<size_t>(t)] == maps[a].coord[static_cast<size_t>(t)]);
    CHECK(bs.owns_plane(t) == (maps[a].coord[static_cast<size_t>(t)] == c[a]));
  }

  // Fold tables: physical cells numbered in order of first appearance.
  CHECK(bs.axis_folded == (p.fold[a] > 1));
  CHECK(bs.lines_folded == (p.fold[others[0]] > 1 || p.fold[others[1]] > 1));
  std::vector<index_t> plane_phys;
  for (index_t i = bs.union_box.lo[a]; i < bs.union_box.hi[a]; ++i)
    plane_phys.push_back(maps[a].phys[static_cast<size_t>(i)]);
  index_t n_planes = 0;
  const auto plane_ids = first_seen_ids(plane_phys, n_planes);
  std::vector<index_t> plane_cells;
  for (index_t q = 0; q < static_cast<index_t>(plane_phys.size()); ++q)
    plane_cells.push_back(bs.plane_cell(q));
  CHECK(plane_cells == plane_ids);
  CHECK(bs.phys_plane == (bs.axis_folded ? plane_ids : std::vector<index_t>{}));
  CHECK(bs.n_phys_planes == n_planes);
  std::vector<index_t> p1, p2;
  for (index_t i = bs.union_box.lo[others[0]]; i < bs.union_box.hi[others[0]]; ++i)
    p1.push_back(maps[others[0]].phys[static_cast<size_t>(i)]);
  for (index_t j = bs.union_box.lo[others[1]]; j < bs.union_box.hi[others[1]]; ++j)
    p2.push_back(maps[others[1]].phys[static_cast<size_t>(j)]);
  index_t n1 = 0, n2 = 0;
  const auto id1 = first_seen_ids(p1, n1), id2 = first_seen_ids(p2, n2);
  std::vector<index_t> line_phys;
  for (index_t x : id1)
    for (index_t y : id2) line_phys.push_back(x * n2 + y);
  std::vector<index_t> line_cells;
  for (index_t ln = 0; ln < bs.n_lines; ++ln) line_cells.push_back(bs.line_cell(ln));
  CHECK(line_cells == line_phys);
  CHECK(bs.phys_line == (bs.lines_folded ? line_phys : std::vector<index_t>{}));
  CHECK(bs.n_phys_lines == (line_phys.empty() ? 0 : n1 * n2));

  // Batch budget, and the planes per batch as the largest count that fits it.
  const index_t budget =
      batch_bytes > 0
          ? static_cast<index_t>(batch_bytes)
          : std::max<index_t>(2 << 20, bs.in_box.count() * static_cast<index_t>(elem) / 4);
  CHECK(bs.batch_budget == budget);
  for (index_t steps : {index_t{0}, index_t{1}, sp.in_shape[a]}) {
    const index_t all = std::max<index_t>(steps, 1);
    CHECK(bs.batch_planes(steps, true) == all);
    index_t b = 1;
    const index_t plane = std::max<index_t>(1, lines * static_cast<index_t>(elem));
    if (bs.line_size == 1)
      b = all;
    else
      while (b < all && (b + 1) * plane <= budget) ++b;
    CHECK(bs.batch_planes(steps, false) == b);
  }
}

void check_plan(const Plan& p) {
  std::array<AxisMap, 3> maps{axis_map(p, 0), axis_map(p, 1), axis_map(p, 2)};
  const auto& g = p.ranks.grid;
  int rank = 0;
  for (int i = 0; i < g[0]; ++i)
    for (int j = 0; j < g[1]; ++j)
      for (int l = 0; l < g[2]; ++l, ++rank) {
        const std::array<int, 3> c{i, j, l};
        index_t most = 0;
        for (int s = 0; s < static_cast<int>(p.stages.size()); ++s) {
          check_stage(p, maps, s, c, rank, s % 2 ? 16 : 8, s == 1 ? 1000 : 0);
          most = std::max(most, make_brick_stage(p, s, c, 8).out_box.count());
        }
        CHECK(register_elements(p, c) == most);
      }
  for (int s = 0; s < static_cast<int>(p.stages.size()); ++s) {
    const auto ranges = stage_plane_ranges(p, s);
    REQUIRE(ranges.size() == static_cast<size_t>(p.ranks.n_bricks));
    for (int r = 0; r < p.ranks.n_bricks; ++r) {
      const BrickStage bs = make_brick_stage(p, s, p.brick_coords(r), 8);
      CHECK(ranges[static_cast<size_t>(r)].lo ==
            bs.member_planes[static_cast<size_t>(bs.line_rank)].lo);
      CHECK(ranges[static_cast<size_t>(r)].hi ==
            bs.member_planes[static_cast<size_t>(bs.line_rank)].hi);
    }
  }
}

Plan plan_for(ext3 n, ext3 k, std::optional<ext3> mesh, std::array<int, 3> grid,
              std::array<int, 3> order) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = k;
  r.mesh = mesh;
  r.grid = grid;
  r.world_size = grid[0] * grid[1] * grid[2];
  r.actuators = ActuatorPlacement::colocated;
  r.stage_order = order;
  return make_plan(r);
}

}  // namespace

TEST_CASE("BrickStage matches a direct enumeration of cells, lines and planes", "[brick_stage]") {
  struct Shape {
    ext3 n, k;
    std::optional<ext3> mesh;
  };
  const std::vector<Shape> shapes{
      {{7, 5, 3}, {4, 9, 6}, std::nullopt},     // non-cubic, odd, N != K
      {{7, 5, 3}, {4, 9, 6}, ext3{3, 4, 2}},    // folded along every axis
      {{9, 2, 11}, {9, 2, 11}, ext3{4, 2, 5}},  // folded, square stages
      {{5, 6, 4}, {3, 6, 2}, ext3{8, 10, 7}},   // a larger mesh: spare cells
      {{13, 1, 6}, {2, 3, 8}, ext3{5, 3, 8}},   // folded along one axis only
  };
  const std::vector<std::array<int, 3>> orders{{3, 1, 2}, {1, 2, 3}, {2, 3, 1}};
  for (const Shape& sh : shapes)
    for (const auto& order : orders)
      for (int g0 = 1; g0 <= 4; ++g0)
        for (int g1 = 1; g1 <= 3; ++g1)
          for (int g2 = 1; g2 <= 4; ++g2) {
            const ext3 mesh = sh.mesh ? *sh.mesh
                                      : ext3{std::max(sh.n[0], sh.k[0]), std::max(sh.n[1], sh.k[1]),
                                             std::max(sh.n[2], sh.k[2])};
            if (g0 > mesh[0] || g1 > mesh[1] || g2 > mesh[2]) continue;
            INFO("shape " << to_string(sh.n) << " -> " << to_string(sh.k) << " grid " << g0 << "x"
                          << g1 << "x" << g2 << " order " << to_string(order));
            check_plan(plan_for(sh.n, sh.k, sh.mesh, {g0, g1, g2}, order));
          }
}

TEST_CASE("BrickStage's batch budget follows plane_batch_bytes, else a quarter brick",
          "[brick_stage]") {
  // 64^3 doubles on 2 x 1 x 1 bricks: a brick of 32 x 64 x 64 = 1 MiB, so 2 MiB wins;
  // a plane of axis 1 (64 x 64 lines) is 32 KiB: 64 planes per batch.
  const Plan p = plan_for({64, 64, 64}, {64, 64, 64}, std::nullopt, {2, 1, 1}, {1, 2, 3});
  const BrickStage bs = make_brick_stage(p, 0, {0, 0, 0}, 8);
  CHECK(bs.batch_budget == (index_t{2} << 20));
  CHECK(bs.batch_planes(64, false) == 64);
  CHECK(bs.batch_planes(100, false) == 64);
  CHECK(bs.batch_planes(100, true) == 100);
  const BrickStage small = make_brick_stage(p, 0, {1, 0, 0}, 8, 100000);
  CHECK(small.batch_budget == 100000);
  CHECK(small.batch_planes(64, false) == 3);  // 3 x 32 KiB fit in 100000 bytes
  CHECK(small.line_rank == 1);
  CHECK(small.line_members == std::vector<int>{0, 1});
}
