#pragma once
// Where a pivot plane sits in memory, as the kernels and the exact path read it.
#include "core/types.hpp"

namespace triada::kernels {

// Plane t of V over the brick's lines: P(l1, l2) = base[l1 * st1 + l2 * st2].
template <class T>
struct PlaneRef {
  const T* base = nullptr;
  index_t st1 = 0, st2 = 0;
  const T& at(index_t l1, index_t l2) const { return base[l1 * st1 + l2 * st2]; }
};

// Polled by a batch between its pieces of work: true ends the batch early, its W then
// incomplete (a run that is being stopped; mesh/cancel.hpp). Null: never.
using StopPoll = bool (*)();

}  // namespace triada::kernels
