#include "mxu/tensor_unit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "mxu/fused_mxu.hpp"

namespace triada {

MxuExecutor parse_mxu_executor(const std::string& word) {
  if (word == "reference") return MxuExecutor::reference;
  if (word == "fused") return MxuExecutor::fused;
  throw config_error("MXU executor: unknown '" + word + "' (expected reference or fused)");
}

std::string to_string(MxuExecutor e) {
  return e == MxuExecutor::reference ? "reference" : "fused";
}

TensorUnit::TensorUnit(std::int64_t m, std::int64_t latency, bool weak, Mode mode,
                       CellMode cell_mode, MxuExecutor executor)
    : m_(m),
      l_(latency),
      s_(0),
      weak_(weak),
      mode_(mode),
      cell_mode_(cell_mode),
      executor_(executor) {
  if (m < 1)
    throw config_error("the tensor unit size must be a positive square, got " + std::to_string(m));
  s_ = static_cast<index_t>(std::llround(std::sqrt(static_cast<double>(m))));
  // Compared by division: (s + 1)^2 overflows 64 bits for m near 2^63.
  while (s_ > m / s_) --s_;
  while (s_ + 1 <= m / (s_ + 1)) ++s_;
  if (s_ * s_ != m)
    throw config_error("the tensor unit size must be a perfect square (4, 16, 64, 256, ...), got " +
                       std::to_string(m));
  if (latency < 0)
    throw config_error("the tensor unit latency must be >= 0, got " + std::to_string(latency));
}

void TensorUnit::check_rows(index_t r) const {
  if (r < s_) throw internal_error("tensor unit call with r < sqrt(m)");
  if (weak_ && r != s_) throw internal_error("weak tensor unit call with r != sqrt(m)");
}

void TensorUnit::account(index_t r, const double* B, index_t ldb, bool accumulate) {
  // Closed forms: ceil(r / s) chunks of s rows, each one stage of s time steps.
  const auto steps = static_cast<std::uint64_t>(round_up(r, s_));
  const std::uint64_t cycles = steps * static_cast<std::uint64_t>(substeps(cell_mode_));
  ++cost_.calls;
  cost_.rows += static_cast<std::uint64_t>(r);
  cost_.tensor_time += static_cast<std::uint64_t>(r * s_ + l_);
  cost_.macs_dense += static_cast<std::uint64_t>(r * s_ * s_);
  cost_.cell_steps += steps;
  cost_.cycles += cycles;
  if (memory_) memory_->on_call(r, B, ldb, accumulate, cycles);  // before the executor
}

void TensorUnit::multiply(index_t r, const double* A, index_t lda, const double* B, index_t ldb,
                          double* C, index_t ldc, bool accumulate) {
  check_rows(r);
  account(r, B, ldb, accumulate);
  cost_.macs += executor_ == MxuExecutor::reference
                    ? multiply_reference(r, A, lda, B, ldb, C, ldc, accumulate)
                    : multiply_fused(r, A, lda, B, ldb, C, ldc, accumulate);
}

void TensorUnit::multiply_chain(index_t r, const double* A, index_t lda, const double* B,
                                index_t ldb, double* C, index_t ldc, index_t links,
                                bool accumulate_first) {
  multiply_chains(r, A, lda, B, ldb, C, ldc, links, {}, accumulate_first);
}

// Only the fp64 fused executor runs chains at once: store() is the identity there and
// each link's W starts from the C the previous link stored, so every output's updates are
// one chain of fma's over t = 0 .. links s - 1 in order (ESOP skipping as in each call),
// from W0 = C (accumulate_first) or +0: one call of depth links s, and, outputs being
// independent, of every block's rows and columns. The counters and the memory side see
// each link of each block as its own call, in the loop's order, all before the product
// (the hook reads only B, which the product does not write). Everything else runs the loop.
void TensorUnit::multiply_chains(index_t r, const double* A, index_t lda, const double* B,
                                 index_t ldb, double* C, index_t ldc, index_t links, ChainGrid grid,
                                 bool accumulate_first) {
  if (fuses_chains()) {
    account_chains(r, B, ldb, links, grid, accumulate_first);
    run_chains(r, A, lda, B, ldb, C, ldc, links, grid, accumulate_first);
    return;
  }
  for (index_t b = 0; b < grid.row_blocks; ++b)
    for (index_t j = 0; j < grid.col_blocks; ++j) {
      if (grid.unit_per_chain) start_work_unit();
      for (index_t q = 0; q < links; ++q)
        multiply(r, A + b * r * lda + q * s_, lda, B + q * s_ * ldb + j * s_, ldb,
                 C + b * r * ldc + j * s_, ldc, q > 0 || accumulate_first);
    }
}

void TensorUnit::account_chains(index_t r, const double* B, index_t ldb, index_t links,
                                ChainGrid grid, bool accumulate_first) {
  if (links * grid.row_blocks * grid.col_blocks > 0) check_rows(r);  // as the first call would
  for (index_t b = 0; b < grid.row_blocks; ++b)
    for (index_t j = 0; j < grid.col_blocks; ++j) {
      if (grid.unit_per_chain) start_work_unit();
      for (index_t q = 0; q < links; ++q)
        account(r, B + q * s_ * ldb + j * s_, ldb, q > 0 || accumulate_first);
    }
}

void TensorUnit::run_chains(index_t r, const double* A, index_t lda, const double* B, index_t ldb,
                            double* C, index_t ldc, index_t links, ChainGrid grid,
                            bool accumulate_first) {
  if (!fuses_chains())
    throw internal_error("TensorUnit::run_chains: only the fp64 fused executor runs chains");
  if (links * grid.row_blocks * grid.col_blocks == 0) return;
  MxuCall call{r * grid.row_blocks, s_, A, lda, B, ldb, C, ldc, accumulate_first};
  call.depth = links * s_;
  call.width = grid.col_blocks * s_;
  cost_.macs += fused_mxu_fp64(call, mode_, scratch_);
}

std::uint64_t TensorUnit::multiply_fused(index_t r, const double* A, index_t lda, const double* B,
                                         index_t ldb, double* C, index_t ldc, bool accumulate) {
  const MxuCall call{r, s_, A, lda, B, ldb, C, ldc, accumulate};
  return cell_mode_ == CellMode::fp64 ? fused_mxu_fp64(call, mode_, scratch_)
                                      : fused_mxu_scalar(call, mode_, cell_mode_, scratch_);
}

// The spec: the slice of cells, built and stepped by the cell rule.
std::uint64_t TensorUnit::multiply_reference(index_t r, const double* A, index_t lda,
                                             const double* B, index_t ldb, double* C, index_t ldc,
                                             bool accumulate) {
  std::uint64_t macs = 0;
  // The slice: s x s cells; row i of the chunk lies on row line i, column j on plane j.
  std::vector<Cell<double>> cells(static_cast<size_t>(s_ * s_));
  std::vector<XElement<double>> x(static_cast<size_t>(s_));
  std::vector<std::optional<double>> y(static_cast<size_t>(s_));
  for (index_t base = 0; base < r; base += s_) {
    // A chunk of s rows of A; past row r the cells hold no registers and stay idle.
    const index_t rows = std::min(s_, r - base);
    for (index_t i = 0; i < s_; ++i)
      for (index_t j = 0; j < s_; ++j)
        cells[i * s_ + j] =
            i < rows
                ? Cell<double>{true, A[(base + i) * lda + j], true,
                               mma_start(cell_mode_, accumulate ? C[(base + i) * ldc + j] : 0.0)}
                : Cell<double>{};
    for (index_t t = 0; t < s_; ++t) {  // the actuator streams row t of B, tag at t
      for (index_t k = 0; k < s_; ++k) x[k] = XElement<double>{B[t * ldb + k], k == t};
      for (index_t i = 0; i < s_; ++i) y[i] = pivot_output(cells[i * s_ + t], &x[t], mode_);
      for (index_t i = 0; i < s_; ++i)
        for (index_t k = 0; k < s_; ++k) {
          // Under ESOP a zero coefficient off the diagonal never reaches the cell.
          const bool arrives = mode_ == Mode::dense || k == t || B[t * ldb + k] != 0.0;
          if (!arrives) continue;
          const Outcome o = cell_update(
              cells[i * s_ + k], &x[k], y[i] ? &*y[i] : nullptr, mode_,
              [this](double w, double yv, double c) { return mma_mac(cell_mode_, w, yv, c); });
          if (o == Outcome::update_own || o == Outcome::update_received) ++macs;
        }
    }
    for (index_t i = 0; i < rows; ++i)
      for (index_t k = 0; k < s_; ++k) {
        double& out = C[(base + i) * ldc + k];  // still C0: each output is written once
        out = mma_store(cell_mode_, accumulate ? out : 0.0, cells[i * s_ + k].w);
      }
  }
  return macs;
}

}  // namespace triada
