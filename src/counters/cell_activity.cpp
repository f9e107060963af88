#include "counters/cell_activity.hpp"

#include <bit>

#include "core/error.hpp"

namespace triada {

namespace {

// A stage's per-column facts: non-zeros of each column k, whether C[k, k] != 0, and
// whether row t is streamed under ESOP (not all zero).
struct ColumnFacts {
  std::vector<std::uint32_t> nnz;
  std::vector<std::uint8_t> diagonal;
  std::vector<std::uint8_t> row_streamed;
};

ColumnFacts column_facts(const StageActivity& s) {
  const index_t n = s.bs.n, k = s.bs.k;
  ColumnFacts f;
  f.nnz.resize(static_cast<std::size_t>(k));
  f.diagonal.resize(static_cast<std::size_t>(k));
  f.row_streamed.assign(static_cast<std::size_t>(n), 0);
  for (index_t col = 0; col < k; ++col) {
    std::uint32_t c = 0;
    for (index_t w = 0; w < s.coeffs.words; ++w) c += std::popcount(s.coeffs.row(col)[w]);
    f.nnz[col] = c;
    f.diagonal[col] = col < n && s.coeffs.test(col, col);
    for (index_t t = 0; t < n; ++t)
      if (s.coeffs.test(col, t)) f.row_streamed[t] = 1;
  }
  return f;
}

// #{t : pivot bit and coefficient bit}: the MACs of the cell at plane k on line ln.
std::uint32_t fired(const StageActivity& s, index_t ln, index_t k) {
  const std::uint64_t* v = s.pivots.row(ln);
  const std::uint64_t* c = s.coeffs.row(k);
  std::uint32_t m = 0;
  for (index_t w = 0; w < s.pivots.words; ++w) m += std::popcount(v[w] & c[w]);
  return m;
}

// Counter c of the cell at plane k (along the axis) on line ln.
std::uint32_t cell_count(const StageActivity& s, const ColumnFacts& f, index_t ln, index_t k,
                         Counter c) {
  const index_t n = s.bs.n, kk = s.bs.k;
  const auto N = static_cast<std::uint32_t>(n);
  const bool has_v = k < n, has_w = k < kk;
  if (c == Counter::y_bus_sends)
    return has_v && (!s.esop || (f.row_streamed[k] && s.pivots.test(ln, k))) ? 1 : 0;
  if (!has_w) return 0;
  if (!s.esop) {
    if (c == Counter::macs) return N;
    return c == Counter::y_bus_receives ? N - (has_v ? 1 : 0) : 0;
  }
  const std::uint32_t macs = fired(s, ln, k);
  if (c == Counter::macs) return macs;
  const std::uint32_t own = has_v && f.diagonal[k] && s.pivots.test(ln, k) ? 1 : 0;
  const std::uint32_t received = macs - own;
  if (c == Counter::y_bus_receives) return received;
  // waits: coefficients that arrived off the tag (t != k) with nothing on the line.
  return f.nnz[k] - (f.diagonal[k] ? 1 : 0) - received;
}

// Adds stage s's counts of c into `out` (over cells, C order).
void add_stage(const Brick& cells, const StageActivity& s, Counter c,
               std::vector<std::uint32_t>& out) {
  const ColumnFacts f = column_facts(s);
  const BrickStage& bs = s.bs;
  const Brick u = bs.union_box.intersect(cells);
  const auto [d1, d2] = bs.line_axes;
  for (index_t i = u.lo[0]; i < u.hi[0]; ++i)
    for (index_t j = u.lo[1]; j < u.hi[1]; ++j)
      for (index_t l = u.lo[2]; l < u.hi[2]; ++l) {
        const ext3 g{i, j, l};
        const index_t ln =
            (g[d1] - bs.union_box.lo[d1]) * bs.line_extent[1] + (g[d2] - bs.union_box.lo[d2]);
        out[static_cast<std::size_t>(cells.local_offset(i, j, l))] +=
            cell_count(s, f, ln, g[bs.a], c);
      }
}

}  // namespace

std::vector<std::uint32_t> cell_counts(const CellActivity& a, int stage, Counter c) {
  if (c == Counter::x_bus_sends) throw internal_error("cell_counts: x_bus_sends are no cell's");
  std::vector<std::uint32_t> out(static_cast<std::size_t>(a.cells.count()), 0);
  for (int s = 0; s < static_cast<int>(a.stages.size()); ++s)
    if (stage < 0 || stage == s) add_stage(a.cells, a.stages[s], c, out);
  return out;
}

}  // namespace triada
