#pragma once
// The two ways a brick runs one stage; both consume the same actuator stream and must
// produce the same bits and the same per-step counters (tests/mpi/test_executors.cpp).
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "counters/time_split.hpp"
#include "engine/engine.hpp"
#include "geometry/brick_stage.hpp"

namespace triada::detail {

// The stream of the actuator of `axis` as this brick receives it (doc/design.md §8.3): its
// step messages arrive back to back in a few physical messages (post_stream), all taken
// at construction (before the stage's first collective: the hosting rank waits for them,
// charged to the clock's wait), then handed out one step at a time by next().
template <class T>
class XStream {
 public:
  XStream(const Topology& topo, int axis, StageClock& clock);
  // The next step's message (header and entries); the end-of-stage message comes last.
  const std::byte* next();

 private:
  std::vector<std::byte> buf_;
  std::size_t pos_ = 0;
};
// The other two axes (0-based) of a stage along `axis` (1..3), in increasing order.
std::array<int, 2> other_axes(int axis);
// Stage `stage_index` on this brick as plain data, for elements of type T.
template <class T>
BrickStage brick_stage(const Topology& topo, const EngineOptions& opt, int stage_index) {
  return make_brick_stage(topo.plan(), stage_index, topo.coords(), sizeof(T),
                          opt.plane_batch_bytes);
}

// Where a stage's W registers start: +0 (w0 == nullptr), or the affine form's Y0 over the
// stage's W box (the last stage only; its values as given, each executor loads them with
// seed_register). exact: some rank's Y0 holds a -0 or a NaN, on which adding a zero
// product is not a no-op (-0 + +0 = +0, a signalling NaN is quieted), so the fused
// executor must do exactly the cell rule's updates (its kernels skip or compute zero
// products where that is exact only for other values of W). Agreed by every rank.
template <class T>
struct StageStart {
  const std::vector<T>* w0 = nullptr;
  bool exact = false;
};

// Runs stage `stage_index` on this brick: `v_in` is the brick's part of the stage's input
// (cells ∩ in_shape, C order); `w` receives its part of the output (cells ∩ out_shape),
// reusing the vector's storage. The fused executor leaves `v_in`'s values as they were
// (its storage becomes the next stage's W).
// Appends one record per step taken (this brick's share of its counters) and adds the
// Y-bus MPI traffic it caused to `rc`. `start`: where W starts (above). `clock` (started by
// the caller) is charged the stage's packing and waiting, and its batches.
template <class T>
void reference_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                     const std::vector<T>& v_in, std::vector<T>& w,
                     std::vector<StepRecord>& records, RunCounters& rc, StageClock& clock,
                     const StageStart<T>& start = {});
// What a fused stage along axis 3 learnt about its W for the next stage: zero[l1 * e2 + l2]
// = 1 if line (l1, l2) of the brick (axes 1, 2) had no non-zero pivot under ESOP, so its W
// is +0 along axis 3 and the next stage need not read it. Valid only right after the
// stage that made it (axis = 3); axis = 0: nothing known.
struct ZeroLines {
  int axis = 0;
  std::vector<std::uint8_t> zero;
};

// --activity (EngineOptions::activity): collective over the world. Appends stage
// `stage_index`'s record to `out` on brick ranks: the non-zero pivots of `v` (this brick's
// part of the stage's input) along each whole Y line (OR'ed over the line's bricks), and
// the non-zero coefficients, given on the rank hosting the stage's actuator (`coeffs`,
// empty elsewhere) and broadcast from it.
template <class T>
void record_activity(const Topology& topo, const EngineOptions& opt, int stage_index,
                     const std::vector<T>& v, BitRows coeffs, CellActivity& out);

template <class T>
void fused_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                 std::vector<T>& v_in, std::vector<T>& w, std::vector<StepRecord>& records,
                 RunCounters& rc, ZeroLines& zero_lines, StageClock& clock,
                 const StageStart<T>& start = {});

}  // namespace triada::detail
