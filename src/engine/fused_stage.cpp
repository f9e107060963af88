// The fused executor: the output-stationary reading of a stage (paper Sec. 5, Eqs. 6).
// Per brick, the cells' W registers are accumulators and the time steps are the inner
// loop of a register-blocked kernel. Every W element receives exactly the reference's
// sequence of W = fma(y, c, W) in streaming order, so the bits are the same:
//  - zero operands are skipped where that is exact: fma(0, c, W) == W and fma(y, 0, W) == W
//    for finite y, c, because W starts at +0 and a sum of finite terms that starts at +0 is
//    never -0; a plane holding Inf or NaN falls back to the exact scalar rule;
//  - counters are derived per step from the bus traffic: nnz(pivot plane) and nnz(row of C)
//    give macs, receives and waits exactly as the cell rule counts them;
//  - a stage that runs as one batch starts the kernels' accumulators at +0 (no zero fill of
//    W, every element written once) and counts the pivots while packing them;
//  - along axis 3 lines are rows of V (left_batch: scanned once, zero / sparse / dense);
//    along axes 1 and 2 pivot planes are packed in column panels (compute_real), on a
//    node-local line by each plane's owner into shared memory.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "actuator/actuator.hpp"
#include "engine/stage_executors.hpp"
#include "core/memory.hpp"

#if defined(__FMA__) && defined(__AVX2__)
#include <immintrin.h>
#define TRIADA_HAVE_AVX2_FMA 1
#endif

namespace triada::detail {

namespace {

// Where plane t of V sits: P(l1, l2) = base[l1 * st1 + l2 * st2] for the brick's lines.
template <class T>
struct PlaneRef {
  const T* base = nullptr;
  index_t st1 = 0, st2 = 0;
};

template <class T>
struct PlaneEntry {  // one non-zero of a pivot plane sent under ESOP
  std::int64_t line;
  T v;
};

// One step as the brick sees it: the pivot and the coefficients of its W planes.
struct StepInfo {
  index_t t = 0;
  std::uint64_t nnz_c = 0;  // coefficients that update (ESOP: non-zero; dense: all)
  std::uint64_t diag = 0;   // 1 if the pivot itself holds W and updates
  std::uint64_t max_c = 0;  // most updating coefficients in one physical cell's planes
};

// The same fma sequence element by element (columns past the vector blocks).
// fresh: W starts from +0 here (its first contribution), so it is not read.
[[maybe_unused]] void tail_kernel(const std::int32_t* list, index_t nl, const double* ap,
                                  index_t mr, const double* const* brow, index_t b0ofs,
                                  index_t nvalid, double* const* w, index_t n0, index_t rows,
                                  bool fresh) {
  for (index_t m = 0; m < rows; ++m)
    for (index_t n = 0; n < nvalid; ++n) {
      double acc = fresh ? 0.0 : w[m][n0 + n];
      for (index_t i = 0; i < nl; ++i) {
        const std::int32_t s = list[i];
        acc = std::fma(ap[static_cast<index_t>(s) * mr + m], brow[s][b0ofs + n], acc);
      }
      w[m][n0 + n] = acc;
    }
}

#if defined(__AVX512F__)
// 14 x 16: 28 accumulators, two B vectors and a broadcast fill the 32 vector registers
// (16 rows would spill accumulators to the stack every step).
constexpr index_t kMR = 14;   // rows of the register block
constexpr index_t kNR = 16;  // columns of the register block (two 8-wide vectors)
#else
constexpr index_t kMR = 6;
constexpr index_t kNR = 8;   // two 4-wide vectors
#endif
constexpr index_t kPackRows = 16;  // rows pack_rows reads (two groups of 8)

// ---- real kernel: W[m][n] = fma(A(m, s), B(s, n), W[m][n]) for s in `list` order ----
// A is packed s-major: ap[s * MR + m]; B row s starts at brow[s] (+ n0). Columns
// n0 .. n0 + nvalid (nvalid <= kNR) are updated; the rest of the block is left alone.
#if defined(__AVX512F__)
// The two 8-wide halves of a panel row of which `nvalid` (<= kNR) columns are valid.
// Full: all are, so loads and stores need no mask (a masked load costs several times a
// plain one on AMD Zen 4).
template <bool Full>
struct PanelLanes {
  __mmask8 k[2];
  explicit PanelLanes(index_t nvalid)
      : k{static_cast<__mmask8>(nvalid >= 8 ? 0xFF : (1u << nvalid) - 1),
          static_cast<__mmask8>(nvalid >= 16 ? 0xFF : nvalid <= 8 ? 0 : (1u << (nvalid - 8)) - 1)} {}
  __m512d load(const double* p, int half) const {
    return Full ? _mm512_loadu_pd(p + 8 * half) : _mm512_maskz_loadu_pd(k[half], p + 8 * half);
  }
  void store(double* p, int half, __m512d v) const {
    if constexpr (Full)
      _mm512_storeu_pd(p + 8 * half, v);
    else
      _mm512_mask_storeu_pd(p + 8 * half, k[half], v);
  }
};

template <int MR, int AS, bool Full>
inline void micro_kernel_avx512(const std::int32_t* list, index_t nl, const double* ap,
                                const double* const* brow, index_t b0ofs, index_t nvalid,
                                double* const* w, index_t n0, bool fresh) {
  const PanelLanes<Full> lanes(nvalid);
  __m512d c[MR][2];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    c[m][0] = fresh ? _mm512_setzero_pd() : lanes.load(w[m] + n0, 0);
    c[m][1] = fresh ? _mm512_setzero_pd() : lanes.load(w[m] + n0, 1);
  }
  for (index_t i = 0; i < nl; ++i) {
    const std::int32_t s = list[i];
    const double* b = brow[s] + b0ofs;
    const __m512d b0 = lanes.load(b, 0), b1 = lanes.load(b, 1);
    const double* a = ap + static_cast<index_t>(s) * AS;
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const __m512d am = _mm512_set1_pd(a[m]);
      c[m][0] = _mm512_fmadd_pd(am, b0, c[m][0]);
      c[m][1] = _mm512_fmadd_pd(am, b1, c[m][1]);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    lanes.store(w[m] + n0, 0, c[m][0]);
    lanes.store(w[m] + n0, 1, c[m][1]);
  }
}
#endif

template <int MR, int AS = MR>
void micro_kernel(const std::int32_t* list, index_t nl, const double* ap,
                  const double* const* brow, index_t b0ofs, index_t nvalid, double* const* w,
                  index_t n0, bool fresh) {
#if defined(__AVX512F__)
  if (nvalid == kNR)
    micro_kernel_avx512<MR, AS, true>(list, nl, ap, brow, b0ofs, nvalid, w, n0, fresh);
  else
    micro_kernel_avx512<MR, AS, false>(list, nl, ap, brow, b0ofs, nvalid, w, n0, fresh);
#elif defined(TRIADA_HAVE_AVX2_FMA)
  if (nvalid < kNR) {
    tail_kernel(list, nl, ap, AS, brow, b0ofs, nvalid, w, n0, MR, fresh);
    return;
  }
  __m256d c[MR][2];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    c[m][0] = fresh ? _mm256_setzero_pd() : _mm256_loadu_pd(w[m] + n0);
    c[m][1] = fresh ? _mm256_setzero_pd() : _mm256_loadu_pd(w[m] + n0 + 4);
  }
  for (index_t i = 0; i < nl; ++i) {
    const std::int32_t s = list[i];
    const double* b = brow[s] + b0ofs;
    const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
    const double* a = ap + static_cast<index_t>(s) * AS;
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const __m256d am = _mm256_broadcast_sd(a + m);
      c[m][0] = _mm256_fmadd_pd(am, b0, c[m][0]);
      c[m][1] = _mm256_fmadd_pd(am, b1, c[m][1]);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    _mm256_storeu_pd(w[m] + n0, c[m][0]);
    _mm256_storeu_pd(w[m] + n0 + 4, c[m][1]);
  }
#else
  tail_kernel(list, nl, ap, AS, brow, b0ofs, nvalid, w, n0, MR, fresh);
#endif
}

#if defined(__AVX512F__)
// Bits of the lanes `k` of v that are != 0 (NaN too, as for the cell rule's v != 0);
// inf_nan gets the bits of those that are Inf or NaN.
inline unsigned nonzero_lanes(__m512d v, __mmask8 k, unsigned& inf_nan) {
  const __m512i e = _mm512_set1_epi64(static_cast<long long>(0x7FF0000000000000ull));
  inf_nan = _mm512_mask_cmpeq_epi64_mask(k, _mm512_and_si512(_mm512_castpd_si512(v), e), e);
  return _mm512_mask_cmp_pd_mask(k, v, _mm512_setzero_pd(), _CMP_NEQ_UQ);
}
#endif

// Bits i < len (<= 8) set where x[i] != 0 (NaN too); inf_nan gets those of Inf and NaN.
inline unsigned nonzero8(const double* x, index_t len, unsigned& inf_nan) {
#if defined(__AVX512F__)
  // A masked load costs several times a plain one here (AMD Zen 4): mask the tail only.
  const __mmask8 k = static_cast<__mmask8>(len >= 8 ? 0xFF : (1u << len) - 1);
  return nonzero_lanes(len >= 8 ? _mm512_loadu_pd(x) : _mm512_maskz_loadu_pd(k, x), k, inf_nan);
#else
  unsigned nz = 0;
  inf_nan = 0;
  for (index_t i = 0; i < len && i < 8; ++i) {
    nz |= (x[i] != 0.0 ? 1u : 0u) << i;
    inf_nan |= ((std::bit_cast<std::uint64_t>(x[i]) & 0x7FF0000000000000ull) == 0x7FF0000000000000ull ? 1u : 0u) << i;
  }
  return nz;
#endif
}

// Copies one panel row of `len` (<= kNR) pivots, zero padded, unless (ESOP) they are all
// zero. Returns how many are non-zero (ESOP; kNR + 1 in dense mode, meaning "copied") and
// sets `bad` (ESOP) if one is Inf or NaN.
inline index_t copy_panel_row(const double* src, index_t len, double* dst, bool esop,
                              std::uint64_t& bad) {
  index_t nz = kNR + 1;
#if defined(__AVX512F__)
  if (len == kNR) {  // the common case: each half loaded once, tested and stored
    const __m512d a = _mm512_loadu_pd(src), b = _mm512_loadu_pd(src + 8);
    if (esop) {
      unsigned inf_a = 0, inf_b = 0;
      const unsigned m = nonzero_lanes(a, 0xFF, inf_a) | nonzero_lanes(b, 0xFF, inf_b) << 8;
      if (m == 0) return 0;
      nz = std::popcount(m);
      bad |= (inf_a | inf_b) != 0 ? 1 : 0;
    }
    _mm512_storeu_pd(dst, a);
    _mm512_storeu_pd(dst + 8, b);
    return nz;
  }
#endif
  if (esop) {
    unsigned inf_lo = 0, inf_hi = 0;
    const unsigned m = nonzero8(src, std::min<index_t>(len, 8), inf_lo) |
                       (len > 8 ? nonzero8(src + 8, len - 8, inf_hi) << 8 : 0u);
    if (m == 0) return 0;
    nz = std::popcount(m);
    bad |= (inf_lo | inf_hi) != 0 ? 1 : 0;
  }
  std::copy(src, src + len, dst);
  std::fill(dst + len, dst + kNR, 0.0);
  return nz;
}

// The kernel for a block of `rows` (1..kMR) rows of A packed with the kMR stride: a short
// block keeps its rows in registers too (one row at a time would load B per row).
using RowsKernel = void (*)(const std::int32_t*, index_t, const double*, const double* const*,
                            index_t, index_t, double* const*, index_t, bool);
template <std::size_t... R>
constexpr std::array<RowsKernel, sizeof...(R)> rows_kernels(std::index_sequence<R...>) {
  return {&micro_kernel<static_cast<int>(R) + 1, kMR>...};
}
inline constexpr auto kRowsKernel = rows_kernels(std::make_index_sequence<kMR>{});

inline void kernel_rows(index_t rows, const std::int32_t* list, index_t nl, const double* ap,
                        const double* const* brow, index_t nvalid, double* const* w, index_t n0,
                        bool fresh) {
  kRowsKernel[static_cast<size_t>(rows - 1)](list, nl, ap, brow, 0, nvalid, w, n0, fresh);
}

// A row block of up to kMR rows against all N columns. B comes as column panels of
// kNR: row s of panel j at panels[j * S + s].
void block_rows(index_t rows, const std::int32_t* list, index_t nl, const double* ap,
                const double* const* panels, index_t S, index_t N, double* const* w,
                bool fresh) {
  if (nl == 0 && !fresh) return;
  for (index_t n0 = 0, j = 0; n0 < N; n0 += kNR, ++j)
    kernel_rows(rows, list, nl, ap, panels + j * S, std::min(kNR, N - n0), w, n0, fresh);
}

// Packs the first P pivots of kMR rows s-major: ap[p * kMR + m] = r[m][p], by 8x8
// register transposes where the vectors allow. r has kPackRows entries (rows past kMR
// point at zeros); ap has room for kPackRows more values past P * kMR, because the upper
// group's stores run kPackRows - kMR lanes into the next slot, which the lower group then
// overwrites. GCC 12 warns falsely inside the shuffle intrinsics (their undefined
// pass-through operand, GCC PR 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
inline void pack_rows(const double* const* r, index_t P, double* ap) {
  index_t p0 = 0;
#if defined(__AVX512F__)
  static_assert(kMR > 8 && kMR <= kPackRows);
  for (; p0 + 8 <= P; p0 += 8)
    for (int g = 1; g >= 0; --g) {  // upper rows first: the lower group overwrites the spill
      const double* const* rg = r + 8 * g;
      __m512d t[8], u[8];
      for (int i = 0; i < 8; i += 2) {
        const __m512d a = _mm512_loadu_pd(rg[i] + p0), b = _mm512_loadu_pd(rg[i + 1] + p0);
        t[i] = _mm512_unpacklo_pd(a, b);      // rows i, i+1 at columns 0 2 4 6
        t[i + 1] = _mm512_unpackhi_pd(a, b);  // ... at columns 1 3 5 7
      }
      for (int i = 0; i < 8; i += 4) {  // rows i..i+3, columns {0,4} {2,6} {1,5} {3,7}
        u[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);
        u[i + 1] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xDD);
        u[i + 2] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);
        u[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xDD);
      }
      constexpr int col_lo[4] = {0, 2, 1, 3};  // column held by u[j] (and u[j + 4]) low half
      double* dst = ap + p0 * kMR + 8 * g;
      for (int j = 0; j < 4; ++j) {
        _mm512_storeu_pd(dst + col_lo[j] * kMR, _mm512_shuffle_f64x2(u[j], u[j + 4], 0x88));
        _mm512_storeu_pd(dst + (col_lo[j] + 4) * kMR, _mm512_shuffle_f64x2(u[j], u[j + 4], 0xDD));
      }
    }
#endif
  for (index_t p = p0; p < P; ++p)
    for (index_t m = 0; m < kMR; ++m) ap[p * kMR + m] = r[m][p];
}
#pragma GCC diagnostic pop

// Bits m < kMR set where ap[m] != 0.
inline unsigned nonzero_block(const double* ap) {
  unsigned nz = 0;
  for (index_t m = 0; m < kMR; m += 8) {
    unsigned unused = 0;
    nz |= nonzero8(ap + m, std::min<index_t>(8, kMR - m), unused) << m;
  }
  return nz;
}

// W = +0 over n elements, by non-temporal stores where aligned (no read for ownership of
// lines nothing reads soon). The caller fences (store_fence) before W is read.
inline void zero_fill(double* p, index_t n) {
#if defined(__AVX512F__)
  index_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(p + i) & 63) != 0; ++i) p[i] = 0.0;
  const __m512d z = _mm512_setzero_pd();
  for (; i + 8 <= n; i += 8) _mm512_stream_pd(p + i, z);
  for (; i < n; ++i) p[i] = 0.0;
#else
  std::fill(p, p + n, 0.0);
#endif
}

inline void store_fence() {
#if defined(__AVX512F__)  // pairs with the non-temporal stores of zero_fill
  _mm_sfence();
#endif
}

// One line's W columns n0 .. n0 + nvalid (nvalid <= kNR) against its few non-zero
// pivots: W[k] = fma(val[i], panel[step[i] * kNR + k], W[k]) for i < n, in order (from +0
// when fresh). panel: the coefficients of one column panel, kNR per step.
template <bool Full>
inline void sparse_kernel_impl(const double* val, const std::int32_t* step, index_t n,
                               const double* panel, index_t nvalid, double* w, bool fresh) {
#if defined(__AVX512F__)
  const PanelLanes<Full> lanes(nvalid);
  __m512d a0 = fresh ? _mm512_setzero_pd() : lanes.load(w, 0);
  __m512d a1 = fresh ? _mm512_setzero_pd() : lanes.load(w, 1);
  for (index_t i = 0; i < n; ++i) {
    const __m512d y = _mm512_set1_pd(val[i]);
    const double* b = panel + static_cast<index_t>(step[i]) * kNR;
    a0 = _mm512_fmadd_pd(y, lanes.load(b, 0), a0);
    a1 = _mm512_fmadd_pd(y, lanes.load(b, 1), a1);
  }
  lanes.store(w, 0, a0);
  lanes.store(w, 1, a1);
#else
  for (index_t k = 0; k < nvalid; ++k) {
    double acc = fresh ? 0.0 : w[k];
    for (index_t i = 0; i < n; ++i)
      acc = std::fma(val[i], panel[static_cast<index_t>(step[i]) * kNR + k], acc);
    w[k] = acc;
  }
#endif
}

inline void sparse_kernel(const double* val, const std::int32_t* step, index_t n,
                          const double* panel, index_t nvalid, double* w, bool fresh) {
  if (nvalid == kNR)
    sparse_kernel_impl<true>(val, step, n, panel, nvalid, w, fresh);
  else
    sparse_kernel_impl<false>(val, step, n, panel, nvalid, w, fresh);
}

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

// The stage along axis 3 (data on the left): rows = lines, columns = k, W (lines x k) =
// pivots (lines x steps) times coefficients (steps x k). Line l's pivots form a row: in
// place in V when every plane of the batch is the brick's own (rows != nullptr; slot p =
// the plane's index in the row), else gathered from the planes (slot = step). Under ESOP
// each row is scanned once, as a vector: an all-zero line leaves W at +0, a sparse line
// runs alone over its own non-zeros, and dense lines wait until kMR of them are packed
// together by register transposes for the register-blocked kernel. counts[s]: the step's
// non-zero pivots; bad: an Inf or NaN pivot was seen (ESOP); zero_out (ESOP, if given):
// 1 for each line without a non-zero pivot. (Not inlined: one call per batch, and a
// profile then shows this stage apart from the others.)
[[gnu::noinline]] void left_batch(const std::vector<PlaneRef<double>>& planes,
                                  const double* rows, index_t row_len, index_t L,
                                  const double* cbb, index_t wext, double* w, bool esop,
                                  bool fresh, std::vector<std::uint64_t>& counts,
                                  std::uint64_t& bad, LeftScratch& x, std::uint8_t* zero_out) {
  const index_t nb = static_cast<index_t>(planes.size());
  // Row mode: plane s of the batch is column slot_of[s] of the rows of V.
  bool row_mode = rows != nullptr && row_len > 0;
  const auto r0 = reinterpret_cast<std::uintptr_t>(rows);
  for (index_t s = 0; s < nb && row_mode; ++s) {
    const auto b = reinterpret_cast<std::uintptr_t>(planes[s].base);
    row_mode = planes[s].st2 == row_len && b >= r0 &&
               b < r0 + static_cast<std::uintptr_t>(row_len) * sizeof(double);
  }
  const index_t P = row_mode ? row_len : nb;
  x.slot_of.resize(static_cast<size_t>(nb));
  x.step_of_slot.assign(static_cast<size_t>(P), -1);
  x.step_bits.assign(static_cast<size_t>((P + 7) / 8), 0);
  bool natural = true;  // slots ascend with the steps: slot order is streaming order
  for (index_t s = 0; s < nb; ++s) {
    const index_t p = row_mode ? static_cast<index_t>(
                                     (reinterpret_cast<std::uintptr_t>(planes[s].base) - r0) / sizeof(double))
                               : s;
    x.slot_of[s] = static_cast<std::int32_t>(p);
    x.step_of_slot[p] = static_cast<std::int32_t>(s);
    x.step_bits[p / 8] |= static_cast<std::uint8_t>(1u << (p % 8));
    natural = natural && (s == 0 || p > x.slot_of[s - 1]);
  }
  // B: the coefficients in column panels of kNR (zero padded), row of slot p at brow[j P + p].
  const index_t npan = (wext + kNR - 1) / kNR;
  x.bpack.assign(static_cast<size_t>(npan * nb * kNR), 0.0);
  x.brow.assign(static_cast<size_t>(npan * P), x.bpack.data());
  for (index_t j = 0; j < npan; ++j)
    for (index_t s = 0; s < nb; ++s) {
      double* dst = x.bpack.data() + (j * nb + s) * kNR;
      for (index_t n = 0; n < kNR && j * kNR + n < wext; ++n) dst[n] = cbb[s * wext + j * kNR + n];
      x.brow[j * P + x.slot_of[s]] = dst;
    }
  x.apack.resize(static_cast<size_t>(P * kMR + kPackRows));
  x.zeros.assign(static_cast<size_t>(P), 0.0);
  if (!row_mode) x.gather.resize(static_cast<size_t>(kMR * P));
  x.list.resize(static_cast<size_t>(nb));
  x.one.resize(static_cast<size_t>(P + 8));  // + 8: whole-vector stores of compressed slots
  x.masks.resize(static_cast<size_t>((P + 7) / 8));

  index_t pend_line[kMR];
  const double* pend_row[kMR];
  index_t np = 0;
  auto flush = [&] {
    const double* r[kPackRows];
    double* wr[kMR];
    for (index_t m = 0; m < kPackRows; ++m) r[m] = m < np ? pend_row[m] : x.zeros.data();
    for (index_t m = 0; m < kMR; ++m) wr[m] = m < np ? w + pend_line[m] * wext : nullptr;
    pack_rows(r, P, x.apack.data());
    index_t nl = 0;
    for (index_t s = 0; s < nb; ++s) {
      const std::int32_t p = x.slot_of[s];
      if (!esop) {
        x.list[nl++] = p;
        continue;
      }
      const unsigned nz = nonzero_block(x.apack.data() + static_cast<index_t>(p) * kMR);
      if (nz == 0) continue;
      x.list[nl++] = p;
      counts[s] += static_cast<std::uint64_t>(std::popcount(nz));
    }
    block_rows(np, x.list.data(), nl, x.apack.data(), x.brow.data(), P, wext, wr, fresh);
    np = 0;
  };
  // Sparse lines go in groups whose W rows stay in L2 while each column panel of the
  // coefficients (kNR per step, in L1) sweeps them. The group's arrays are sized once and
  // filled through plain pointers and local counts (push_back kept its size in memory).
  constexpr index_t kSparseGroup = 256, kSparseEntries = index_t{1} << 16;
  x.sparse_line.resize(static_cast<size_t>(kSparseGroup));
  x.sparse_ptr.resize(static_cast<size_t>(kSparseGroup + 1));
  x.sparse_val.resize(static_cast<size_t>(kSparseEntries + P));
  x.sparse_step.resize(static_cast<size_t>(kSparseEntries + P));
  index_t n_sparse = 0, n_entries = 0;
  x.sparse_ptr[0] = 0;
  auto flush_sparse = [&] {
    for (index_t n0 = 0, j = 0; n0 < wext; n0 += kNR, ++j) {
      const double* panel = x.bpack.data() + j * nb * kNR;
      for (index_t g = 0; g < n_sparse; ++g) {
        const index_t e0 = x.sparse_ptr[g];
        sparse_kernel(x.sparse_val.data() + e0, x.sparse_step.data() + e0, x.sparse_ptr[g + 1] - e0,
                      panel, std::min(kNR, wext - n0), w + x.sparse_line[g] * wext + n0, fresh);
      }
    }
    n_sparse = n_entries = 0;
  };
  for (index_t l = 0; l < L; ++l) {
    const double* row = row_mode ? rows + l * row_len : nullptr;
    if (!row_mode) {
      double* g = x.gather.data() + np * P;
      for (index_t s = 0; s < nb; ++s) g[s] = planes[s].base[l * planes[s].st2];
      row = g;
    }
    if (esop) {
      // Rows ahead into the cache: the scan is the stage's only pass over V.
      constexpr index_t kAhead = 8;
      if (row_mode && l + kAhead < L)
        for (index_t c = 0; c < P; c += 8) __builtin_prefetch(rows + (l + kAhead) * row_len + c);
      index_t nnz = 0;
      unsigned inf_nan = 0;
      for (index_t c = 0; c * 8 < P; ++c) {
        unsigned in = 0;
        const unsigned m = nonzero8(row + 8 * c, P - 8 * c, in) & x.step_bits[c];
        x.masks[c] = static_cast<std::uint8_t>(m);
        nnz += std::popcount(m);
        inf_nan |= in & x.step_bits[c];
      }
      bad |= inf_nan != 0 ? 1 : 0;
      double* wl = w + l * wext;
      if (zero_out != nullptr) zero_out[l] = nnz == 0 ? 1 : 0;
      if (nnz == 0) {  // an all-zero line (Inf and NaN count as non-zero): W stays +0
        if (fresh) zero_fill(wl, wext);
        continue;
      }
      if (nnz * 4 < nb) {  // sparse: one line over its own non-zeros, in streaming order
        std::int32_t* one = x.one.data();
        const std::int32_t* step_of = x.step_of_slot.data();
        index_t n1 = 0;
#if defined(__AVX512F__) && defined(__AVX512VL__)
        // Branch-free: the set bits' slots, compressed eight lanes at a time (bit loops
        // mispredict on random masks).
        const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        for (index_t c = 0; c * 8 < P; ++c) {
          const __mmask8 m = x.masks[c];
          const __m256i slots = _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(8 * c)));
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(one + n1), _mm256_maskz_compress_epi32(m, slots));
          n1 += std::popcount(static_cast<unsigned>(m));
        }
#else
        for (index_t c = 0; c * 8 < P; ++c)
          for (unsigned m = x.masks[c]; m != 0; m &= m - 1)
            one[n1++] = static_cast<std::int32_t>(8 * c + std::countr_zero(m));
#endif
        if (!natural)
          std::sort(one, one + n1, [&](std::int32_t a, std::int32_t b) { return step_of[a] < step_of[b]; });
        double* val = x.sparse_val.data() + n_entries;
        std::int32_t* stp = x.sparse_step.data() + n_entries;
        std::uint64_t* cnt = counts.data();
        for (index_t i = 0; i < n1; ++i) {
          const std::int32_t st = step_of[one[i]];
          val[i] = row[one[i]];
          stp[i] = st;
          ++cnt[st];
        }
        n_entries += n1;
        x.sparse_line[n_sparse] = l;
        x.sparse_ptr[++n_sparse] = n_entries;
        if (n_sparse == kSparseGroup || n_entries >= kSparseEntries) flush_sparse();
        continue;
      }
    }
    pend_line[np] = l;
    pend_row[np++] = row;
    if (np == kMR) flush();
  }
  if (np > 0) flush();
  flush_sparse();
  store_fence();
}

// Reference semantics, element by element (complex data, or a plane with Inf/NaN under
// ESOP): skip exactly what the cell rule skips.
template <class T>
void exact_batch(Mode mode, CellMode cell_mode, const std::vector<PlaneRef<T>>& planes,
                 const T* cb, index_t wext, index_t e1, index_t e2,
                 const std::function<T*(index_t, index_t, index_t)>& wat) {
  const bool esop = mode == Mode::esop;
  for (size_t s = 0; s < planes.size(); ++s) {
    const PlaneRef<T>& p = planes[s];
    const T* c = cb + static_cast<index_t>(s) * wext;
    for (index_t l1 = 0; l1 < e1; ++l1)
      for (index_t l2 = 0; l2 < e2; ++l2) {
        const T y = p.base[l1 * p.st1 + l2 * p.st2];
        if (esop && is_zero(y)) continue;
        for (index_t k = 0; k < wext; ++k) {
          if (esop && is_zero(c[k])) continue;
          T* w = wat(k, l1, l2);
          *w = mac(cell_mode, *w, y, c[k]);
        }
      }
  }
}

template <class T>
bool finite_value(const T& v) {
  if constexpr (is_complex_v<T>)
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  else
    return std::isfinite(v);
}

// The pivot planes of a line's members on one node, read in place: each member copies its
// V brick into its segment of the topology's shared window of the line (set up once,
// pages mapped; collective over the line), then reads the others' planes directly.
template <class T>
class SharedPlanes {
 public:
  SharedPlanes() = default;
  SharedPlanes(const SharedPlanes&) = delete;
  SharedPlanes& operator=(const SharedPlanes&) = delete;
  ~SharedPlanes() {
    // Collective over the line: every member is done reading before the window is reused.
    if (win_ != MPI_WIN_NULL) MPI_Win_fence(0, win_);
  }

  void open(const Topology& topo, const StagePlan& sp, const std::vector<T>& v, int line_rank,
            int line_size, index_t n_axis) {
    const Plan& plan = topo.plan();
    a_ = sp.axis - 1;
    const auto [d1, d2] = other_axes(sp.axis);
    d1_ = d1;
    d2_ = d2;
    win_ = topo.line_window_handle(sp.axis);
    std::size_t bytes = 0;
    T* mine = reinterpret_cast<T*>(topo.line_window(sp.axis, line_rank, bytes));
    if (bytes < v.size() * sizeof(T)) throw std::logic_error("line window smaller than V");
    if (!v.empty()) std::memcpy(mine, v.data(), v.size() * sizeof(T));
    CHECK_MPI(MPI_Win_fence(0, win_));  // every member's copy is in place
    const ext3 ev = topo.cells().intersect(whole(sp.in_shape)).extents();
    for (int r = 0; r < line_size; ++r) {
      const T* base = reinterpret_cast<const T*>(topo.line_window(sp.axis, r, bytes));
      const Range rg = plan.cell_range(sp.axis, r);
      ext3 er = ev;
      er[a_] = std::max<index_t>(0, std::min(rg.hi, n_axis) - std::min(rg.lo, n_axis));
      members_.push_back({base, rg.lo, {er[1] * er[2], er[2], 1}});
    }
  }

  const T* base(int member) const { return members_[static_cast<size_t>(member)].base; }

  PlaneRef<T> plane(int member, index_t t) const {
    const Member& m = members_[static_cast<size_t>(member)];
    return {m.base + (t - m.lo) * m.stride[a_], m.stride[d1_], m.stride[d2_]};
  }

 private:
  struct Member {
    const T* base;
    index_t lo;   // first plane along the axis
    ext3 stride;  // C-order strides of its V brick
  };
  MPI_Win win_ = MPI_WIN_NULL;
  int a_ = 0, d1_ = 0, d2_ = 0;
  std::vector<Member> members_;
};

// Columns per chunk of pivot panels (data on the right): 256 KiB of panels, so that they
// and the packed coefficients stay in L2 while the row blocks of W sweep them.
index_t panel_chunk(index_t nb) {
  return std::max<index_t>(kNR, (index_t{1} << 18) / (8 * std::max<index_t>(nb, 1)) / kNR * kNR);
}

// One buffer of a member's shared packing: panels of the chunk's own plane rows, then
// their non-zero flags (64-byte aligned).
std::size_t shared_pack_half(index_t nb, index_t N) {
  const auto nbk = static_cast<std::size_t>((std::min(panel_chunk(nb), N) + kNR - 1) / kNR);
  const std::size_t panels = nbk * static_cast<std::size_t>(nb * kNR) * sizeof(double);
  return (panels + nbk * static_cast<std::size_t>(nb) + 63) / 64 * 64;
}

}  // namespace

template <class T>
void fused_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                 std::vector<T>& v, std::vector<T>& w, std::vector<StepRecord>& records,
                 RunCounters& rc, ZeroLines& zero_lines) {
  // The previous stage's knowledge is for this stage only; this one may leave its own.
  ZeroLines known;
  std::swap(known, zero_lines);
  const Plan& plan = topo.plan();
  const StagePlan& sp = plan.stages[stage_index];
  const int a = sp.axis - 1;
  const auto [d1, d2] = other_axes(sp.axis);
  const bool esop = opt.mode == Mode::esop;
  const Brick vb = topo.cells().intersect(whole(sp.in_shape));
  const Brick wb = topo.cells().intersect(whole(sp.out_shape));
  const ext3 ev = vb.extents(), ew = wb.extents();
  const ext3 sv{ev[1] * ev[2], ev[2], 1}, sw{ew[1] * ew[2], ew[2], 1};
  // The brick's planes along the axis may hold V without W or W without V; its lines
  // (the two other axes) are the same for both.
  const Brick cells = topo.cells();
  const index_t vlo = cells.lo[a], vext = ev[a];
  const index_t wlo = cells.lo[a], wext = ew[a];
  // Lines: the two other axes, where V and W have the same extents (Brick::intersect keeps
  // them even when the brick holds no plane of V or W along the stage's axis).
  const index_t le1 = ev[d1], le2 = ev[d2], L = le1 * le2;

  const bool folded_axis = plan.fold[a] > 1;
  // 1. The actuator's stream for this stage: one message per step taken.
  std::vector<StepInfo> steps;
  std::vector<T> cb;  // S x wext coefficients of the brick's W planes, streaming order
  cb.reserve(static_cast<size_t>(sp.n() * wext));
  std::vector<std::byte> msg;
  std::vector<char> present(static_cast<size_t>(wext));
  for (;;) {
    receive_x(topo, sp.axis, msg);
    const size_t row = cb.size();
    cb.resize(row + static_cast<size_t>(wext), T{});
    std::fill(present.begin(), present.end(), 0);
    const XHeader h = read_message<T>(msg, [&](const XEntry<T>& xe) {
      if (xe.k < wlo || xe.k >= wlo + wext) return;
      cb[row + static_cast<size_t>(xe.k - wlo)] = xe.c;
      present[static_cast<size_t>(xe.k - wlo)] = 1;
    });
    if (h.pivot == kEndOfStage) {
      cb.resize(row);
      break;
    }
    StepInfo si;
    si.t = h.pivot;
    std::uint64_t in_block = 0;
    for (index_t k = 0; k < wext; ++k) {
      const T c = cb[row + static_cast<size_t>(k)];
      const bool updates = present[k] && (!esop || !is_zero(c));
      si.nnz_c += updates ? 1 : 0;
      if (wlo + k == si.t && updates) si.diag = 1;
      // Planes of one physical cell are consecutive (folding, Plan::phys_block); unfolded,
      // every plane is its own cell.
      if (k > 0 && (!folded_axis ||
                    plan.phys_of(sp.axis, wlo + k) != plan.phys_of(sp.axis, wlo + k - 1)))
        in_block = 0;
      in_block += updates ? 1 : 0;
      si.max_c = std::max(si.max_c, in_block);
    }
    steps.push_back(si);
  }
  const index_t S = static_cast<index_t>(steps.size());

  if (w.capacity() < static_cast<size_t>(wb.count())) reserve_huge(w, static_cast<size_t>(wb.count()));
  // The binary64 kernels on real data; on one rank per line they also count the pivots
  // while packing them, so the stage needs no separate pass over V.
  const bool kernel_path = !is_complex_v<T> && opt.cell_mode == CellMode::fp64;
  auto w_at = [&](index_t k, index_t l1, index_t l2) -> T* {
    return w.data() + k * sw[a] + l1 * sw[d1] + l2 * sw[d2];
  };

  // 2. Pivot planes: local ones are read in place; others arrive by broadcast on the line
  // (Y-bus) communicator, in batches that overlap with the computation.
  MPI_Comm line = topo.line(sp.axis);
  int line_size = 1, line_rank = 0;
  CHECK_MPI(MPI_Comm_size(line, &line_size));
  CHECK_MPI(MPI_Comm_rank(line, &line_rank));
  MpiTraffic& y_traffic = rc.mpi_stages[stage_index].y;
  const T* vbase = v.data();  // this brick's V (moved into the shared window if there is one)
  auto local_plane = [&](index_t t) {
    return PlaneRef<T>{vbase + (t - vlo) * sv[a], sv[d1], sv[d2]};
  };
  auto plane_nnz = [&](const PlaneRef<T>& p, bool& finite) {
    std::uint64_t n = 0;
    for (index_t l1 = 0; l1 < le1; ++l1)
      for (index_t l2 = 0; l2 < le2; ++l2) {
        const T y = p.base[l1 * p.st1 + l2 * p.st2];
        n += is_zero(y) ? 0 : 1;
        finite = finite && finite_value(y);
      }
    return n;
  };

  // Folding along the lines: a physical cell holds a block of lines; the busiest cell of a
  // step has the most non-zero pivots (ESOP) or lines (dense) in one block.
  const bool lines_folded = plan.fold[d1] > 1 || plan.fold[d2] > 1;
  std::vector<index_t> phys_line;
  std::vector<std::uint64_t> block_count;
  if (lines_folded && L > 0) {
    phys_line.resize(static_cast<size_t>(L));
    const index_t q1 = plan.phys_of(d1 + 1, cells.lo[d1]), q2 = plan.phys_of(d2 + 1, cells.lo[d2]);
    const index_t n2 = plan.phys_of(d2 + 1, cells.lo[d2] + le2 - 1) - q2 + 1;
    for (index_t l1 = 0; l1 < le1; ++l1)
      for (index_t l2 = 0; l2 < le2; ++l2)
        phys_line[l1 * le2 + l2] = (plan.phys_of(d1 + 1, cells.lo[d1] + l1) - q1) * n2 +
                                   (plan.phys_of(d2 + 1, cells.lo[d2] + l2) - q2);
    block_count.resize(static_cast<size_t>(phys_line.back() + 1));
  }
  auto busiest_lines = [&](const PlaneRef<T>& p, std::uint64_t nnz_p) -> std::uint64_t {
    if (!lines_folded || L == 0) return nnz_p > 0 ? 1 : 0;
    std::fill(block_count.begin(), block_count.end(), 0);
    for (index_t l1 = 0; l1 < le1; ++l1)
      for (index_t l2 = 0; l2 < le2; ++l2)
        if (!esop || !is_zero(p.base[l1 * p.st1 + l2 * p.st2])) ++block_count[phys_line[l1 * le2 + l2]];
    return *std::max_element(block_count.begin(), block_count.end());
  };

  // On one node the members of a line read each other's pivot planes in place through an
  // MPI shared-memory window (one batch, no copies); the report still counts the messages
  // the bus transfer stands for, exactly as the message path sends them.
  const bool shared = line_size > 1 && L > 0 && opt.pivot_transport == PivotTransport::automatic &&
                      topo.line_window_handle(sp.axis) != MPI_WIN_NULL &&
                      topo.line_window_element_bytes() >= sizeof(T);
  // Shared packing (binary64 kernels with the data on the right): each member of the
  // line packs only its own planes, chunk by chunk, into its window scratch, and the
  // members read each other's packed rows, so nobody copies V or reads all of it. Each
  // counts its planes' non-zeros while packing; the line learns them after the kernels,
  // and if any member met an Inf or NaN pivot (ESOP) they all redo the stage exactly,
  // reading the planes in place.
  const bool data_left = sp.axis == 3;
  const index_t right_N = sp.axis == 2 ? le2 : L;
  bool shared_pack = false;
  if (shared && kernel_path && !data_left) {
    // Every member must run the kernels (their fences pair up): each needs W planes. With
    // folded lines the counters read every plane (busiest cell), so planes stay readable.
    int ok = wext > 0 && S > 0 && !lines_folded &&
             2 * shared_pack_half(S, right_N) <= Topology::kLineScratchBytes;
    CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, line));
    shared_pack = ok != 0;
  }

  // Non-zeros (and finiteness) of the brick's own planes, in one pass over V in memory
  // order; received planes are counted as they arrive.
  std::vector<std::int64_t> nnz_local(static_cast<size_t>(vext), 0);
  bool finite_local = true;
  const bool count_in_compute = kernel_path && (line_size == 1 || shared_pack);
  if (esop && !v.empty() && !count_in_compute) {
    // One integer pass (it vectorizes): non-zero = any bit but the sign (NaN counts, as it
    // does for the cell rule's v != 0); Inf or NaN = an all-ones exponent.
    constexpr std::uint64_t kExp = 0x7FF0000000000000ull;
    std::uint64_t bad = 0;
    auto count = [&](const T* p, index_t n) {
      std::int64_t nz = 0;
      if constexpr (is_complex_v<T>) {
        for (index_t i = 0; i < n; ++i) nz += is_zero(p[i]) ? 0 : 1;
      } else {
        const auto* bits = reinterpret_cast<const std::uint64_t*>(p);
        for (index_t i = 0; i < n; ++i) {
          nz += (bits[i] << 1) != 0 ? 1 : 0;
          bad |= (bits[i] & kExp) == kExp ? 1 : 0;
        }
      }
      return nz;
    };
    if (a == 2) {  // axis 3: each line is a row of the brick, one element per plane
      for (index_t l = 0; l < ev[0] * ev[1]; ++l) {
        const T* row = v.data() + l * vext;
        if constexpr (is_complex_v<T>) {
          for (index_t p = 0; p < vext; ++p) nnz_local[p] += is_zero(row[p]) ? 0 : 1;
        } else {
          const auto* bits = reinterpret_cast<const std::uint64_t*>(row);
          for (index_t p = 0; p < vext; ++p) {
            nnz_local[p] += (bits[p] << 1) != 0 ? 1 : 0;
            bad |= (bits[p] & kExp) == kExp ? 1 : 0;
          }
        }
      }
    } else {  // axes 1, 2: a plane is one block (axis 1) or ev[0] blocks of ev[2] (axis 2)
      const index_t blocks = a == 0 ? 1 : ev[0], len = a == 0 ? ev[1] * ev[2] : ev[2];
      for (index_t b = 0; b < blocks; ++b)
        for (index_t p = 0; p < vext; ++p) nnz_local[p] += count(v.data() + (b * vext + p) * len, len);
    }
    if constexpr (is_complex_v<T>) {
      const auto* bits = reinterpret_cast<const std::uint64_t*>(v.data());
      for (size_t i = 0; i < 2 * v.size(); ++i) bad |= (bits[i] & kExp) == kExp ? 1 : 0;
    }
    finite_local = bad == 0;
  }
  // Non-zeros of every plane of the axis, known to every member of the line (ESOP), so
  // that all agree on how each plane travels.
  const index_t n_axis = sp.n();
  std::vector<std::int64_t> nnz_all(static_cast<size_t>(n_axis), L);
  auto exchange_nnz = [&] {
    std::vector<int> counts(static_cast<size_t>(line_size)), displs(static_cast<size_t>(line_size));
    int off = 0;
    for (int r = 0; r < line_size; ++r) {
      const Range rg = plan.cell_range(sp.axis, r);
      const index_t n = std::max<index_t>(0, std::min(rg.hi, n_axis) - std::min(rg.lo, n_axis));
      counts[r] = static_cast<int>(n);
      displs[r] = off;
      off += counts[r];
    }
    CHECK_MPI(MPI_Allgatherv(nnz_local.data(), static_cast<int>(vext), MPI_INT64_T,
                             nnz_all.data(), counts.data(), displs.data(), MPI_INT64_T, line));
    y_traffic.add(static_cast<std::uint64_t>(line_size - 1),
                  static_cast<std::uint64_t>(line_size - 1) * sizeof(std::int64_t) * vext);
  };
  if (esop && line_size > 1 && L > 0 && !shared_pack) exchange_nnz();
  auto compressed = [&](index_t t) {
    return esop && static_cast<size_t>(nnz_all[t]) * sizeof(PlaneEntry<T>) <
                       static_cast<size_t>(L) * sizeof(T);
  };

  // Received planes per batch: fewer batches mean fewer passes over W; half a brick per
  // batch buffer keeps a rank within 3x its brick (V, W and two buffers) plus 2 MiB each.
  const index_t budget = opt.plane_batch_bytes > 0
                             ? static_cast<index_t>(opt.plane_batch_bytes)
                             : std::max<index_t>(index_t{2} << 20,
                                                 vb.count() * static_cast<index_t>(sizeof(T)) / 4);
  const index_t B = line_size == 1 || shared
                        ? std::max<index_t>(S, 1)
                        : std::clamp<index_t>(budget / std::max<index_t>(1, L * sizeof(T)), 1,
                                              std::max<index_t>(S, 1));
  SharedPlanes<T> window;
  if (shared && !shared_pack) {
    // V now lives in the window; the vector keeps its pages (and its stale values) as the
    // next stage's W register, so no page is faulted in again (V, W, window: 3x the brick).
    window.open(topo, sp, v, line_rank, line_size, n_axis);
    vbase = window.base(line_rank);
  }
  struct Slot {
    std::vector<T> dense;                        // B x L received planes
    std::vector<std::vector<PlaneEntry<T>>> sparse;  // per step of the batch
    std::vector<MPI_Request> reqs;
  };
  Slot slots[2];
  // The broadcasts the owners' planes stand for when the line shares memory.
  auto account_shared = [&](index_t b0) {
    for (index_t i = b0; i < std::min(S, b0 + B); ++i) {
      const index_t t = steps[i].t;
      if (plan.owner_along(sp.axis, t) != line_rank || (esop && nnz_all[t] == 0)) continue;
      const std::uint64_t bytes = compressed(t) ? static_cast<std::uint64_t>(nnz_all[t]) * sizeof(PlaneEntry<T>)
                                                : static_cast<std::uint64_t>(L) * sizeof(T);
      y_traffic.add(static_cast<std::uint64_t>(line_size - 1),
                    static_cast<std::uint64_t>(line_size - 1) * bytes);
    }
  };
  auto post = [&](index_t b0, Slot& slot) {
    slot.reqs.clear();
    if (line_size == 1 || L == 0) return;
    if (shared) {  // the data is read in place (or packed): account it (shared packing: later)
      if (!shared_pack) account_shared(b0);
      return;
    }
    const index_t nb = std::min(B, S - b0);
    slot.dense.assign(static_cast<size_t>(nb * L), T{});
    slot.sparse.assign(static_cast<size_t>(nb), {});
    for (index_t i = 0; i < nb; ++i) {
      const index_t t = steps[b0 + i].t;
      const int root = plan.owner_along(sp.axis, t);
      const bool mine = root == line_rank;
      if (esop && nnz_all[t] == 0) continue;  // an all-zero plane sends nothing
      void* buf = nullptr;
      int bytes = 0;
      if (compressed(t)) {
        auto& sv_ = slot.sparse[i];
        sv_.resize(static_cast<size_t>(nnz_all[t]));
        if (mine) {
          const PlaneRef<T> p = local_plane(t);
          size_t n = 0;
          for (index_t l1 = 0; l1 < le1; ++l1)
            for (index_t l2 = 0; l2 < le2; ++l2) {
              const T y = p.base[l1 * p.st1 + l2 * p.st2];
              if (!is_zero(y)) sv_[n++] = {l1 * le2 + l2, y};
            }
        }
        buf = sv_.data();
        bytes = static_cast<int>(sv_.size() * sizeof(PlaneEntry<T>));
      } else {
        T* row = slot.dense.data() + i * L;
        if (mine) {
          const PlaneRef<T> p = local_plane(t);
          for (index_t l1 = 0; l1 < le1; ++l1)
            for (index_t l2 = 0; l2 < le2; ++l2) row[l1 * le2 + l2] = p.base[l1 * p.st1 + l2 * p.st2];
        }
        buf = row;
        bytes = static_cast<int>(L * sizeof(T));
      }
      slot.reqs.emplace_back();
      CHECK_MPI(MPI_Ibcast(buf, bytes, MPI_BYTE, root, line, &slot.reqs.back()));
      if (mine)
        y_traffic.add(static_cast<std::uint64_t>(line_size - 1),
                      static_cast<std::uint64_t>(line_size - 1) * static_cast<std::uint64_t>(bytes));
    }
  };

  // GEMM view of the stage (see file comment): rows m, columns n, inner index s.
  //  axis 3: rows = lines, columns = k:  A = pivot values, B = coefficients;
  //  axis 1: rows = k, columns = lines:  A = coefficients, B = pivot planes;
  //  axis 2: per i1, rows = k, columns = i3.
  LeftScratch left_scratch;
  std::vector<double> apack, bpack;    // axes 1, 2: packed coefficients and pivot panels
  std::vector<const double*> brow;     // axes 1, 2: each step's plane row of the slab

  // fresh: W holds no earlier contribution (the stage's only batch), so the kernels start
  // their accumulators at +0 and write every element, and W needs no zero fill.
  // counts[s] (ESOP): the pivot plane's non-zeros over the brick's lines, counted while
  // packing; bad: an Inf or NaN pivot was seen (the caller then redoes the batch exactly).
  auto compute_real = [&](index_t b0, index_t nb, const std::vector<PlaneRef<double>>& planes,
                          bool fresh, std::vector<std::uint64_t>& counts, std::uint64_t& bad) {
    counts.assign(static_cast<size_t>(nb), 0);
    const double* cbb = reinterpret_cast<const double*>(cb.data()) + b0 * wext;
    if (data_left) {
      std::uint8_t* zero_out = nullptr;
      if (esop && fresh) {  // the whole stage in this batch: its zero lines are final
        zero_lines.axis = 3;
        zero_lines.zero.assign(static_cast<size_t>(L), 0);
        zero_out = zero_lines.zero.data();
      }
      left_batch(planes, reinterpret_cast<const double*>(vbase), vext, L, cbb, wext,
                 reinterpret_cast<double*>(w.data()), esop, fresh, counts, bad, left_scratch,
                 zero_out);
      return;
    }
    brow.resize(static_cast<size_t>(nb));
    // Coefficients on the left: pack all of A once (s-major, kMR rows per block).
    // Row blocks of nearly equal size (128 rows: 8 x 13 + 2 x 12, not 9 x 14 + 2): a short
    // block costs a whole block's loads of B for few FMAs.
    const index_t mblocks = (wext + kMR - 1) / kMR;
    std::vector<index_t> row0(static_cast<size_t>(mblocks + 1), 0);
    for (index_t mb = 0; mb < mblocks; ++mb)
      row0[mb + 1] = row0[mb] + wext / mblocks + (mb < wext % mblocks ? 1 : 0);
    apack.assign(static_cast<size_t>(mblocks * nb * kMR), 0.0);
    for (index_t mb = 0; mb < mblocks; ++mb)
      for (index_t s = 0; s < nb; ++s)
        for (index_t m = 0; m < row0[mb + 1] - row0[mb]; ++m)
          apack[(mb * nb + s) * kMR + m] = cbb[s * wext + row0[mb] + m];
    const index_t slabs = sp.axis == 2 ? le1 : 1;
    const index_t N = right_N;
    // Column chunks whose panels (all steps of the batch) stay in cache: each plane row is
    // read once, sequentially, and packed into kNR-wide panels with a non-zero flag.
    const index_t chunk = panel_chunk(nb);
    std::vector<char> flag;
    std::vector<std::int32_t> panel_list;
    std::vector<index_t> panel_nl;
    std::vector<const double*> bptr;
    // Shared packing: member r's buffer h at scratch[r] + h * half (panels, then flags).
    std::vector<int> owner(static_cast<size_t>(nb), line_rank);
    std::vector<std::byte*> scratch;
    std::size_t half = 0;
    MPI_Win win = MPI_WIN_NULL;
    if (shared_pack) {
      for (index_t s = 0; s < nb; ++s) owner[s] = plan.owner_along(sp.axis, steps[b0 + s].t);
      for (int r = 0; r < line_size; ++r) {
        std::size_t bytes = 0;
        scratch.push_back(topo.line_scratch(sp.axis, r, bytes));
      }
      half = shared_pack_half(nb, N);
      win = topo.line_window_handle(sp.axis);
    }
    index_t chunk_no = 0;
    // Zero lines the previous stage (along axis 3) reported, for this brick's own planes
    // (ESOP: a skipped row is exact; V here is that stage's W brick).
    std::vector<char> known_zero, in_brick(static_cast<size_t>(nb), 0);
    std::vector<index_t> i2_lo, i2_hi;
    const bool use_known = esop && known.axis == 3 && (sp.axis == 1 || sp.axis == 2) &&
                           static_cast<index_t>(known.zero.size()) == ev[0] * ev[1];
    if (use_known)
      for (index_t s = 0; s < nb; ++s)
        in_brick[s] = line_size == 1 || plan.owner_along(sp.axis, steps[b0 + s].t) == line_rank;
    // known_zero[j * nb + s] = 1: panel row (s, j) of columns [c0, c1) of `slab` is +0.
    auto mark_known_zero = [&](index_t slab, index_t c0, index_t c1) {
      const index_t nbk = (c1 - c0 + kNR - 1) / kNR;
      known_zero.assign(static_cast<size_t>(nbk * nb), 0);
      if (!use_known) return;
      // Axis 1: panel j spans lines (i1 = the plane, i2 in [i2_lo[j], i2_hi[j]]);
      // axis 2: every panel of a plane lies on line (i1 = slab, i2 = the plane).
      i2_lo.resize(static_cast<size_t>(nbk));
      i2_hi.resize(static_cast<size_t>(nbk));
      for (index_t j = 0; j < nbk; ++j) {
        const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR);
        i2_lo[j] = n0 / ev[2];
        i2_hi[j] = (n1 - 1) / ev[2];
      }
      for (index_t s = 0; s < nb; ++s) {
        if (!in_brick[s]) continue;
        const index_t tl = steps[b0 + s].t - vlo;
        if (sp.axis == 2) {
          const char z = known.zero[static_cast<size_t>(slab * ev[1] + tl)] != 0 ? 1 : 0;
          for (index_t j = 0; j < nbk; ++j) known_zero[j * nb + s] = z;
          continue;
        }
        const std::uint8_t* zrow = known.zero.data() + tl * ev[1];
        for (index_t j = 0; j < nbk; ++j) {
          bool z = true;
          for (index_t i2 = i2_lo[j]; z && i2 <= i2_hi[j]; ++i2) z = zrow[i2] != 0;
          known_zero[j * nb + s] = z ? 1 : 0;
        }
      }
    };
    for (index_t slab = 0; slab < slabs; ++slab) {
      for (index_t s = 0; s < nb; ++s)
        brow[s] = owner[s] == line_rank ? planes[s].base + slab * planes[s].st1 : nullptr;
      for (index_t c0 = 0; c0 < N; c0 += chunk, ++chunk_no) {
        const index_t c1 = std::min(N, c0 + chunk), nbk = (c1 - c0 + kNR - 1) / kNR;
        // Where the panels and flags of this chunk go: private buffers, or this member's
        // half of the shared scratch (double buffered).
        const std::size_t buf_off = static_cast<std::size_t>(chunk_no % 2) * half;
        const std::size_t panel_bytes_max =
            static_cast<std::size_t>((std::min(chunk, N) + kNR - 1) / kNR * nb * kNR) * sizeof(double);
        double* pack_dst;
        char* flag_dst;
        if (shared_pack) {
          pack_dst = reinterpret_cast<double*>(scratch[line_rank] + buf_off);
          flag_dst = reinterpret_cast<char*>(scratch[line_rank] + buf_off + panel_bytes_max);
        } else {
          bpack.resize(static_cast<size_t>(nbk * nb * kNR));
          flag.assign(static_cast<size_t>(nbk * nb), esop ? 0 : 1);
          pack_dst = bpack.data();
          flag_dst = flag.data();
        }
        // Panel rows the previous stage (along axis 3) left at +0: never read.
        mark_known_zero(slab, c0, c1);
        // Plane rows lie far apart (axis 1: a whole plane); prefetching a few rows ahead
        // hides the memory latency the hardware prefetcher leaves on short row segments.
        constexpr index_t kPrefetchRows = 4;
        for (index_t s = 0; s < nb; ++s) {
          if (owner[s] != line_rank) continue;  // packed by its owner
          const double* src = brow[s];
          const index_t sp4 = s + kPrefetchRows;
          if (sp4 < nb && brow[sp4] != nullptr)
            for (index_t n = c0; n < c1; n += 8)
              if (!known_zero[((n - c0) / kNR) * nb + sp4]) __builtin_prefetch(brow[sp4] + n);
          for (index_t j = 0; j < nbk; ++j) {
            double* dst = pack_dst + (j * nb + s) * kNR;
            const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR);
            if (known_zero[j * nb + s]) {
              if (shared_pack) flag_dst[j * nb + s] = 0;
              continue;  // flag stays 0: nobody reads the row
            }
            const index_t nz = copy_panel_row(src + n0, n1 - n0, dst, esop, bad);
            if (shared_pack) flag_dst[j * nb + s] = nz != 0 ? 1 : 0;
            if (nz == 0) continue;  // an all-zero panel row is never read
            if (esop) counts[s] += static_cast<std::uint64_t>(nz);
            flag_dst[j * nb + s] = 1;
          }
        }
        // Every member's rows of this chunk are packed (and the buffer the next chunk
        // overwrites is no longer read by anyone).
        if (shared_pack) CHECK_MPI(MPI_Win_fence(0, win));
        auto packed_row = [&](index_t j, index_t s) -> const double* {
          if (!shared_pack) return pack_dst + (j * nb + s) * kNR;
          return reinterpret_cast<const double*>(scratch[owner[s]] + buf_off) + (j * nb + s) * kNR;
        };
        auto flag_of = [&](index_t j, index_t s) -> bool {
          if (!shared_pack) return flag_dst[j * nb + s] != 0;
          return reinterpret_cast<const char*>(scratch[owner[s]] + buf_off + panel_bytes_max)[j * nb + s] != 0;
        };
        // Each panel's list of non-zero rows (in streaming order), then the row blocks of W
        // in turn, each sweeping the chunk's panels left to right.
        panel_list.resize(static_cast<size_t>(nbk * nb));
        panel_nl.assign(static_cast<size_t>(nbk), 0);
        bptr.resize(static_cast<size_t>(nbk * nb));
        for (index_t j = 0; j < nbk; ++j)
          for (index_t s = 0; s < nb; ++s) {
            bptr[j * nb + s] = packed_row(j, s);
            if (flag_of(j, s)) panel_list[j * nb + panel_nl[j]++] = static_cast<std::int32_t>(s);
          }
        for (index_t mb = 0; mb < mblocks; ++mb) {
          const index_t rows = row0[mb + 1] - row0[mb];
          double* wr[kMR];
          for (index_t m = 0; m < rows; ++m)
            wr[m] = reinterpret_cast<double*>(sp.axis == 2 ? w_at(row0[mb] + m, slab, 0)
                                                           : w_at(row0[mb] + m, 0, 0));
          const double* ap = apack.data() + mb * nb * kMR;
          for (index_t j = 0; j < nbk; ++j) {
            const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR), nl = panel_nl[j];
            if (nl == 0 && !fresh) continue;  // fresh: the kernels still write the +0s
            const std::int32_t* pl = panel_list.data() + j * nb;
            const double* const* pb = bptr.data() + j * nb;
            kernel_rows(rows, pl, nl, ap, pb, n1 - n0, wr, n0, fresh);
          }
        }
      }
    }
    // Nobody packs into the scratch again before every member has read its last chunk.
    if (shared_pack) CHECK_MPI(MPI_Win_fence(0, win));
  };

  // 3. Batches in streaming order. A single batch (one rank per line, or planes read in
  // place) lets the kernels write W from scratch; otherwise W is zeroed and accumulates.
  const bool single = B >= S;
  const bool fresh = kernel_path && single && S > 0 && L > 0 && wext > 0;
  if (fresh)
    w.resize(static_cast<size_t>(wb.count()));  // every element is written below
  else
    w.assign(static_cast<size_t>(wb.count()), T{});
  std::vector<PlaneRef<T>> planes;
  std::vector<std::uint64_t> counts;
  if (S > 0) post(0, slots[0]);
  for (index_t b0 = 0, bi = 0; b0 < S; b0 += B, ++bi) {
    const index_t nb = std::min(B, S - b0);
    Slot& cur = slots[bi % 2];
    if (b0 + B < S) post(b0 + B, slots[(bi + 1) % 2]);
    if (!cur.reqs.empty())
      CHECK_MPI(MPI_Waitall(static_cast<int>(cur.reqs.size()), cur.reqs.data(), MPI_STATUSES_IGNORE));
    planes.assign(static_cast<size_t>(nb), {});
    std::vector<std::uint64_t> nnz(static_cast<size_t>(nb), 0);
    bool finite = true;
    for (index_t i = 0; i < nb; ++i) {
      const StepInfo& si = steps[b0 + i];
      const int root = plan.owner_along(sp.axis, si.t);
      if (line_size == 1 || root == line_rank) {
        planes[i] = local_plane(si.t);
        nnz[i] = static_cast<std::uint64_t>(nnz_local[si.t - vlo]);  // or counted below
        finite = finite && finite_local;
      } else if (shared) {
        // The owner counted this plane (nnz_all); an Inf or NaN in it is caught by the
        // kernels (bad), and the exact path needs no finiteness. Shared packing: the
        // owner packs it, nobody here reads it.
        planes[i] = shared_pack ? PlaneRef<T>{} : window.plane(root, si.t);
        if (esop) nnz[i] = static_cast<std::uint64_t>(nnz_all[si.t]);
      } else {
        T* row = cur.dense.data() + i * L;
        if (compressed(si.t))
          for (const auto& e : cur.sparse[i]) row[e.line] = e.v;
        planes[i] = PlaneRef<T>{row, le2, 1};
        nnz[i] = plane_nnz(planes[i], finite);
      }
    }
    if (L > 0 && wext > 0) {
      // The kernels compute binary64 FMAs; other cell modes, complex data and non-finite
      // pivots under ESOP take the element-by-element path of the cell rule.
      bool exact = !kernel_path || (esop && !finite);
      if constexpr (!is_complex_v<T>) {
        if (!exact) {
          std::uint64_t bad = 0;
          compute_real(b0, nb, planes, fresh, counts, bad);
          if (count_in_compute) nnz.assign(counts.begin(), counts.end());
          if (shared_pack) {
            // The line agrees on an Inf or NaN anywhere (ESOP); every plane's non-zeros
            // come from its owner's count while packing.
            int any_bad = esop && bad != 0 ? 1 : 0;
            CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &any_bad, 1, MPI_INT, MPI_MAX, line));
            bad = static_cast<std::uint64_t>(any_bad);
            if (esop) {
              for (index_t i = 0; i < nb; ++i)
                if (plan.owner_along(sp.axis, steps[b0 + i].t) == line_rank)
                  nnz_local[steps[b0 + i].t - vlo] = static_cast<std::int64_t>(counts[i]);
              exchange_nnz();
              for (index_t i = 0; i < nb; ++i) nnz[i] = static_cast<std::uint64_t>(nnz_all[steps[b0 + i].t]);
            }
            account_shared(b0);
            if (bad) {  // the exact path reads every plane: in place, through the window
              window.open(topo, sp, v, line_rank, line_size, n_axis);
              for (index_t i = 0; i < nb; ++i) {
                const int root = plan.owner_along(sp.axis, steps[b0 + i].t);
                if (root != line_rank) planes[i] = window.plane(root, steps[b0 + i].t);
              }
            }
          }
          if (esop && bad) exact = true;  // an Inf or NaN pivot: redo the (single) batch
        }
      }
      if (exact) {
        if (fresh) std::fill(w.begin(), w.end(), T{});  // W was not zeroed for the kernels
        exact_batch<T>(opt.mode, opt.cell_mode, planes, cb.data() + b0 * wext, wext, le1, le2,
                       w_at);
      }
    } else if (count_in_compute && esop) {
      // No W here to update, but the pivots still drive their lines: count them.
      for (index_t i = 0; i < nb; ++i) {
        bool fin = true;
        nnz[i] = plane_nnz(planes[i], fin);
      }
    }
    // Counters of each step, from what travelled on the buses.
    for (index_t i = 0; i < nb; ++i) {
      const StepInfo& si = steps[b0 + i];
      const int root = plan.owner_along(sp.axis, si.t);
      const std::uint64_t nnz_p = esop ? nnz[i] : static_cast<std::uint64_t>(L);
      StepRecord rec;
      rec.stage = stage_index;
      rec.pivot = si.t;
      const std::uint64_t others = si.nnz_c - si.diag;
      rec[Counter::macs] = nnz_p * si.nnz_c;
      rec[Counter::y_bus_receives] = nnz_p * others;
      rec[Counter::waits] = esop ? (static_cast<std::uint64_t>(L) - nnz_p) * others : 0;
      if (line_size == 1 || root == line_rank) rec[Counter::y_bus_sends] = nnz_p;
      rec.busiest = si.max_c * busiest_lines(planes[i], nnz_p);
      records.push_back(rec);
    }
    if (opt.on_progress) opt.on_progress(stage_index, static_cast<std::uint64_t>(b0 + nb),
                                         static_cast<std::uint64_t>(S));
  }
}

template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<double>&,
                          std::vector<double>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&);
template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<cplx>&,
                          std::vector<cplx>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&);

}  // namespace triada::detail
