// The plan is plain data: decomposition and stage shapes checked without MPI.
#include <set>

#include "core/error.hpp"
#include "geometry/plan.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {
PlanRequest request(ext3 n, ext3 k, int world, std::array<int, 3> dims) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = k;
  r.world_size = world;
  r.balanced_dims = dims;
  return r;
}
}  // namespace

TEST_CASE("split_range gives ranges at most one apart that tile 0 .. n-1", "[plan]") {
  for (index_t n : {1, 5, 7, 12, 100})
    for (int parts = 1; parts <= n && parts <= 9; ++parts) {
      index_t next = 0, lo = n, hi = 0;
      for (int p = 0; p < parts; ++p) {
        const Range r = split_range(n, parts, p);
        CHECK(r.lo == next);
        next = r.hi;
        lo = std::min(lo, r.hi - r.lo);
        hi = std::max(hi, r.hi - r.lo);
        for (index_t i = r.lo; i < r.hi; ++i) CHECK(owner_of(n, parts, i) == p);
      }
      CHECK(next == n);
      CHECK(hi - lo <= 1);
    }
}

TEST_CASE("bricks tile the mesh exactly once and differ by at most one cell per axis", "[plan]") {
  const Plan p = make_plan(request({7, 12, 5}, {7, 12, 5}, 12, {3, 3, 1}));
  CHECK(p.ranks.n_bricks == 9);
  CHECK(p.ranks.dedicated_actuators);
  CHECK(p.ranks.actuator_rank == std::array<int, 3>{9, 10, 11});
  std::vector<int> hits(7 * 12 * 5, 0);
  for (int r = 0; r < p.ranks.n_bricks; ++r) {
    const Brick b = p.brick_cells(r);
    CHECK(p.brick_rank(p.brick_coords(r)) == r);
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (index_t l = b.lo[2]; l < b.hi[2]; ++l) ++hits[(i * 12 + j) * 5 + l];
  }
  for (int h : hits) CHECK(h == 1);
}

TEST_CASE("the largest grid factor goes to the axis with the most cells", "[plan]") {
  const Plan p = make_plan(request({4, 30, 9}, {4, 30, 9}, 9, {3, 2, 1}));
  CHECK(p.ranks.grid == std::array<int, 3>{1, 3, 2});
}

TEST_CASE("three actuator ranks from four ranks on, co-located below or when asked", "[plan]") {
  CHECK(brick_rank_count(1, ActuatorPlacement::automatic) == 1);
  CHECK(brick_rank_count(3, ActuatorPlacement::automatic) == 3);
  CHECK(brick_rank_count(4, ActuatorPlacement::automatic) == 1);
  CHECK(brick_rank_count(5, ActuatorPlacement::automatic) == 2);
  CHECK(brick_rank_count(5, ActuatorPlacement::colocated) == 5);
  const Plan p = make_plan(request({4, 4, 4}, {4, 4, 4}, 2, {2, 1, 1}));
  CHECK(p.ranks.actuator_rank == std::array<int, 3>{0, 1, 0});
}

TEST_CASE("stage shapes follow the stage order with K replacing N on the summed axis", "[plan]") {
  PlanRequest r = request({7, 12, 5}, {3, 15, 6}, 1, {1, 1, 1});
  r.stage_order = {2, 3, 1};
  const Plan p = make_plan(r);
  REQUIRE(p.stages.size() == 3);
  CHECK(p.mesh == ext3{7, 15, 6});
  CHECK(p.stages[0].in_shape == ext3{7, 12, 5});
  CHECK(p.stages[0].out_shape == ext3{7, 15, 5});
  CHECK(p.stages[1].out_shape == ext3{7, 15, 6});
  CHECK(p.stages[2].out_shape == ext3{3, 15, 6});
  CHECK(p.stages[2].lines() == 15 * 6);
  // Buses of doc/design.md §2.
  CHECK(p.stages[0].y_bus() == Bus::F);
  CHECK(p.stages[0].x_bus() == Bus::L);
  CHECK(p.stages[1].y_bus() == Bus::H);
  CHECK(p.stages[1].x_bus() == Bus::L);
  CHECK(p.stages[2].y_bus() == Bus::L);
  CHECK(p.stages[2].x_bus() == Bus::H);
}

TEST_CASE("more brick ranks than cells along an axis is a config error", "[plan][errors]") {
  PlanRequest r = request({2, 2, 2}, {2, 2, 2}, 27, {3, 3, 2});
  r.world_size = 21;  // 18 bricks
  CHECK_THROWS_AS(make_plan(r), config_error);
  PlanRequest g = request({7, 12, 5}, {7, 12, 5}, 2, {2, 1, 1});
  g.grid = std::array<int, 3>{1, 1, 6};
  g.world_size = 9;  // 6 bricks, 6 > 5 cells along axis 3
  CHECK_THROWS_WITH(make_plan(g), Catch::Contains("axis 3") && Catch::Contains("only 5 cells"));
  g.grid = std::array<int, 3>{2, 2, 2};  // 8 != 6 brick ranks
  CHECK_THROWS_WITH(make_plan(g), Catch::Contains("needs 8 brick ranks"));
}

TEST_CASE("a mesh smaller than the problem folds and a larger one leaves spare cells", "[plan]") {
  PlanRequest r = request({100, 60, 90}, {100, 60, 90}, 3, {3, 1, 1});
  r.mesh = ext3{32, 32, 32};
  const Plan p = make_plan(r);
  CHECK(p.mesh == ext3{32, 32, 32});
  CHECK(p.fold == ext3{4, 2, 3});
  CHECK(p.virtual_cells == ext3{100, 60, 90});
  CHECK(p.folded());
  // Every virtual cell belongs to exactly one physical cell and one brick, and the
  // physical blocks differ by at most one virtual cell.
  for (int axis = 1; axis <= 3; ++axis) {
    index_t next = 0, small = 1000, big = 0;
    for (index_t q = 0; q < 32; ++q) {
      const Range b = p.phys_block(axis, q);
      CHECK(b.lo == next);
      next = b.hi;
      small = std::min(small, b.hi - b.lo);
      big = std::max(big, b.hi - b.lo);
      for (index_t i = b.lo; i < b.hi; ++i) CHECK(p.phys_of(axis, i) == q);
    }
    CHECK(next == p.virtual_cells[axis - 1]);
    CHECK(big - small <= 1);
    CHECK(big == p.fold[axis - 1]);
    next = 0;
    for (int c = 0; c < p.ranks.grid[axis - 1]; ++c) {
      const Range rg = p.cell_range(axis, c);
      CHECK(rg.lo == next);
      next = rg.hi;
      for (index_t i = rg.lo; i < rg.hi; ++i) CHECK(p.owner_along(axis, i) == c);
    }
    CHECK(next == p.virtual_cells[axis - 1]);
  }
  PlanRequest big_mesh = request({7, 12, 5}, {7, 12, 5}, 1, {1, 1, 1});
  big_mesh.mesh = ext3{16, 16, 16};
  const Plan q = make_plan(big_mesh);
  CHECK(q.mesh == ext3{16, 16, 16});
  CHECK_FALSE(q.folded());
  CHECK(q.brick_cells(0).hi == ext3{16, 16, 16});
}

TEST_CASE("stage order strings are permutations of 123", "[plan][errors]") {
  CHECK(parse_stage_order("312") == std::array<int, 3>{3, 1, 2});
  CHECK(parse_stage_order("123") == std::array<int, 3>{1, 2, 3});
  for (const char* bad : {"", "12", "1234", "112", "124", "abc"})
    CHECK_THROWS_AS(parse_stage_order(bad), config_error);
}

// Axes of 2^31 cells and more: every index, part and cell is 64-bit (an int would wrap).
TEST_CASE("an axis of 2^31 or 2^32 + 3 cells splits, folds and tiles without wrapping",
          "[plan][sizes]") {
  for (const index_t n : {index_t{1} << 31, (index_t{1} << 32) + 3}) {
    // One part per cell, and a few parts: the last part ends at n.
    CHECK(split_range(n, n, n - 1).lo == n - 1);
    CHECK(split_range(n, n, n - 1).hi == n);
    CHECK(owner_of(n, n, n - 1) == n - 1);
    CHECK(owner_of(n, 3, n - 1) == 2);
    CHECK(split_range(n, 3, 2).hi == n);
    for (const int world : {1, 3}) {
      const Plan p = make_plan(request({n, 1, 1}, {n, 1, 1}, world, {world, 1, 1}));
      CHECK(p.mesh == ext3{n, 1, 1});
      index_t next = 0;
      for (int r = 0; r < p.ranks.n_bricks; ++r) {
        const Brick b = p.brick_cells(r);
        CHECK(b.lo == ext3{next, 0, 0});
        CHECK(b.hi[0] > b.lo[0]);
        CHECK(b.hi[0] - b.lo[0] <= n / world + 1);
        CHECK(p.owner_along(1, b.hi[0] - 1) == r);
        next = b.hi[0];
      }
      CHECK(next == n);
      CHECK(p.phys_of(1, n - 1) == n - 1);
      CHECK(p.phys_block(1, n - 1).hi == n);
    }
    // Folded onto 2^30 physical cells: blocks of ceil(n / 2^30) virtual cells at most.
    PlanRequest r = request({n, 1, 1}, {n, 1, 1}, 2, {2, 1, 1});
    r.mesh = ext3{index_t{1} << 30, 1, 1};
    const Plan f = make_plan(r);
    CHECK(f.fold[0] == (n + (index_t{1} << 30) - 1) >> 30);
    CHECK(f.phys_block(1, (index_t{1} << 30) - 1).hi == n);
    CHECK(f.phys_of(1, n - 1) == (index_t{1} << 30) - 1);
    CHECK(f.brick_cells(1).hi[0] == n);
    CHECK(f.brick_cells(0).hi[0] == f.brick_cells(1).lo[0]);
  }
}
