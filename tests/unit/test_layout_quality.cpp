// The rank layout's verdict and the world sizes it suggests (geometry/layout_quality.hpp),
// and the dense MPI traffic model (counters/mpi_model.hpp) against doc/model.md's closed form.
#include <algorithm>
#include <limits>

#include "counters/mpi_model.hpp"
#include "geometry/layout_quality.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

// Balanced factors by brute force: the triple of factors of n, non-increasing, whose
// largest / smallest ratio is least (what MPI_Dims_create gives).
std::array<int, 3> balanced(int n) {
  std::array<int, 3> best{n, 1, 1};
  double ratio = std::numeric_limits<double>::max();
  for (int a = 1; a <= n; ++a)
    for (int b = 1; b <= a; ++b)
      if (n % (a * b) == 0 && n / (a * b) <= b && double(a) / (n / (a * b)) < ratio) {
        ratio = double(a) / (n / (a * b));
        best = {a, b, n / (a * b)};
      }
  return best;
}

PlanRequest request(ext3 shape, int world, ActuatorPlacement act = ActuatorPlacement::automatic) {
  PlanRequest r;
  r.in_shape = r.out_shape = shape;
  r.world_size = world;
  r.actuators = act;
  r.balanced_dims = balanced(brick_rank_count(world, act));
  return r;
}

std::vector<int> worlds(const std::vector<LayoutChoice>& c) {
  std::vector<int> w;
  for (const LayoutChoice& x : c) w.push_back(x.world_size);
  return w;
}

}  // namespace

TEST_CASE("the oracle's balanced factors are MPI_Dims_create's on small counts", "[layout]") {
  CHECK(balanced(5) == std::array<int, 3>{5, 1, 1});
  CHECK(balanced(4) == std::array<int, 3>{2, 2, 1});
  CHECK(balanced(8) == std::array<int, 3>{2, 2, 2});
  CHECK(balanced(12) == std::array<int, 3>{3, 2, 2});
}

TEST_CASE("one brick rank among four ranks is a poor layout", "[layout]") {
  const LayoutVerdict v = judge_layout(make_plan(request({15, 9, 7}, 4)));
  CHECK(v.poor);
  CHECK(v.one_brick);
  // A one-rank run is not: no rank is idle.
  CHECK_FALSE(judge_layout(make_plan(request({15, 9, 7}, 1))).poor);
}

TEST_CASE("a 5x1x1 slab of a near-cubic mesh is poor, a 2x2x1 grid is not", "[layout]") {
  const Plan slab = make_plan(request({15, 9, 7}, 8));
  CHECK(slab.ranks.grid == std::array<int, 3>{5, 1, 1});
  const LayoutVerdict v = judge_layout(slab);
  CHECK(v.poor);
  CHECK(v.brick == ext3{3, 9, 7});
  CHECK(v.brick_aspect == Approx(3.0));
  const Plan good = make_plan(request({15, 9, 7}, 7));
  CHECK(good.ranks.grid == std::array<int, 3>{2, 2, 1});
  CHECK_FALSE(judge_layout(good).poor);  // 8x5x7: 1.6
}

TEST_CASE("a slab of an elongated mesh is as long as the mesh allows", "[layout]") {
  // 1000x10x10 on 5 bricks: 200x10x10 bricks, less elongated than the mesh (100).
  CHECK_FALSE(judge_layout(make_plan(request({1000, 10, 10}, 8))).poor);
}

TEST_CASE("the suggested world sizes are the nearest good ones, B + 3 ranks", "[layout]") {
  const auto near8 = good_layouts_near(request({64, 64, 64}, 8), balanced);
  // 64^3: B = 2 (32x64x64, aspect 2), 4 (2x2x1) and 8 (2x2x2) are good; 3, 5, 6, 7 are slabs
  // or elongated.
  CHECK(worlds(near8) == std::vector<int>{5, 7, 11});
  for (const LayoutChoice& c : near8) CHECK(c.n_bricks == c.world_size - 3);
  CHECK(near8[1].grid == std::array<int, 3>{2, 2, 1});
  const auto colocated =
      good_layouts_near(request({64, 64, 64}, 5, ActuatorPlacement::colocated), balanced);
  CHECK(worlds(colocated) == std::vector<int>{2, 4, 8});
  for (const LayoutChoice& c : colocated) CHECK(c.n_bricks == c.world_size);
}

TEST_CASE("the warning names the layout and the better world sizes", "[layout]") {
  const Plan p = make_plan(request({15, 9, 7}, 8));
  const std::string w =
      layout_warning(p, judge_layout(p), good_layouts_near(request({15, 9, 7}, 8), balanced));
  CHECK(w.find("5x1x1 grid") != std::string::npos);
  CHECK(w.find("-np 7 (2x2x1 grid)") != std::string::npos);
  CHECK(w.find('\n') == std::string::npos);
}

TEST_CASE("dense MPI traffic follows the documented closed form", "[layout][mpi]") {
  // 10x12x9 on a 2x3x1 grid (9 ranks, 6 bricks): every axis but 3 split.
  PlanRequest r = request({10, 12, 9}, 9);
  r.grid = std::array<int, 3>{2, 3, 1};
  const Plan p = make_plan(r);
  RunCounters rc;
  dense_mpi_traffic(p, 8, PivotMessages::planes, rc);
  const std::uint64_t B = 6;
  for (size_t s = 0; s < 3; ++s) {
    const StagePlan& sp = p.stages[s];
    const std::uint64_t N = sp.n(), g = p.ranks.grid[sp.axis - 1], L = sp.lines();
    CAPTURE(sp.axis);
    CHECK(rc.mpi_stages[s].x.messages == (N + 1) * B);
    CHECK(rc.mpi_stages[s].x.bytes == N * (16 * B + (B / g) * N * 24) + 16 * B);
    CHECK(rc.mpi_stages[s].y.messages == N * (g - 1) * (B / g));
    CHECK(rc.mpi_stages[s].y.bytes == N * L * 8 * (g - 1));
  }
  CHECK(rc.mpi_control.messages == 2);
  CHECK(rc.mpi_control.bytes == 8);
}
