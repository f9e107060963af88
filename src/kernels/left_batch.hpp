#pragma once
// The stage along axis 3 (data on the left) as a batch of the kernels: rows = lines,
// columns = k, W (lines x k) = pivots (lines x steps) times coefficients (steps x k).
#include <cstdint>
#include <vector>

#include "kernels/plane.hpp"

namespace triada::kernels {

// Scratch of the axis-3 batches, reused from batch to batch.
struct LeftScratch {
  std::vector<std::int32_t> list, one, slot_of, step_of_slot;
  // Sparse lines waiting for their kernels: W row offset, entries [ptr[g], ptr[g + 1]).
  std::vector<index_t> sparse_line, sparse_ptr;
  std::vector<double> sparse_val;
  std::vector<std::int32_t> sparse_step;
  std::vector<std::uint8_t> step_bits, masks;
  std::vector<double> apack, bpack, gather, zeros;
  std::vector<const double*> brow;
};

// Line l's pivots form a row: in place in V when every plane of the batch is the brick's
// own (rows != nullptr, rows of row_len; slot p = the plane's index in the row), else
// gathered from the planes (slot = step). Under ESOP each row is scanned once, as a
// vector: an all-zero line leaves W at +0, a sparse line runs alone over its own
// non-zeros, and dense lines wait until kMR of them are packed together by transposes for
// the register-blocked kernel. cbb: the batch's coefficients (steps x wext); w: L x wext.
// counts[s] (sized nb, zeroed by the caller): the step's non-zero pivots; bad: an Inf or
// NaN pivot was seen (ESOP); zero_out (ESOP, if given): 1 for each line without a
// non-zero pivot. fresh: W holds nothing yet, every element is written. stop: polled
// between groups of lines.
void left_batch(const std::vector<PlaneRef<double>>& planes, const double* rows, index_t row_len,
                index_t L, const double* cbb, index_t wext, double* w, bool esop, bool fresh,
                std::vector<std::uint64_t>& counts, std::uint64_t& bad, LeftScratch& x,
                std::uint8_t* zero_out, StopPoll stop = nullptr);

}  // namespace triada::kernels
