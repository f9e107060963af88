#include "counters/mpi_model.hpp"

#include <algorithm>
#include <cstdint>

#include "actuator/actuator.hpp"
#include "core/checked.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;

// Actuator: one message per brick per row plus the end of the stage; each holds a header
// and the brick's entries of the tagged vector (planes below max(N, K)).
MpiTraffic x_traffic(const Plan& plan, int stage, std::size_t element_bytes) {
  const StagePlan& sp = plan.stages[static_cast<std::size_t>(stage)];
  const u64 rows = static_cast<u64>(sp.n()), bricks = static_cast<u64>(plan.ranks.n_bricks);
  const u64 entry = 2 * sizeof(std::int64_t) + element_bytes;  // XEntry<T>: k, c, tag
  const index_t width = std::max(sp.n(), sp.k());
  // Checked: a plan must never show a wrapped byte count.
  const std::string what = "MPI traffic of the stage along axis " + std::to_string(sp.axis);
  u64 per_row = 0;
  for (int r = 0; r < plan.ranks.n_bricks; ++r) {
    const Range rg = plan.cell_range(sp.axis, plan.brick_coords(r)[sp.axis - 1]);
    const u64 entries = static_cast<u64>(std::max<index_t>(0, std::min(rg.hi, width) - rg.lo));
    per_row = checked_add(per_row, sizeof(XHeader) + checked_mul(entries, entry, what), what);
  }
  return {checked_mul(rows + 1, bricks, what),
          checked_add(checked_mul(rows, per_row, what), bricks * sizeof(XHeader), what)};
}

// Pivot planes: each row's owner sends its part of the plane (the lines of its line group)
// to the group's other members.
MpiTraffic y_traffic(const Plan& plan, int stage, std::size_t element_bytes, PivotMessages pivots) {
  const StagePlan& sp = plan.stages[static_cast<std::size_t>(stage)];
  const int a = sp.axis - 1;
  const u64 others = static_cast<u64>(plan.ranks.grid[a] - 1), rows = static_cast<u64>(sp.n());
  MpiTraffic t;
  if (others == 0) return t;
  for (int r = 0; r < plan.ranks.n_bricks; ++r) {
    if (plan.brick_coords(r)[a] != 0) continue;  // one brick per line group
    const Brick v = plan.brick_cells(r).intersect(whole(sp.in_shape));
    const u64 lines = static_cast<u64>(v.extent((a + 1) % 3) * v.extent((a + 2) % 3));
    const bool counted = pivots == PivotMessages::counted;
    if (lines == 0 && !counted) continue;  // the fused executor sends no empty plane
    const std::string what = "MPI traffic of the stage along axis " + std::to_string(sp.axis);
    const u64 payload =
        checked_mul(lines, element_bytes, what) + (counted ? sizeof(std::int64_t) : 0);
    const u64 messages = checked_mul(rows, others, what);
    t.add(messages, checked_mul(messages, payload, what));
  }
  return t;
}

}  // namespace

void dense_mpi_traffic(const Plan& plan, std::size_t element_bytes, PivotMessages pivots,
                       RunCounters& rc) {
  const int ns = static_cast<int>(plan.stages.size());
  rc.mpi_stages.assign(static_cast<std::size_t>(ns), StageTraffic{});
  for (int s = 0; s < ns; ++s)
    rc.mpi_stages[static_cast<std::size_t>(s)] = {x_traffic(plan, s, element_bytes),
                                                  y_traffic(plan, s, element_bytes, pivots)};
  // Control passes once between consecutive stages' actuators (one int).
  const u64 hand_overs = ns > 0 ? static_cast<u64>(ns - 1) : 0;
  rc.mpi_control = {hand_overs, hand_overs * sizeof(int)};
}

}  // namespace triada
