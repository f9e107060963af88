// The planar MXU's fused executor. fp64 cells run the engine's register-blocked kernels
// (kernels/micro_kernel.hpp) with A read in place and B's rows read in place; other cell
// modes run the cell rule's updates as a plain loop through the mode's mac()/store().
//
// Why the fp64 kernels give the reference's bits. Output (i, k) of the reference is W from
// W0 (C, or +0), then for t = 0..s-1 in order W = fma(A[i][t], B[t][k], W), in dense mode
// every t, under ESOP only the t with A[i][t] != 0 and B[t][k] != 0 (is_zero: -0 is zero).
// The kernel does the same fma's in the same order with the same single rounding, in dense
// mode all of them; under ESOP it also does some skipped ones (it drops a step only for a
// whole row block, where every A[i][t] of the block or every B[t][k] is zero).
//  1. A NaN is absorbing: once an operand or W is NaN, every later W is NaN. So if the
//     kernel's final W is not NaN, no NaN ever entered its chain, and every fma it did had
//     non-NaN operands, whose IEEE result is fully determined (only NaN payloads depend on
//     the instruction form). A NaN output is recomputed by the exact path.
//  2. Dense mode: the same operations on the same operands: same bits (by 1).
//  3. ESOP, a skipped step that the kernel does: one factor is +-0. The other is finite
//     (an Inf factor gives Inf * 0 = NaN, recomputed by 1), so the exact product is +-0 and
//     fma gives W + (+-0) = W bit for bit unless W is itself a zero (then +0 or -0, by the
//     sign rules of an exact zero sum). So while both chains are non-zero they agree; they
//     can part only as two zeros of different signs. A step both do (a, b non-zero, not
//     NaN) has an exact product a b != 0, and fma(a, b, +-0) rounds a b alone: the same
//     bits from either zero (an underflow to zero keeps the sign of a b). The chains meet
//     again there. So they differ at the end only if both end at zero: every output that
//     is +-0 after the kernel is recomputed by the exact path.
// The exact path is the reference's loop for one output, through the same mac() (so NaN
// payloads match too); it needs W0, so an accumulating call keeps a copy of C's rows.
// Requires round to nearest without flush-to-zero (the default floating-point environment).
#include "mxu/fused_mxu.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "kernels/micro_kernel.hpp"

namespace triada {

namespace {

using kernels::kMR;
using kernels::kNR;

// Non-zeros of x[0, len) (v != 0: -0 is zero, NaN is not, as is_zero).
std::uint64_t count_nonzero(const double* x, index_t len) {
  std::uint64_t n = 0;
  for (index_t i = 0; i < len; i += 8) {
    unsigned inf_nan = 0;
    n += static_cast<std::uint64_t>(
        std::popcount(simd::nonzero8(x + i, std::min<index_t>(8, len - i), inf_nan)));
  }
  return n;
}

// The reference's updates of one output in order: W from w, t = 0..s-1, skipping zero
// operands under ESOP, through the cell mode's mac(); then what the cell stores.
double exact_output(double w, const double* arow, const double* bcol, index_t ldb, index_t s,
                    Mode mode, CellMode cm) {
  for (index_t t = 0; t < s; ++t) {
    const double a = arow[t], b = bcol[t * ldb];
    if (mode == Mode::esop && (is_zero(a) || is_zero(b))) continue;
    w = mac(cm, w, a, b);
  }
  return store(cm, w);
}

// One fp64 call on the kernels, row block by row block (kMR rows).
class Fp64Call {
 public:
  Fp64Call(const MxuCall& c, Mode mode, MxuScratch& x)
      : c_(c), s_(c.s), esop_(mode == Mode::esop), mode_(mode), x_(x) {}

  std::uint64_t run() {
    prepare();
    for (index_t base = 0; base < c_.r; base += kMR) {
      if (s_ <= kPrefetchSide) prefetch(base + kAhead * kMR);
      block(base, std::min(kMR, c_.r - base));
    }
    return esop_ ? macs_ : static_cast<std::uint64_t>(c_.r * s_ * s_);
  }

 private:
  // The rows of A and C a few blocks ahead. A call's rows are often far apart (a strip of
  // a wide matrix: a page each), and a short row gives the hardware little to go on.
  static constexpr index_t kAhead = 4, kPrefetchSide = 32;
  void prefetch(index_t row0) const {
    for (index_t i = row0; i < std::min(row0 + kMR, c_.r); ++i)
      for (index_t k = 0; k < s_; k += 8) {
        __builtin_prefetch(c_.A + i * c_.lda + k);
        __builtin_prefetch(c_.C + i * c_.ldc + k, 1);
      }
  }

  // B's rows in place; ESOP: their non-zeros (one vector scan per row).
  void prepare() {
    x_.brow.resize(static_cast<size_t>(s_));
    for (index_t t = 0; t < s_; ++t) x_.brow[t] = c_.B + t * c_.ldb;
    if (static_cast<index_t>(x_.all.size()) != s_) {
      x_.all.resize(static_cast<size_t>(s_));
      std::iota(x_.all.begin(), x_.all.end(), 0);
    }
    x_.list.resize(static_cast<size_t>(s_));
    if (esop_) {
      x_.nnz_b.resize(static_cast<size_t>(s_));
      for (index_t t = 0; t < s_; ++t) x_.nnz_b[t] = count_nonzero(x_.brow[t], s_);
    }
    if (c_.accumulate) x_.w.resize(static_cast<size_t>(kMR * s_));
  }

  // s doubles, inline (a library call per short row costs more than the copy).
  void copy_row(const double* from, double* to) const {
    index_t k = 0;
    for (; k + simd::kLanes <= s_; k += simd::kLanes) simd::store(to + k, simd::load(from + k));
    for (; k < s_; ++k) to[k] = from[k];
  }

  void block(index_t base, index_t rows) {
    const double* arow[kMR];
    double* w[kMR];
    for (index_t m = 0; m < rows; ++m) {
      arow[m] = c_.A + (base + m) * c_.lda;
      w[m] = c_.C + (base + m) * c_.ldc;
      if (c_.accumulate) copy_row(w[m], x_.w.data() + m * s_);  // W0, for fix()
    }
    const std::int32_t* list = x_.all.data();
    index_t nl = s_;
    if (esop_) {
      nl = esop_steps(arow, rows);
      list = x_.list.data();
      if (nl == 0) {  // every update skipped: each W keeps W0 (+0 when fresh), exactly
        if (!c_.accumulate)
          for (index_t m = 0; m < rows; ++m) std::fill(w[m], w[m] + s_, 0.0);
        return;
      }
    }
    const kernels::InPlaceKernel kernel = kernels::kInPlaceKernel[static_cast<size_t>(rows - 1)];
    for (index_t n0 = 0; n0 < s_; n0 += kNR)
      kernel(list, nl, arow, x_.brow.data(), n0, std::min(kNR, s_ - n0), w, n0, !c_.accumulate);
    fix(arow, w, rows);
  }

  // ESOP: the block's steps with a non-zero A[i][t] and a non-zero row t of B, and the cell
  // updates they do: sum_t nnz(A block column t) nnz(B row t). Eight steps at a time, the
  // rows inner, so the counts stay in registers.
  index_t esop_steps(const double* const* arow, index_t rows) {
    index_t nl = 0;
    for (index_t t0 = 0; t0 < s_; t0 += 8) {
      std::int64_t na[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      if (t0 + 8 <= s_) {
        for (index_t m = 0; m < rows; ++m)
          for (int j = 0; j < 8; ++j) na[j] += arow[m][t0 + j] != 0.0 ? 1 : 0;
      } else {
        for (index_t m = 0; m < rows; ++m)
          for (index_t j = 0; t0 + j < s_; ++j) na[j] += arow[m][t0 + j] != 0.0 ? 1 : 0;
      }
      for (index_t j = 0; j < 8 && t0 + j < s_; ++j) {
        const std::uint64_t nb = x_.nnz_b[t0 + j];
        if (na[j] == 0 || nb == 0) continue;
        macs_ += static_cast<std::uint64_t>(na[j]) * nb;
        x_.list[nl++] = static_cast<std::int32_t>(t0 + j);
      }
    }
    return nl;
  }

  // Outputs the kernel may have wrong (the file's comment): NaN, and under ESOP +-0. Inf
  // is redone too (the vector test cannot tell it from NaN cheaply); the redo is exact.
  bool suspect(double v) const { return !std::isfinite(v) || (esop_ && v == 0.0); }
  bool any_suspect(const double* o) const {
    for (index_t k = 0; k < s_; k += 8) {
      const index_t len = std::min<index_t>(8, s_ - k);
      unsigned inf_nan = 0;
      const unsigned nz = simd::nonzero8(o + k, len, inf_nan);
      if (inf_nan != 0 || (esop_ && nz != (1u << len) - 1)) return true;
    }
    return false;
  }

  void fix(const double* const* arow, double* const* w, index_t rows) {
    for (index_t m = 0; m < rows; ++m) {
      double* o = w[m];
      if (!any_suspect(o)) continue;
      for (index_t k = 0; k < s_; ++k)
        if (suspect(o[k]))
          o[k] = exact_output(c_.accumulate ? x_.w[m * s_ + k] : 0.0, arow[m], c_.B + k, c_.ldb, s_,
                              mode_, CellMode::fp64);
    }
  }

  const MxuCall& c_;
  index_t s_;
  bool esop_;
  Mode mode_;
  MxuScratch& x_;
  std::uint64_t macs_ = 0;
};

}  // namespace

std::uint64_t fused_mxu_fp64(const MxuCall& c, Mode mode, MxuScratch& x) {
  return Fp64Call(c, mode, x).run();
}

std::uint64_t fused_mxu_scalar(const MxuCall& c, Mode mode, CellMode cell_mode, MxuScratch& x) {
  const index_t s = c.s;
  const bool esop = mode == Mode::esop;
  x.w.resize(static_cast<size_t>(s));
  x.nnz_b.resize(static_cast<size_t>(s));
  if (esop)
    for (index_t t = 0; t < s; ++t) x.nnz_b[t] = count_nonzero(c.B + t * c.ldb, s);
  double* w = x.w.data();
  std::uint64_t macs = 0;
  for (index_t i = 0; i < c.r; ++i) {
    const double* a = c.A + i * c.lda;
    double* out = c.C + i * c.ldc;
    for (index_t k = 0; k < s; ++k) w[k] = c.accumulate ? out[k] : 0.0;
    for (index_t t = 0; t < s; ++t) {  // step t: the pivot A[i][t] meets row t of B
      const double y = a[t];
      const double* b = c.B + t * c.ldb;
      if (!esop) {
        for (index_t k = 0; k < s; ++k) w[k] = mac(cell_mode, w[k], y, b[k]);
        continue;
      }
      if (is_zero(y)) continue;  // no pivot on the line: the row's cells wait
      for (index_t k = 0; k < s; ++k)
        if (!is_zero(b[k])) w[k] = mac(cell_mode, w[k], y, b[k]);
      macs += x.nnz_b[t];
    }
    for (index_t k = 0; k < s; ++k) out[k] = store(cell_mode, w[k]);
  }
  return esop ? macs : static_cast<std::uint64_t>(c.r * s * s);
}

}  // namespace triada
