#pragma once
// One fused stage as a brick sees it: its boxes and lines, its place on the line, the
// actuator's steps and coefficients. Shared by the transports, the kernels' driver and
// the exact path.
#include <cstdint>
#include <vector>

#include "engine/stage_executors.hpp"
#include "geometry/brick_stage.hpp"
#include "kernels/plane.hpp"

namespace triada::detail::fused {

using kernels::PlaneRef;

// One step as the brick sees it: the pivot and the coefficients of its W planes.
struct StepInfo {
  index_t t = 0;
  std::uint64_t nnz_c = 0;  // coefficients that update (ESOP: non-zero; dense: all)
  std::uint64_t diag = 0;   // 1 if the pivot itself holds W and updates
  std::uint64_t max_c = 0;  // most updating coefficients in one physical cell's planes
};

template <class T>
struct StageView {
  StageView(const Topology& t, const EngineOptions& o, int stage)
      : topo(t), plan(t.plan()), sp(t.plan().stages[stage]), opt(o), stage_index(stage) {}
  const Topology& topo;
  const Plan& plan;
  const StagePlan& sp;
  const EngineOptions& opt;
  int stage_index = 0;
  BrickStage bs;              // the stage's schedule on this brick (plain data)
  int a = 0, d1 = 0, d2 = 0;  // the stage's axis and the lines' axes, 0-based
  bool esop = true;
  bool kernel_path = false;  // binary64 kernels on real data
  Brick vb, wb;              // the brick's V and W boxes
  ext3 ev{}, sv{}, sw{};     // V extents, V and W strides
  index_t vlo = 0, vext = 0, wlo = 0, wext = 0;
  index_t le1 = 0, le2 = 0, L = 0;  // the brick's lines
  MPI_Comm line = MPI_COMM_NULL;
  int line_rank = 0, line_size = 1;
  std::vector<StepInfo> steps;         // streaming order
  std::vector<T> cb;                   // S x wext coefficients of the brick's W planes
  MpiTraffic* y_traffic = nullptr;     // the stage's Y-bus MPI traffic
  StageClock* clock = nullptr;         // where the stage's packing and waiting are charged
  const std::vector<T>* w0 = nullptr;  // where W starts (StageStart::w0): nullptr, +0
  index_t S() const { return static_cast<index_t>(steps.size()); }
  int owner(index_t t) const { return bs.plane_owner[static_cast<std::size_t>(t)]; }
  // This brick holds plane t itself.
  bool own(index_t t) const { return line_size == 1 || owner(t) == line_rank; }
  PlaneRef<T> local_plane(const T* vbase, index_t t) const {
    return {vbase + (t - vlo) * sv[a], sv[d1], sv[d2]};
  }
};

// The brick's geometry of stage `stage_index` and the actuator's stream for it (one
// message per step taken), read to its end (the receives charged to the clock).
template <class T>
StageView<T> read_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                        StageClock& clock);

// W as the stage starts it: +0, or Y0 (s.w0) in the cell mode's register format.
template <class T>
void start_w(const StageView<T>& s, std::vector<T>& w);

// Non-zeros of a plane over the brick's lines; clears `finite` at an Inf or NaN.
template <class T>
std::uint64_t plane_nnz(const StageView<T>& s, const PlaneRef<T>& p, bool& finite);

// The busiest physical cell of a step (folding along the lines: a physical cell holds a
// block of lines): the most non-zero pivots (ESOP) or lines (dense) in one block.
class BusiestLines {
 public:
  template <class T>
  explicit BusiestLines(const StageView<T>& s);
  template <class T>
  std::uint64_t operator()(const StageView<T>& s, const PlaneRef<T>& p, std::uint64_t nnz_p);
  bool folded() const { return folded_; }

 private:
  bool folded_ = false;
  std::vector<std::uint64_t> block_count_;  // per physical cell of the brick's lines
};

// The counters of one step, derived from what travelled on the buses: nnz_p non-zero
// pivots (ESOP; dense: every line) met the step's updating coefficients.
StepRecord step_record(int stage_index, const StepInfo& si, std::uint64_t nnz_p, index_t L,
                       bool esop, bool sends, std::uint64_t busiest_lines);

}  // namespace triada::detail::fused
