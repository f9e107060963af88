#pragma once
// Packing of operands into the kernels' layouts, with the non-zero scan that ESOP needs
// (NaN counts as non-zero, as for the cell rule's v != 0; Inf and NaN are reported so the
// caller can take the exact path). Kernel path code, as micro_kernel.hpp.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

#include "kernels/micro_kernel.hpp"

// In this path's region (kernels/isa_begin.hpp).
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {

using simd::nonzero8;

// Copies one panel row of `len` (<= kNR) pivots, zero padded, unless (ESOP) they are all
// zero. Returns how many are non-zero (ESOP; kNR + 1 in dense mode, meaning "copied") and
// sets `bad` (ESOP) if one is Inf or NaN.
inline index_t copy_panel_row(const double* src, index_t len, double* dst, bool esop,
                              std::uint64_t& bad) {
  index_t nz = kNR + 1;
  if (len == kNR) {  // the common case: each half loaded once, tested and stored
    const simd::Vec a = simd::load(src), b = simd::load(src + simd::kLanes);
    if (esop) {
      const simd::Mask all = simd::first_lanes(simd::kLanes);
      unsigned inf_a = 0, inf_b = 0;
      const unsigned m = simd::nonzero_lanes(a, all, inf_a) | simd::nonzero_lanes(b, all, inf_b)
                                                                  << simd::kLanes;
      if (m == 0) return 0;
      nz = std::popcount(m);
      bad |= (inf_a | inf_b) != 0 ? 1 : 0;
    }
    simd::store(dst, a);
    simd::store(dst + simd::kLanes, b);
    return nz;
  }
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

// Packs the first P pivots of kMR rows s-major: ap[p * kMR + m] = r[m][p], by 8 x 8
// transposes where the instruction set has them. r has kPackRows entries (rows past kMR
// point at zeros); ap has room for kPackRows more values past P * kMR, because the upper
// group's stores run kPackRows - kMR lanes into the next slot, which the lower group then
// overwrites.
static_assert(!simd::kTranspose8 || (kMR > 8 && kMR <= kPackRows));
inline void pack_rows(const double* const* r, index_t P, double* ap) {
  index_t p0 = 0;
  if constexpr (simd::kTranspose8) {
    for (; p0 + 8 <= P; p0 += 8)
      for (int g = 1; g >= 0; --g)  // upper rows first: the lower group overwrites the spill
        simd::transpose8(r + 8 * g, p0, ap + p0 * kMR + 8 * g, kMR);
  }
  for (index_t p = p0; p < P; ++p)
    for (index_t m = 0; m < kMR; ++m) ap[p * kMR + m] = r[m][p];
}

// Bits m < kMR set where ap[m] != 0.
inline unsigned nonzero_block(const double* ap) {
  unsigned nz = 0;
  for (index_t m = 0; m < kMR; m += 8) {
    unsigned unused = 0;
    nz |= nonzero8(ap + m, std::min<index_t>(8, kMR - m), unused) << m;
  }
  return nz;
}

// Columns per chunk of pivot panels (data on the right): simd::kPanelChunkBytes of panels
// (256 KiB), so that they and the packed coefficients stay in L2 while the row blocks of W
// sweep them.
inline index_t panel_chunk(index_t nb) {
  return std::max<index_t>(kNR,
                           simd::kPanelChunkBytes / (8 * std::max<index_t>(nb, 1)) / kNR * kNR);
}

// One buffer of a member's shared packing: panels of the chunk's own plane rows, then
// their non-zero flags (64-byte aligned).
inline std::size_t shared_pack_half(index_t nb, index_t N) {
  const auto nbk = static_cast<std::size_t>((std::min(panel_chunk(nb), N) + kNR - 1) / kNR);
  const std::size_t panels = nbk * static_cast<std::size_t>(nb * kNR) * sizeof(double);
  return (panels + nbk * static_cast<std::size_t>(nb) + 63) / 64 * 64;
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"
