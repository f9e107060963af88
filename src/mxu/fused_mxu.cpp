// The planar MXU's fused executor. fp64 cells run the engine's register-blocked kernels
// (kernels/micro_kernel.hpp) with A read in place and B's rows read in place (a chain packs
// B); other cell modes run the cell rule's updates as a plain loop through the mode's
// mma_start()/mma_mac()/mma_store() (one call is one MMA), as the reference does.
//
// Why the fp64 kernels give the reference's bits. Output (i, k) of the reference is W from
// W0 (C, or +0), then for t = 0..d-1 (d = s) in order W = fma(A[i][t], B[t][k], W), in
// dense mode every t, under ESOP only the t with A[i][t] != 0 and B[t][k] != 0 (is_zero:
// -0 is zero). The kernel does the same fma's in the same order with the same single rounding, in
// dense mode all of them; under ESOP it also does some skipped ones (it drops a step only for a
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
// A chain (TensorUnit::multiply_chain, d = links s) is the same: link q's W starts from
// the C link q - 1 stored, and store() is the identity in fp64, so each output's updates
// are one fma chain over t = 0..d-1 with the same skip rule; its redo replays every link.
// Requires round to nearest without flush-to-zero (the default floating-point environment).
#include "mxu/fused_mxu.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "kernels/micro_kernel.hpp"

// Kernel path code (kernels/isa_variant.hpp): compiled once per path; the dispatch is in
// fused_mxu_paths.cpp.
#include "kernels/isa_begin.hpp"
namespace triada {
inline namespace TRIADA_ISA_NS {

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

// One fp64 call (or chain, depth d = links s; chains on blocks, width n = blocks s) on the
// kernels: depth chunks outer (a chain packs its chunk of B into kNR-wide panels that stay
// in L2), row blocks (kMR rows) inner.
// W lives in registers within a chunk and in C between chunks: storing and reloading an
// fp64 W is the identity, so each output still gets its fma's over t in order.
class Fp64Call {
 public:
  Fp64Call(const MxuCall& c, Mode mode, MxuScratch& x)
      : c_(c),
        n_(c.width > 0 ? c.width : c.s),
        d_(c.depth > 0 ? c.depth : c.s),
        esop_(mode == Mode::esop),
        x_(x),
        pack_(d_ > c.s),
        kc_(pack_ ? std::min(d_, chunk_steps(n_)) : d_),
        panels_(ceil_div(n_, kNR)),
        copy_b_(pack_ && !(c.ldb == n_ && panels_ <= 2)),
        ahead_(kChainAhead * kMR * c.lda) {}

  std::uint64_t run() {
    prepare();
    for (index_t d0 = 0; d0 < d_; d0 += kc_) {
      const index_t kc = std::min(kc_, d_ - d0);
      if (copy_b_) pack_b(d0, kc);
      for (index_t base = 0; base < c_.r; base += kMR) {
        if (!pack_ && n_ <= kPrefetchSide) prefetch(base + kAhead * kMR);
        block(base, std::min(kMR, c_.r - base), d0, kc);
      }
    }
    return esop_ ? macs_ : static_cast<std::uint64_t>(c_.r * n_ * d_);
  }

 private:
  // Steps per chunk: the packed panels of a chunk take up to simd::kMxuChunkBytes (384 KiB,
  // 3/4 of a 512 KiB L2; longer runs of A rows suit the hardware prefetcher better than a
  // smaller chunk).
  static index_t chunk_steps(index_t s) {
    const index_t width = round_up(s, kNR);
    return std::max<index_t>(8, (simd::kMxuChunkBytes / 8) / width);
  }

  // The rows of A and C a few blocks ahead. A call's rows are often far apart (a strip of
  // a wide matrix: a page each), and a short row gives the hardware little to go on.
  static constexpr index_t kAhead = 4, kPrefetchSide = 32, kChainAhead = 2;
  void prefetch(index_t row0) const {
    for (index_t i = row0; i < std::min(row0 + kMR, c_.r); ++i)
      for (index_t k = 0; k < n_; k += 8) {
        __builtin_prefetch(c_.A + i * c_.lda + k);
        __builtin_prefetch(c_.C + i * c_.ldc + k, 1);
      }
  }

  // B's rows (in place, or the panels' rows of a chain); ESOP: their non-zeros.
  void prepare() {
    x_.brow.resize(static_cast<size_t>(copy_b_ ? panels_ * kc_ : d_));
    if (copy_b_) {
      x_.bpack.resize(static_cast<size_t>(panels_ * kc_ * kNR));
      for (index_t i = 0; i < panels_ * kc_; ++i) x_.brow[i] = x_.bpack.data() + i * kNR;
    } else {
      for (index_t t = 0; t < d_; ++t) x_.brow[t] = c_.B + t * c_.ldb;
    }
    if (pack_) x_.ran.assign(static_cast<size_t>(ceil_div(c_.r, kMR)), 0);
    if (static_cast<index_t>(x_.all.size()) < kc_) {
      x_.all.resize(static_cast<size_t>(kc_));
      std::iota(x_.all.begin(), x_.all.end(), 0);
    }
    x_.list.resize(static_cast<size_t>(kc_));
    if (esop_) {  // copied panels count their rows' non-zeros as they go (pack_b)
      x_.nnz_bd.resize(static_cast<size_t>(d_));
      if (!copy_b_)
        for (index_t t = 0; t < d_; ++t)
          x_.nnz_bd[t] = static_cast<double>(count_nonzero(c_.B + t * c_.ldb, n_));
    }
    if (c_.accumulate) x_.w.resize(static_cast<size_t>((pack_ ? c_.r : kMR) * n_));
  }

  // Rows d0 .. d0 + kc of B into the panels: row t of panel j at bpack[(j kc_ + t) kNR],
  // zero-padded to kNR columns (the kernel masks them).
  void pack_b(index_t d0, index_t kc) {
    if (esop_) std::fill_n(x_.nnz_bd.begin() + d0, kc, 0.0);
    for (index_t j = 0; j < panels_; ++j) {
      const index_t n0 = j * kNR, nv = std::min(kNR, n_ - n0);
      for (index_t t = 0; t < kc; ++t) {
        const double* from = c_.B + (d0 + t) * c_.ldb + n0;
        double* to = x_.bpack.data() + (j * kc_ + t) * kNR;
        index_t k = 0;
        for (; k < nv; ++k) to[k] = from[k];
        for (; k < kNR; ++k) to[k] = 0.0;
        if (esop_) x_.nnz_bd[d0 + t] += static_cast<double>(count_nonzero(to, kNR));
      }
    }
  }

  // W0 of an accumulating block (for fix()): a call keeps its block, a chain every row.
  double* w0(index_t base, index_t m) { return x_.w.data() + ((pack_ ? base : 0) + m) * n_; }

  void block(index_t base, index_t rows, index_t d0, index_t kc) {
    const double* arow[kMR];
    double* w[kMR];
    const bool fresh = d0 == 0 && !c_.accumulate;
    for (index_t m = 0; m < rows; ++m) {
      arow[m] = c_.A + (base + m) * c_.lda + d0;
      w[m] = c_.C + (base + m) * c_.ldc;
      if (d0 == 0 && c_.accumulate) simd::copy_short(w[m], w0(base, m), n_);
    }
    const std::int32_t* list = x_.all.data();
    index_t nl = kc;
    if (esop_) {
      nl = esop_steps(arow, rows, d0, kc);
      list = x_.list.data();
    }
    if (nl > 0) {
      if (pack_) x_.ran[base / kMR] = 1;
      const kernels::InPlaceKernel kernel = kernels::kInPlaceKernel[static_cast<size_t>(rows - 1)];
      for (index_t j = 0; j < panels_; ++j) {
        const index_t n0 = j * kNR;
        kernel(list, nl, arow, x_.brow.data() + (copy_b_ ? j * kc_ : d0), copy_b_ ? 0 : n0,
               std::min(kNR, n_ - n0), w, n0, fresh);
      }
    } else if (fresh) {  // every update skipped so far: W is +0, exactly
      for (index_t m = 0; m < rows; ++m) std::fill(w[m], w[m] + n_, 0.0);
    }
    // Without any update (ESOP) every W kept W0 (or +0), exactly: nothing to fix.
    const bool updated = pack_ ? x_.ran[base / kMR] != 0 : nl > 0;
    if (d0 + kc == d_ && updated) fix(base, w, rows);
  }

  static constexpr index_t kV = 8 / simd::kLanes;  // vectors of eight steps

  // c: the non-zeros of A[., t0 .. t0 + 7] over the block's rows, in vector registers
  // (doubles, exact); a chain prefetches A blocks ahead meanwhile.
  void count_rows(const double* const* arow, index_t rows, index_t t0, simd::Vec* c) const {
    for (index_t k = 0; k < kV; ++k) c[k] = simd::zero();
    for (index_t m = 0; m < rows; ++m) {
      simd::count_nonzero8(arow[m] + t0, c);
      if (pack_) __builtin_prefetch(arow[m] + t0 + ahead_);
    }
  }

  // ESOP: the block's steps in [d0, d0 + kc) with a non-zero A[i][t] and a non-zero row t
  // of B (listed relative to d0), and the cell updates they do: sum_t nnz(A block column t)
  // nnz(B row t). Eight steps at a time in vectors: the products of the counts (small
  // integers, exact in doubles) give both the MACs and the steps that run.
  index_t esop_steps(const double* const* arow, index_t rows, index_t d0, index_t kc) {
    const double* nbd = x_.nnz_bd.data() + d0;
    simd::Vec macc[kV], c[kV];
    for (simd::Vec& v : macc) v = simd::zero();
    index_t nl = 0, t0 = 0;
    for (; t0 + 8 <= kc; t0 += 8) {
      count_rows(arow, rows, t0, c);
      double prod[8];
      for (index_t k = 0; k < kV; ++k) {
        const simd::Vec nb = simd::load(nbd + t0 + k * simd::kLanes);
        simd::store(prod + k * simd::kLanes, simd::fma(c[k], nb, simd::zero()));
        macc[k] = simd::fma(c[k], nb, macc[k]);
      }
      unsigned inf_nan = 0;
      unsigned live = simd::nonzero8(prod, 8, inf_nan);
      if (live == 0xffu) {
        for (int j = 0; j < 8; ++j) x_.list[nl + j] = static_cast<std::int32_t>(t0 + j);
        nl += 8;
      } else {
        for (; live != 0; live &= live - 1)
          x_.list[nl++] = static_cast<std::int32_t>(t0 + std::countr_zero(live));
      }
    }
    double sum[8];
    for (index_t k = 0; k < kV; ++k) simd::store(sum + k * simd::kLanes, macc[k]);
    for (const double v : sum) macs_ += static_cast<std::uint64_t>(v);
    for (; t0 < kc; ++t0) {  // the last few steps one at a time
      std::uint64_t na = 0;
      for (index_t m = 0; m < rows; ++m) na += arow[m][t0] != 0.0 ? 1 : 0;
      const auto nb = static_cast<std::uint64_t>(nbd[t0]);
      if (na == 0 || nb == 0) continue;
      macs_ += na * nb;
      x_.list[nl++] = static_cast<std::int32_t>(t0);
    }
    return nl;
  }

  // Outputs the kernel may have wrong (the file's comment): NaN, and under ESOP +-0. Inf
  // is redone too (the vector test cannot tell it from NaN cheaply); the redo is exact.
  bool suspect(double v) const { return !std::isfinite(v) || (esop_ && v == 0.0); }
  bool any_suspect(const double* o) const {
    for (index_t k = 0; k < n_; k += 8) {
      const index_t len = std::min<index_t>(8, n_ - k);
      unsigned inf_nan = 0;
      const unsigned nz = simd::nonzero8(o + k, len, inf_nan);
      if (inf_nan != 0 || (esop_ && nz != (1u << len) - 1)) return true;
    }
    return false;
  }

  // The redo runs the whole depth from W0 (a chain: every link in order, no rounding
  // between links in fp64), with A and B read in place.
  void fix(index_t base, double* const* w, index_t rows) {
    for (index_t m = 0; m < rows; ++m) {
      double* o = w[m];
      if (!any_suspect(o)) continue;
      const double* arow = c_.A + (base + m) * c_.lda;
      list_steps(arow);
      for (index_t k = 0; k < n_; ++k)
        if (suspect(o[k]))
          o[k] = exact_output(c_.accumulate ? w0(base, m)[k] : 0.0, arow, c_.B + k);
    }
  }

  // The steps of a row that update: every step, under ESOP those with A[i][t] != 0 (listed
  // once for all the row's outputs: a padding row of zeros costs one pass, not one each).
  void list_steps(const double* arow) {
    steps_.clear();
    for (index_t t = 0; t < d_; ++t)
      if (!esop_ || !is_zero(arow[t])) steps_.push_back(t);
  }
  // The reference's updates of one output in order over the listed steps, W from w, under
  // ESOP skipping a zero B[t][k] too, through mac(); then what the cell stores.
  double exact_output(double w, const double* arow, const double* bcol) const {
    for (const index_t t : steps_) {
      const double b = bcol[t * c_.ldb];
      if (!esop_ || !is_zero(b)) w = mac(CellMode::fp64, w, arow[t], b);
    }
    return store(CellMode::fp64, w);
  }

  const MxuCall& c_;
  index_t n_, d_;  // the columns (width) and the steps (depth)
  bool esop_;
  MxuScratch& x_;
  bool pack_;  // a chain: depth in chunks of kc_ steps
  index_t kc_, panels_;
  // A chain's B chunk copied into kNR-wide panels (L2-friendly), unless its rows are
  // already one contiguous narrow block (ldb = width, at most two panels: the implicit
  // convolution's stacked right tiles), read in place then.
  bool copy_b_;
  index_t ahead_;  // a chain: the same steps of A kChainAhead row blocks on
  std::uint64_t macs_ = 0;
  std::vector<index_t> steps_;  // fix(): a row's steps that update (list_steps)
};

}  // namespace

// fused_mxu_fp64() on this path (fused_mxu_paths.cpp).
std::uint64_t fused_mxu_fp64_isa(const MxuCall& c, Mode mode, MxuScratch& x) {
  return Fp64Call(c, mode, x).run();
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada
#include "kernels/isa_end.hpp"
