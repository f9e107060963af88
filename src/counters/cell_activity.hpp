#pragma once
// Per-cell activity of a run (--activity, doc/design.md §3.6a): every cell's MACs, Y-bus sends
// and receives and waits, per stage. The cell rule fires on non-zero operands only, so a
// stage's events in every cell follow exactly from two bit patterns: which pivots (V) are
// non-zero along each Y line, and which coefficients (C_axis) are non-zero. The engine
// records those (engine/activity.cpp); cell_counts turns them into counts.
#include <array>
#include <cstdint>
#include <vector>

#include "counters/counters.hpp"
#include "geometry/brick_stage.hpp"

namespace triada {

// The counters that happen in cells, as --activity writes them. x_bus_sends are the
// actuators' events (one per element put on an X-bus, not per receiving cell).
inline constexpr std::array<Counter, 4> kCellCounters{Counter::macs, Counter::y_bus_sends,
                                                      Counter::y_bus_receives, Counter::waits};

// Rows of bits: row r holds bits [0, n) in `words` 64-bit words, bit t of the row in word
// t / 64 at position t % 64.
struct BitRows {
  index_t rows = 0, words = 0;
  std::vector<std::uint64_t> bits;
  BitRows() = default;
  BitRows(index_t rows_, index_t n) : rows(rows_), words((n + 63) / 64) {
    bits.assign(static_cast<std::size_t>(rows * words), 0);
  }
  const std::uint64_t* row(index_t r) const { return bits.data() + r * words; }
  void set(index_t r, index_t t) { bits[r * words + t / 64] |= std::uint64_t{1} << (t % 64); }
  bool test(index_t r, index_t t) const { return (row(r)[t / 64] >> (t % 64)) & 1U; }
};

// What the cells of one brick saw in one stage.
struct StageActivity {
  BrickStage bs;
  bool esop = true;
  BitRows pivots;  // row: a line of the brick (BrickStage line index); bit t: V[t] != 0
                   // along the whole line, every brick's planes of it
  BitRows coeffs;  // row: a column k of C_axis; bit t: C_axis[t, k] != 0 (K x N)
};

// The brick's record of a run, one StageActivity per stage in stage order.
struct CellActivity {
  Brick cells;  // the brick's virtual cells (Plan::brick_cells); counts are over this box
  std::vector<StageActivity> stages;
};

// This brick's pivot bits of a stage from its part of V (bs.in_box, C order): only its own
// planes; the engine adds the other bricks' planes of each line.
template <class T>
BitRows pivot_bits(const BrickStage& bs, const std::vector<T>& v_in) {
  BitRows b(bs.n_lines, bs.n);
  const Brick& in = bs.in_box;
  const auto [d1, d2] = bs.line_axes;
  for (index_t i = in.lo[0]; i < in.hi[0]; ++i)
    for (index_t j = in.lo[1]; j < in.hi[1]; ++j)
      for (index_t l = in.lo[2]; l < in.hi[2]; ++l) {
        if (is_zero(v_in[static_cast<std::size_t>(in.local_offset(i, j, l))])) continue;
        const ext3 g{i, j, l};
        b.set((g[d1] - in.lo[d1]) * bs.line_extent[1] + (g[d2] - in.lo[d2]), g[bs.a]);
      }
  return b;
}

// Events of counter c (one of kCellCounters) in every cell of a.cells, C order, during
// stage `stage`, or summed over the stages (stage = -1). Exactly the cell rule's outcomes
// (cell/cell_rule.hpp): for the cell at plane k of a line, under ESOP,
//   macs = #{t : V[t] != 0, C[t, k] != 0} (k < K), y_bus_receives = those with t != k,
//   waits = #{t != k : V[t] = 0, C[t, k] != 0} (k < K),
//   y_bus_sends = [V[k] != 0 and row k of C not all zero] (k < N);
// dense: macs = N, y_bus_receives = N - [k < N] (k < K), y_bus_sends = 1 (k < N), waits 0.
std::vector<std::uint32_t> cell_counts(const CellActivity& a, int stage, Counter c);

}  // namespace triada
