#pragma once
// The planar MXU: a sqrt(m) x sqrt(m) slice of TriADA cells used as the tensor unit of the
// (m, l)-TCU model (Chowdhury, Silvestri, Vella, "A Computational Model for Tensor Core
// Units", Sec. 2). One call multiplies A (r x s, r >= s, s = sqrt(m)) by B (s x s):
// A is resident in the slice in chunks of s rows (cell (i, j) holds A[i][j] in its V
// register), B's rows are streamed by an actuator as tagged vectors, and each chunk is one
// TriADA stage (the cell rule of cell/cell_rule.hpp, step t: the pivot column j = t drives
// its row lines, cell (i, k) does W += A[i][t] * B[t][k]); C is read out of W.
// Cost in the model: r * s + l time units per call (O(n sqrt(m) + l) with constant 1).
// The cells compute in a cell mode (precision/cell_mode.hpp): C is what the mode's cells
// store, and each time step takes the mode's sub-steps (TcuCost::cycles).
#include <cstdint>
#include <string>

#include "cell/cell_rule.hpp"
#include "core/types.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

struct TcuCost {
  std::uint64_t calls = 0;        // tensor unit invocations
  std::uint64_t tensor_time = 0;  // sum over calls of r * s + l
  std::uint64_t cpu_time = 0;     // scalar operations outside the unit, one unit each
  std::uint64_t rows = 0;         // sum of r over calls
  std::uint64_t cell_steps = 0;   // time steps of the slice (one per streamed row of B)
  std::uint64_t macs = 0;         // cell updates done (ESOP skips zero operands)
  std::uint64_t macs_dense = 0;   // r * s * s per call
  std::uint64_t cycles = 0;       // cell_steps times the cell mode's sub-steps
  std::uint64_t model_time() const { return tensor_time + cpu_time; }
};

class TensorUnit {
 public:
  // m must be a perfect square >= 1; weak = true restricts calls to r == sqrt(m)
  // (the weak TCU model of Theorem 12). Throws config_error on a bad m or latency.
  TensorUnit(std::int64_t m, std::int64_t latency, bool weak = false, Mode mode = Mode::esop,
             CellMode cell_mode = CellMode::fp64);

  index_t side() const { return s_; }
  std::int64_t m() const { return m_; }
  std::int64_t latency() const { return l_; }
  bool weak() const { return weak_; }
  CellMode cell_mode() const { return cell_mode_; }

  // C[i][k] = sum_t A[i][t] * B[t][k] for i < r, k < s, row-major with leading dimensions.
  // With accumulate = true the cells' W registers start from C (the paper's affine
  // "+=", free in the model); otherwise from zero. Throws std::invalid_argument if r < s, or
  // r != s on a weak unit.
  void multiply(index_t r, const double* A, index_t lda, const double* B, index_t ldb, double* C,
                index_t ldc, bool accumulate = false);

  // Scalar work an algorithm does outside the unit (additions, comparisons, ...).
  void cpu(std::uint64_t ops) { cost_.cpu_time += ops; }

  const TcuCost& cost() const { return cost_; }
  void reset() { cost_ = {}; }
  void start_work_unit() {}  // a work unit begins (conv: a group's C_O tile)

 private:
  std::int64_t m_, l_;
  index_t s_;
  bool weak_;
  Mode mode_;
  CellMode cell_mode_;
  TcuCost cost_;
};

}  // namespace triada
