#pragma once
// The planar MXU: a sqrt(m) x sqrt(m) slice of TriADA cells used as the tensor unit of the
// (m, l)-TCU model (Chowdhury, Silvestri, Vella, "A Computational Model for Tensor Core
// Units", Sec. 2). One call multiplies A (r x s, r >= s, s = sqrt(m)) by B (s x s):
// A is resident in the slice in chunks of s rows (cell (i, j) holds A[i][j] in its V
// register), B's rows are streamed by an actuator as tagged vectors, and each chunk is one
// TriADA stage (the cell rule of cell/cell_rule.hpp, step t: the pivot column j = t drives
// its row lines, cell (i, k) does W += A[i][t] * B[t][k]); C is read out of W.
// Cost in the model: r * s + l time units per call (O(n sqrt(m) + l) with constant 1).
// The cells compute in a cell mode (precision/cell_mode.hpp): a call is one MMA, its
// outputs what mma_store() gives (the M3XU modes sum a call's exact products wide and add
// C once), and each time step takes the mode's sub-steps (TcuCost::cycles).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "cell/cell_rule.hpp"
#include "core/types.hpp"
#include "mxu/memory_side.hpp"
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

// How a call is executed; both give bitwise the same C and exactly the same counters.
//   reference  the cell-by-cell loop of the cell rule (the spec and the test oracle)
//   fused      register-blocked kernels (src/kernels) in fp64, an exact scalar loop of the
//              mode's mma_*() otherwise (mxu/fused_mxu.hpp; doc/design.md)
enum class MxuExecutor { reference, fused };
MxuExecutor parse_mxu_executor(const std::string& word);  // throws config_error
std::string to_string(MxuExecutor e);

// The fused executor's scratch, kept in the unit so calls allocate nothing once warm.
struct MxuScratch {
  std::vector<double> apack;            // a row block of A packed step-major
  std::vector<const double*> brow;      // row t of B (in place, or of a packed panel)
  std::vector<double> bpack;            // a chain's B, a depth chunk in kNR-wide panels
  std::vector<char> ran;                // a chain: row blocks the kernel updated
  std::vector<std::int32_t> all, list;  // every step; the steps a row block runs
  std::vector<std::uint64_t> nnz_b;     // ESOP: non-zeros of row t of B
  std::vector<double> nnz_bd;           // the same as doubles (the fp64 path's vector counts)
  std::vector<double> w;  // W0 of an accumulating row block; the scalar path's W registers
};

class TensorUnit {
 public:
  // m must be a perfect square >= 1; weak = true restricts calls to r == sqrt(m)
  // (the weak TCU model of Theorem 12). Throws config_error on a bad m or latency.
  TensorUnit(std::int64_t m, std::int64_t latency, bool weak = false, Mode mode = Mode::esop,
             CellMode cell_mode = CellMode::fp64, MxuExecutor executor = MxuExecutor::fused);

  index_t side() const { return s_; }
  std::int64_t m() const { return m_; }
  std::int64_t latency() const { return l_; }
  bool weak() const { return weak_; }
  CellMode cell_mode() const { return cell_mode_; }
  MxuExecutor executor() const { return executor_; }
  void set_executor(MxuExecutor e) { executor_ = e; }

  // C[i][k] = sum_t A[i][t] * B[t][k] for i < r, k < s, row-major with leading dimensions.
  // With accumulate = true the cells' W registers start from C (the paper's affine
  // "+=", free in the model); otherwise from zero. Throws internal_error if r < s, or
  // r != s on a weak unit. Counters in closed form here, then the executor runs the call.
  void multiply(index_t r, const double* A, index_t lda, const double* B, index_t ldb, double* C,
                index_t ldc, bool accumulate = false);

  // A chain of accumulating calls in one pass; by definition exactly
  //   for q in 0..links-1: multiply(r, A + q s, lda, B + q s ldb, ldb, C, ldc,
  //                                 q > 0 || accumulate_first)
  // (C (r x s) (+)= A (r x links s) B (links s x s), the depth split in chunks of s): the
  // same C bits, counters and memory-side calls, in the same order. A and B must not
  // overlap C. The fp64 fused executor runs it as one kernel pass (doc/design.md §8.4).
  void multiply_chain(index_t r, const double* A, index_t lda, const double* B, index_t ldb,
                      double* C, index_t ldc, index_t links, bool accumulate_first = false);

  // A grid of chains: row blocks of r rows (A and C rows b r ..) by column blocks of s
  // columns (B and C columns j s ..), by definition exactly
  //   for b in 0..row_blocks-1: for j in 0..col_blocks-1:
  //     multiply_chain(r, A + b r lda, lda, B + j s, ldb, C + b r ldc + j s, ldc, links,
  //                    accumulate_first)
  // The fp64 fused executor runs it as one kernel pass of row_blocks r rows and col_blocks s
  // columns: A is read and counted once for every column block, B packed and counted once
  // for every row block.
  // unit_per_chain: each chain is its own work unit (start_work_unit() before it, as a
  // caller's loop over units would).
  struct ChainGrid {
    index_t row_blocks = 1, col_blocks = 1;
    bool unit_per_chain = false;
  };
  void multiply_chains(index_t r, const double* A, index_t lda, const double* B, index_t ldb,
                       double* C, index_t ldc, index_t links, ChainGrid grid,
                       bool accumulate_first = false);
  // Whether multiply_chains runs as one kernel pass (the fp64 fused executor). Then a caller
  // may split a grid into its two halves, account_chains() and run_chains(), and run the
  // products of many grids in an order and blocking of its own: every output is its own
  // chain of updates over its depth, so any order of products gives the same bits, and the
  // counters depend on the calls' order alone.
  bool fuses_chains() const {
    return executor_ == MxuExecutor::fused && cell_mode_ == CellMode::fp64;
  }
  // multiply_chains' counters and memory-side calls, in its order, without the product
  // (reads only B). Validates as multiply_chains does.
  void account_chains(index_t r, const double* B, index_t ldb, index_t links, ChainGrid grid,
                      bool accumulate_first = false);
  // multiply_chains' product without its calls' counters, only the cell updates it does
  // (TcuCost::macs, a sum, the same in any order). Requires fuses_chains() (throws
  // internal_error otherwise: the other executors are defined call by call).
  void run_chains(index_t r, const double* A, index_t lda, const double* B, index_t ldb, double* C,
                  index_t ldc, index_t links, ChainGrid grid, bool accumulate_first = false);

  // Column blocks per grid for callers that cut a wide product: kGridColumns columns (B's
  // packed panels of a depth chunk then fill L2), at least one block.
  static constexpr index_t kGridColumns = 256;
  index_t grid_col_blocks() const { return std::max<index_t>(1, kGridColumns / s_); }

  // Scalar work an algorithm does outside the unit (additions, comparisons, ...).
  void cpu(std::uint64_t ops) { cost_.cpu_time += ops; }

  const TcuCost& cost() const { return cost_; }
  void reset() { cost_ = {}; }

  // The memory side (not owned; nullptr = none): every call reports its traffic to it.
  void set_memory(MemorySide* memory) { memory_ = memory; }
  MemorySide* memory() const { return memory_; }
  // A work unit starts: the memory side's buffer is emptied (cold).
  void start_work_unit() {
    if (memory_) memory_->start_work_unit();
  }

 private:
  // Validates a call of r rows (throws as multiply() documents).
  void check_rows(index_t r) const;
  // The closed-form counters of one call and its memory-side report.
  void account(index_t r, const double* B, index_t ldb, bool accumulate);
  // Each returns the cell updates it did (TcuCost::macs).
  std::uint64_t multiply_reference(index_t r, const double* A, index_t lda, const double* B,
                                   index_t ldb, double* C, index_t ldc, bool accumulate);
  std::uint64_t multiply_fused(index_t r, const double* A, index_t lda, const double* B,
                               index_t ldb, double* C, index_t ldc, bool accumulate);

  std::int64_t m_, l_;
  index_t s_;
  bool weak_;
  Mode mode_;
  CellMode cell_mode_;
  MxuExecutor executor_;
  TcuCost cost_;
  MemorySide* memory_ = nullptr;
  MxuScratch scratch_;
};

}  // namespace triada
