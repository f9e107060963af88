// --activity's pass (counters/cell_activity.hpp): what every cell sees in a stage, as bits.
#include <span>

#include "engine/stage_executors.hpp"
#include "mesh/mpi.hpp"

namespace triada::detail {

template <class T>
void record_activity(const Topology& topo, const EngineOptions& opt, int stage_index,
                     const std::vector<T>& v, BitRows coeffs, CellActivity& out) {
  const Plan& plan = topo.plan();
  const StagePlan& sp = plan.stages[stage_index];
  const int host = plan.ranks.actuator_rank[sp.axis - 1];
  coeffs.rows = sp.k();
  coeffs.words = (sp.n() + 63) / 64;
  mpi::bcast(topo.world(), coeffs.bits, host);
  if (!topo.is_brick()) return;
  if (stage_index == 0) out = CellActivity{topo.cells(), {}};
  StageActivity a;
  a.bs = brick_stage<T>(topo, opt, stage_index);
  a.esop = opt.mode == Mode::esop;
  a.pivots = pivot_bits(a.bs, v);
  // Each plane of a line lies in one brick, so the bricks' bits are disjoint: their sum
  // is their OR.
  if (a.bs.line_size > 1)
    mpi::allreduce_in_place(topo.line(sp.axis), std::span<std::uint64_t>(a.pivots.bits),
                            mpi::Op::sum);
  a.coeffs = std::move(coeffs);
  out.stages.push_back(std::move(a));
}

template void record_activity(const Topology&, const EngineOptions&, int,
                              const std::vector<double>&, BitRows, CellActivity&);
template void record_activity(const Topology&, const EngineOptions&, int, const std::vector<cplx>&,
                              BitRows, CellActivity&);

}  // namespace triada::detail
