#pragma once
// The register-blocked kernels of the fused executor, written once against simd.hpp.
// Every W element receives W = fma(A(m, s), B(s, n), W) for s in the given list order,
// exactly the reference's sequence, so any instruction set gives the same bits. Kernel
// path code (kernels/isa_variant.hpp): only translation units compiled per path include it.
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/simd.hpp"

// The kernels, in this path's region (kernels/isa_begin.hpp).
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {

inline constexpr index_t kMR = simd::kBlockRows;  // rows of the register block
inline constexpr index_t kNR = 2 * simd::kLanes;  // columns: two vectors
inline constexpr index_t kPackRows = 16;          // rows pack_rows reads (two groups of 8)

// The two vector halves of a panel row of which `nvalid` (<= kNR) columns are valid.
// Full: all are, so loads and stores need no mask (a masked load costs several times a
// plain one on AMD Zen 4).
template <bool Full>
struct PanelLanes {
  simd::Mask k[2];
  explicit PanelLanes(index_t nvalid)
      : k{simd::first_lanes(nvalid), simd::first_lanes(nvalid - simd::kLanes)} {}
  simd::Vec load(const double* p, int half) const {
    if constexpr (Full)
      return simd::load(p + simd::kLanes * half);
    else
      return simd::load(k[half], p + simd::kLanes * half);
  }
  void store(double* p, int half, simd::Vec v) const {
    if constexpr (Full)
      simd::store(p + simd::kLanes * half, v);
    else
      simd::store(k[half], p + simd::kLanes * half, v);
  }
};

// Where the kernel reads A(m, s): packed s-major (ap[s * AS + m]), or in place in the rows
// of a row-major matrix (arow[m][s]; the planar MXU's calls, which would pay as much to
// pack A as to multiply it when s is small).
template <int AS>
struct PackedA {
  const double* ap;
  const double* at(index_t s, int m) const { return ap + s * AS + m; }
};
struct RowsA {
  const double* const* arow;
  const double* at(index_t s, int m) const { return arow[m] + s; }
};

// W[m][n0 + n] = fma(A(m, s), B(s, n), W) for s in `list` order, m < MR, n < nvalid.
// A is read through `a` (PackedA or RowsA); B row s starts at brow[s] + b0ofs. fresh: W
// starts from +0 here (its first contribution), so it is not read.
template <int MR, class ARead, bool Full>
inline void micro_kernel_impl(const std::int32_t* list, index_t nl, ARead a,
                              const double* const* brow, index_t b0ofs, index_t nvalid,
                              double* const* w, index_t n0, bool fresh) {
  const PanelLanes<Full> lanes(nvalid);
  simd::Vec c[MR][2];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    c[m][0] = fresh ? simd::zero() : lanes.load(w[m] + n0, 0);
    c[m][1] = fresh ? simd::zero() : lanes.load(w[m] + n0, 1);
  }
  for (index_t i = 0; i < nl; ++i) {
    const std::int32_t s = list[i];
    const double* b = brow[s] + b0ofs;
    const simd::Vec b0 = lanes.load(b, 0), b1 = lanes.load(b, 1);
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const simd::Vec am = simd::broadcast(a.at(s, m));
      c[m][0] = simd::fma(am, b0, c[m][0]);
      c[m][1] = simd::fma(am, b1, c[m][1]);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    lanes.store(w[m] + n0, 0, c[m][0]);
    lanes.store(w[m] + n0, 1, c[m][1]);
  }
}

template <int MR, int AS = MR>
void micro_kernel(const std::int32_t* list, index_t nl, const double* ap, const double* const* brow,
                  index_t b0ofs, index_t nvalid, double* const* w, index_t n0, bool fresh) {
  if (nvalid == kNR)
    micro_kernel_impl<MR, PackedA<AS>, true>(list, nl, {ap}, brow, b0ofs, nvalid, w, n0, fresh);
  else
    micro_kernel_impl<MR, PackedA<AS>, false>(list, nl, {ap}, brow, b0ofs, nvalid, w, n0, fresh);
}

// The same with A in place: row m of the block at arow[m] (RowsA).
template <int MR>
void micro_kernel_rows(const std::int32_t* list, index_t nl, const double* const* arow,
                       const double* const* brow, index_t b0ofs, index_t nvalid, double* const* w,
                       index_t n0, bool fresh) {
  if (nvalid == kNR)
    micro_kernel_impl<MR, RowsA, true>(list, nl, {arow}, brow, b0ofs, nvalid, w, n0, fresh);
  else
    micro_kernel_impl<MR, RowsA, false>(list, nl, {arow}, brow, b0ofs, nvalid, w, n0, fresh);
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

using InPlaceKernel = void (*)(const std::int32_t*, index_t, const double* const*,
                               const double* const*, index_t, index_t, double* const*, index_t,
                               bool);
template <std::size_t... R>
constexpr std::array<InPlaceKernel, sizeof...(R)> in_place_kernels(std::index_sequence<R...>) {
  return {&micro_kernel_rows<static_cast<int>(R) + 1>...};
}
// kInPlaceKernel[rows - 1]: a block of 1..kMR rows of A read in place (RowsA).
inline constexpr auto kInPlaceKernel = in_place_kernels(std::make_index_sequence<kMR>{});

inline void kernel_rows(index_t rows, const std::int32_t* list, index_t nl, const double* ap,
                        const double* const* brow, index_t nvalid, double* const* w, index_t n0,
                        bool fresh) {
  kRowsKernel[static_cast<std::size_t>(rows - 1)](list, nl, ap, brow, 0, nvalid, w, n0, fresh);
}

// A row block of up to kMR rows against all N columns. B comes as column panels of
// kNR: row s of panel j at panels[j * S + s].
inline void block_rows(index_t rows, const std::int32_t* list, index_t nl, const double* ap,
                       const double* const* panels, index_t S, index_t N, double* const* w,
                       bool fresh) {
  if (nl == 0 && !fresh) return;
  for (index_t n0 = 0, j = 0; n0 < N; n0 += kNR, ++j)
    kernel_rows(rows, list, nl, ap, panels + j * S, std::min(kNR, N - n0), w, n0, fresh);
}

// One line's W columns (nvalid <= kNR) against its few non-zero pivots:
// W[k] = fma(val[i], panel[step[i] * kNR + k], W[k]) for i < n, in order (from +0 when
// fresh). panel: the coefficients of one column panel, kNR per step.
template <bool Full>
inline void sparse_kernel_impl(const double* val, const std::int32_t* step, index_t n,
                               const double* panel, index_t nvalid, double* w, bool fresh) {
  const PanelLanes<Full> lanes(nvalid);
  simd::Vec a0 = fresh ? simd::zero() : lanes.load(w, 0);
  simd::Vec a1 = fresh ? simd::zero() : lanes.load(w, 1);
  for (index_t i = 0; i < n; ++i) {
    const simd::Vec y = simd::broadcast(val + i);
    const double* b = panel + static_cast<index_t>(step[i]) * kNR;
    a0 = simd::fma(y, lanes.load(b, 0), a0);
    a1 = simd::fma(y, lanes.load(b, 1), a1);
  }
  lanes.store(w, 0, a0);
  lanes.store(w, 1, a1);
}

inline void sparse_kernel(const double* val, const std::int32_t* step, index_t n,
                          const double* panel, index_t nvalid, double* w, bool fresh) {
  if (nvalid == kNR)
    sparse_kernel_impl<true>(val, step, n, panel, nvalid, w, fresh);
  else
    sparse_kernel_impl<false>(val, step, n, panel, nvalid, w, fresh);
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"
