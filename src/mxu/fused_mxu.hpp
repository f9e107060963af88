#pragma once
// The planar MXU's fused executor (TensorUnit with MxuExecutor::fused): one call
// C (r x s) = A (r x s) B (s x s) (+ C), with every output's cell updates in the reference's
// order and arithmetic, so C is bitwise the reference's and the MAC count the same.
// The exactness argument is in fused_mxu.cpp and doc/design.md (the planar MXU section).
#include <cstdint>

#include "cell/cell_rule.hpp"
#include "core/types.hpp"
#include "mxu/tensor_unit.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

struct MxuCall {
  index_t r, s;
  const double* A;
  index_t lda;
  const double* B;
  index_t ldb;
  double* C;
  index_t ldc;
  bool accumulate;
  index_t depth = 0;  // the steps t: s for one call, links * s for a chain (0 means s)
  index_t width = 0;  // the columns of B and C: s for one call, blocks * s (0 means s)
};

// fp64 cells: the engine's register-blocked kernels, then the exact path for the outputs
// that may differ (see the .cpp). Returns the cell updates (TcuCost::macs). With depth > s
// it runs a chain of accumulating calls (TensorUnit::multiply_chain) as one product of
// depth steps, B (depth x width) packed in column panels, C in registers across the depth;
// with width > s, chains on adjacent column blocks (TensorUnit::multiply_chains).
// Rows are independent: a grid's row blocks are one call of all their rows.
std::uint64_t fused_mxu_fp64(const MxuCall& c, Mode mode, MxuScratch& x);

// Any cell mode: the cell rule's updates per output, in order, through the mode's
// mma_start(), mma_mac() and mma_store(), row by row. Returns the cell updates.
std::uint64_t fused_mxu_scalar(const MxuCall& c, Mode mode, CellMode cell_mode, MxuScratch& x);

}  // namespace triada
