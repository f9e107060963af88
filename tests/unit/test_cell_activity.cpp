// Per-cell activity (counters/cell_activity.hpp) against the cell rule itself: every time
// step of a stage replayed cell by cell with pivot_output and cell_update, the outcomes
// counted per cell, on random sparse operands, ESOP and dense, compressing and expanding
// stages, a brick of a larger grid.
#include <map>
#include <optional>
#include <random>

#include "cell/cell_rule.hpp"
#include "counters/cell_activity.hpp"
#include "geometry/brick_stage.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

using Counts = std::map<Counter, std::vector<std::uint32_t>>;

// The X element plane k gets in step t (ESOP: c != 0 or the tag), or none.
std::optional<XElement<double>> x_element(const std::vector<double>& c, index_t k_out, index_t t,
                                          index_t k, Mode mode) {
  const double v = k < k_out ? c[t * k_out + k] : 0.0;
  if (mode == Mode::esop && v == 0.0 && k != t) return std::nullopt;
  return XElement<double>{v, k == t};
}

// Replays one stage on one brick holding whole lines (the grid is 1 along the axis).
Counts replay(const BrickStage& bs, const std::vector<double>& v, const std::vector<double>& c,
              Mode mode, const Brick& cells) {
  Counts out;
  for (Counter ctr : kCellCounters) out[ctr].assign(static_cast<size_t>(cells.count()), 0);
  const Brick& u = bs.union_box;
  const auto [d1, d2] = bs.line_axes;
  auto at = [&](index_t plane, index_t i1, index_t i2) {
    ext3 g;
    g[bs.a] = plane;
    g[d1] = i1;
    g[d2] = i2;
    return g;
  };
  for (index_t t = 0; t < bs.n; ++t) {
    bool row = false;
    for (index_t k = 0; k < bs.k; ++k) row = row || c[t * bs.k + k] != 0.0;
    if (mode == Mode::esop && !row) continue;
    for (index_t i1 = u.lo[d1]; i1 < u.hi[d1]; ++i1)
      for (index_t i2 = u.lo[d2]; i2 < u.hi[d2]; ++i2) {
        const ext3 p = at(t, i1, i2);
        Cell<double> pivot{true, v[bs.in_box.local_offset(p[0], p[1], p[2])], t < bs.k, 0.0};
        const auto xt = x_element(c, bs.k, t, t, mode);
        const auto y = pivot_output(pivot, &*xt, mode);
        if (y) ++out[Counter::y_bus_sends][cells.local_offset(p[0], p[1], p[2])];
        for (index_t k = u.lo[bs.a]; k < u.hi[bs.a]; ++k) {
          const auto x = x_element(c, bs.k, t, k, mode);
          const ext3 g = at(k, i1, i2);
          Cell<double> cell{k < bs.n, 0.0, k < bs.k, 0.0};
          const Outcome o = cell_update(cell, x ? &*x : nullptr, y ? &*y : nullptr, mode);
          const auto at_cell = cells.local_offset(g[0], g[1], g[2]);
          if (o == Outcome::wait) ++out[Counter::waits][at_cell];
          if (o == Outcome::update_own || o == Outcome::update_received)
            ++out[Counter::macs][at_cell];
          if (o == Outcome::update_received) ++out[Counter::y_bus_receives][at_cell];
        }
      }
  }
  return out;
}

void check_stage(const ext3& in, const ext3& out_shape, int stage, Mode mode, unsigned seed) {
  PlanRequest r;
  r.in_shape = in;
  r.out_shape = out_shape;
  r.mesh = ext3{in[0] + 1, std::max(in[1], out_shape[1]), std::max(in[2], out_shape[2])};
  r.stage_order = {3, 1, 2};
  r.grid = {1, 1, 1};
  const Plan plan = make_plan(r);
  const BrickStage bs = make_brick_stage(plan, stage, {0, 0, 0}, sizeof(double));
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> d(-2, 2);
  std::vector<double> v(static_cast<size_t>(bs.in_box.count())),
      c(static_cast<size_t>(bs.n * bs.k));
  for (double& x : v) x = d(gen) * (d(gen) > 0 ? 1 : 0);
  for (double& x : c) x = d(gen) * (d(gen) >= 0 ? 1 : 0);
  for (index_t k = 0; k < bs.k; ++k) c[k] = 0;  // row 0 is not streamed under ESOP
  StageActivity s;
  s.bs = bs;
  s.esop = mode == Mode::esop;
  s.pivots = pivot_bits(bs, v);
  s.coeffs = BitRows(bs.k, bs.n);
  for (index_t t = 0; t < bs.n; ++t)
    for (index_t k = 0; k < bs.k; ++k)
      if (c[t * bs.k + k] != 0.0) s.coeffs.set(k, t);
  CellActivity a{plan.brick_cells(0), {}};
  for (int i = 0; i <= stage; ++i) a.stages.push_back(s);  // stage `stage` is the last
  const Counts want = replay(bs, v, c, mode, a.cells);
  for (Counter ctr : kCellCounters) {
    INFO(counter_info(ctr).name << " stage " << stage << " seed " << seed);
    CHECK(cell_counts(a, stage, ctr) == want.at(ctr));
  }
}

}  // namespace

TEST_CASE("per-cell counts are the cell rule's outcomes, cell by cell", "[activity]") {
  for (unsigned seed = 1; seed <= 4; ++seed)
    for (Mode mode : {Mode::esop, Mode::dense}) {
      check_stage({4, 3, 5}, {4, 3, 5}, 0, mode, seed);  // along axis 3, square
      check_stage({4, 3, 5}, {4, 3, 2}, 0, mode, seed);  // compression, spare mesh cells
      check_stage({4, 3, 5}, {4, 3, 7}, 0, mode, seed);  // expansion
    }
}

TEST_CASE("the total is the sum of the stages", "[activity]") {
  PlanRequest r;
  r.in_shape = {3, 2, 4};
  r.out_shape = {3, 2, 4};
  r.grid = {1, 1, 1};
  const Plan plan = make_plan(r);
  CellActivity a{plan.brick_cells(0), {}};
  for (int s = 0; s < 3; ++s) {
    StageActivity st;
    st.bs = make_brick_stage(plan, s, {0, 0, 0}, sizeof(double));
    st.esop = false;  // dense: N MACs in every cell of every stage
    st.pivots = BitRows(st.bs.n_lines, st.bs.n);
    st.coeffs = BitRows(st.bs.k, st.bs.n);
    a.stages.push_back(st);
  }
  const auto total = cell_counts(a, -1, Counter::macs);
  CHECK(total == std::vector<std::uint32_t>(24, 4 + 3 + 2));
  CHECK_THROWS(cell_counts(a, 0, Counter::x_bus_sends));
}
