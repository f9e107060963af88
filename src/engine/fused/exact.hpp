#pragma once
// The exact path of a fused stage: the cell rule element by element, for what the binary64
// kernels do not compute (other cell modes, complex data) and for a batch whose pivots
// hold an Inf or NaN under ESOP (the kernels' skipping of zeros is exact only for finite
// values). It skips exactly what the cell rule skips.
#include <vector>

#include "engine/fused/stage_view.hpp"

namespace triada::detail::fused {

// W += the batch of planes (steps b0 .. b0 + planes.size() of the stream) in streaming
// order, with the stage's cell mode. redo: W holds what the kernels wrote (or nothing
// yet, when they were to write it from +0) for this batch, the stage's only one, so W
// is started again here (start_w: +0, or Y0). stop: polled between planes.
template <class T>
void exact_batch(const StageView<T>& s, const std::vector<PlaneRef<T>>& planes, index_t b0,
                 std::vector<T>& w, bool redo, kernels::StopPoll stop = nullptr);

}  // namespace triada::detail::fused
