// The memory model (geometry/memory_model.hpp) against direct counts: the elements each
// rank's bricks hold, counted here by enumerating the block split, for non-cubic odd
// shapes, expanding and compressing stages and several rank counts.
#include <algorithm>

#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "geometry/plan.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {
using u64 = std::uint64_t;

Plan plan_of(ext3 n, ext3 k, int world, std::array<int, 3> grid,
             std::array<int, 3> order = {3, 1, 2}) {
  PlanRequest r;
  r.in_shape = n;
  r.out_shape = k;
  r.world_size = world;
  r.grid = grid;
  r.stage_order = order;
  return make_plan(r);
}

// Elements of `shape` held by grid coordinates c: the block split of max(N, K) cells per
// axis (the first n % parts blocks one larger), clipped to the shape.
u64 direct_count(const Plan& p, std::array<int, 3> c, const ext3& shape) {
  u64 n = 1;
  for (int d = 0; d < 3; ++d) {
    const index_t cells = std::max(p.in_shape[d], p.out_shape[d]), parts = p.ranks.grid[d];
    const index_t base = cells / parts, extra = cells % parts;
    const index_t lo = c[d] * base + std::min<index_t>(c[d], extra);
    const index_t hi = lo + base + (c[d] < extra ? 1 : 0);
    n *= static_cast<u64>(std::max<index_t>(0, std::min(hi, shape[d]) - lo));
  }
  return n;
}

std::array<int, 3> coords_of(const Plan& p, int r) {
  const auto& g = p.ranks.grid;
  return {r / (g[1] * g[2]), (r / g[2]) % g[1], r % g[2]};
}

u64 segment(u64 elements) {
  return (elements * 8 + 63) / 64 * 64 + kWindowScratchBytes;
}
}  // namespace

TEST_CASE("registers: input and spare brick; --check adds the kept input", "[memory]") {
  const Plan p = plan_of({7, 12, 5}, {7, 12, 5}, 1, {1, 1, 1});
  MemoryModelOptions o;
  MemoryPrediction m = predict_memory(p, 0, o, "x");
  CHECK(m.registers == 2 * 420 * 8);
  CHECK(m.window_own == 0);
  CHECK(m.window_mapped == 0);
  CHECK(m.run >= m.registers + kMemoryModelFixedBytes);
  o.check = true;
  o.element_bytes = 16;
  CHECK(predict_memory(p, 0, o, "x").registers == 3 * 420 * 16);
}

TEST_CASE("registers: --initial adds its output brick (Y0), held through the run", "[memory]") {
  const Plan p = plan_of({7, 12, 5}, {3, 12, 8}, 2, {1, 2, 1});
  MemoryModelOptions o;
  const u64 plain = predict_memory(p, 1, o, "x").registers;
  o.initial = true;
  CHECK(predict_memory(p, 1, o, "x").registers ==
        plain + direct_count(p, {0, 1, 0}, {3, 12, 8}) * 8);
}

TEST_CASE("registers and windows per rank on odd shapes and several rank counts", "[memory]") {
  const ext3 n{13, 7, 10};
  for (auto [world, grid] : {std::pair{2, std::array{2, 1, 1}}, std::pair{3, std::array{1, 1, 3}},
                             std::pair{5, std::array{2, 1, 1}}, std::pair{6, std::array{3, 1, 1}},
                             std::pair{12, std::array{3, 1, 3}}}) {
    const Plan p = plan_of(n, n, world, grid);
    for (int r = 0; r < p.ranks.n_bricks; ++r) {
      const auto c = coords_of(p, r);
      const u64 mine = direct_count(p, c, n);
      const MemoryPrediction m = predict_memory(p, r, {}, "x");
      CHECK(m.registers == 2 * mine * 8);
      u64 own = 0, mapped = 0;
      for (int a = 0; a < 3; ++a) {
        if (grid[a] < 2) continue;
        own += segment(mine);
        for (int k = 0; k < grid[a]; ++k) {
          auto cc = c;
          cc[a] = k;
          // V segments are mapped at setup only along axis 3 (real data, no folding):
          // stages along axes 1 and 2 pack through the scratch.
          mapped += a == 2 ? segment(direct_count(p, cc, n)) : kWindowScratchBytes;
        }
      }
      CHECK(m.window_own == own);
      CHECK(m.window_mapped == mapped);
      CHECK(m.node_share() == m.run + own);
    }
  }
}

TEST_CASE("a stage result that outgrows the free register reallocates it while both are held",
          "[memory]") {
  // Stages 3, 1, 2 of 7x12x5 -> 9x4x5: the stage along 1 expands 7 -> 9 into the register
  // that held the input, so it holds the input, the first result and the new one at once.
  const ext3 in{7, 12, 5}, out{9, 4, 5}, mid{9, 12, 5};
  for (auto [world, grid] : {std::pair{1, std::array{1, 1, 1}}, std::pair{2, std::array{1, 2, 1}},
                             std::pair{3, std::array{1, 3, 1}}}) {
    const Plan p = plan_of(in, out, world, grid);
    for (int r = 0; r < world; ++r) {
      const auto c = coords_of(p, r);
      const u64 i = direct_count(p, c, in), most = direct_count(p, c, mid);
      INFO("world " << world << " rank " << r);
      CHECK(predict_memory(p, r, {}, "x").registers == (i + 2 * most) * 8);
    }
  }
  // Compression only (no stage outgrows the input): input and spare.
  const Plan p = plan_of({9, 12, 5}, {7, 4, 5}, 1, {1, 1, 1});
  CHECK(predict_memory(p, 0, {}, "x").registers == (540 + 540) * 8);
}

TEST_CASE("a dedicated actuator rank holds its matrix and stream, no brick", "[memory]") {
  const Plan p = plan_of({7, 12, 5}, {7, 12, 5}, 4, {1, 1, 1});
  REQUIRE(p.ranks.actuator_rank[0] == 1);
  const MemoryPrediction m = predict_memory(p, 1, {}, "x");
  CHECK(m.registers == 0);
  CHECK(m.window_mapped == 0);
  // C1 is 7 x 7: complex matrix and real copy (49 x 24 B) and row data (7 x 16 B); the
  // stream holds 7 + 1 messages for the one brick, each with a 16 B header and up to 7
  // entries of 24 B, and MPI's 512 B of state per brick it goes to. Per-step records: 24
  // steps of 256 B.
  const u64 actuator = 49 * 24 + 7 * 16 + 8 * (16 + 7 * 24) + 512;
  CHECK(m.run == kMemoryModelFixedBytes + 24 * 256 + actuator);
  // Brick rank 0 streams nothing: its prediction has no actuator part.
  CHECK(predict_memory(p, 0, {}, "x").run <
        predict_memory(plan_of({7, 12, 5}, {7, 12, 5}, 1, {1, 1, 1}), 0, {}, "x").run);
}

TEST_CASE("off one node the batch buffers are counted too; sizes that overflow are refused",
          "[memory]") {
  const Plan p = plan_of({64, 64, 64}, {64, 64, 64}, 2, {2, 1, 1});
  MemoryModelOptions o;
  const u64 one = predict_memory(p, 0, o, "x").run;
  o.one_node = false;
  // Two batches of planes, dense and compressed: 4 x the 2 MiB budget here, on the stage
  // along axis 1 (whose other scratch, under 256 KiB, may be less than another stage's).
  const u64 more = predict_memory(p, 0, o, "x").run - one;
  CHECK(more <= 4 * (u64{2} << 20));
  CHECK(more > 4 * (u64{2} << 20) - (u64{256} << 10));
  const Plan huge = plan_of({1, 1, index_t{1} << 61}, {1, 1, index_t{1} << 61}, 1, {1, 1, 1});
  CHECK_THROWS_AS(predict_memory(huge, 0, {}, "in.h5:/x"), input_error);
}
