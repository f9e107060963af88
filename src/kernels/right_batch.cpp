#include "kernels/right_batch.hpp"

#include <algorithm>

#include "kernels/packing.hpp"

// Kernel path code (kernels/isa_variant.hpp): compiled once per path.
#include "kernels/isa_begin.hpp"
namespace triada::kernels {
inline namespace TRIADA_ISA_NS {

namespace {

// known_zero[j * nb + s] = 1: panel row (s, j) of columns [c0, c1) of `slab` is +0.
// Axis 1: panel j spans lines (i1 = the plane, i2 in [i2_lo[j], i2_hi[j]]); axis 2: every
// panel of a plane lies on line (i1 = slab, i2 = the plane).
void mark_known_zero(const RightBatchArgs& a, const KnownZero& known, index_t slab, index_t c0,
                     index_t c1, RightScratch& x) {
  const index_t nb = a.nb, nbk = (c1 - c0 + kNR - 1) / kNR;
  x.known_zero.assign(static_cast<size_t>(nbk * nb), 0);
  if (known.zero == nullptr) return;
  x.i2_lo.resize(static_cast<size_t>(nbk));
  x.i2_hi.resize(static_cast<size_t>(nbk));
  for (index_t j = 0; j < nbk; ++j) {
    const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR);
    x.i2_lo[j] = n0 / known.ev2;
    x.i2_hi[j] = (n1 - 1) / known.ev2;
  }
  for (index_t s = 0; s < nb; ++s) {
    const index_t tl = known.plane[static_cast<size_t>(s)];
    if (tl < 0) continue;
    if (a.axis == 2) {
      const char z = known.zero[static_cast<size_t>(slab * known.ev1 + tl)] != 0 ? 1 : 0;
      for (index_t j = 0; j < nbk; ++j) x.known_zero[j * nb + s] = z;
      continue;
    }
    const std::uint8_t* zrow = known.zero + tl * known.ev1;
    for (index_t j = 0; j < nbk; ++j) {
      bool z = true;
      for (index_t i2 = x.i2_lo[j]; z && i2 <= x.i2_hi[j]; ++i2) z = zrow[i2] != 0;
      x.known_zero[j * nb + s] = z ? 1 : 0;
    }
  }
}

// Coefficients on the left: all of A packed once (s-major, kMR rows per block). Row
// blocks of nearly equal size (128 rows: 8 x 13 + 2 x 12, not 9 x 14 + 2): a short block
// costs a whole block's loads of B for few FMAs.
index_t pack_coefficients(const RightBatchArgs& a, RightScratch& x) {
  const index_t nb = a.nb, wext = a.wext;
  const index_t mblocks = (wext + kMR - 1) / kMR;
  x.row0.assign(static_cast<size_t>(mblocks + 1), 0);
  for (index_t mb = 0; mb < mblocks; ++mb)
    x.row0[mb + 1] = x.row0[mb] + wext / mblocks + (mb < wext % mblocks ? 1 : 0);
  x.apack.assign(static_cast<size_t>(mblocks * nb * kMR), 0.0);
  for (index_t mb = 0; mb < mblocks; ++mb)
    for (index_t s = 0; s < nb; ++s)
      for (index_t m = 0; m < x.row0[mb + 1] - x.row0[mb]; ++m)
        x.apack[(mb * nb + s) * kMR + m] = a.cbb[s * wext + x.row0[mb] + m];
  return mblocks;
}

// This member's plane rows of columns [c0, c1) into the store's panels, counting their
// non-zeros (ESOP). Plane rows lie far apart (axis 1: a whole plane); prefetching a few
// rows ahead hides the latency the hardware prefetcher leaves on short row segments.
void pack_chunk(const RightBatchArgs& a, index_t c0, index_t c1, double* pack, char* flags,
                RightScratch& x, std::vector<std::uint64_t>& counts, std::uint64_t& bad) {
  constexpr index_t kPrefetchRows = 4;
  const index_t nb = a.nb, nbk = (c1 - c0 + kNR - 1) / kNR;
  const std::vector<char>& mine = *a.mine;
  for (index_t s = 0; s < nb; ++s) {
    if (!mine[s]) continue;  // packed by its owner
    const double* src = x.brow[s];
    const index_t sp4 = s + kPrefetchRows;
    if (sp4 < nb && x.brow[sp4] != nullptr)
      for (index_t n = c0; n < c1; n += 8)
        if (!x.known_zero[((n - c0) / kNR) * nb + sp4]) __builtin_prefetch(x.brow[sp4] + n);
    for (index_t j = 0; j < nbk; ++j) {
      const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR);
      if (x.known_zero[j * nb + s]) {  // nobody reads the row
        flags[j * nb + s] = 0;
        continue;
      }
      const index_t nz = copy_panel_row(src + n0, n1 - n0, pack + (j * nb + s) * kNR, a.esop, bad);
      flags[j * nb + s] = nz != 0 ? 1 : 0;  // an all-zero panel row is never read
      if (nz != 0 && a.esop) counts[s] += static_cast<std::uint64_t>(nz);
    }
  }
}

// Each panel's list of non-zero rows (in streaming order), then the row blocks of W in
// turn, each sweeping the chunk's panels left to right.
void multiply_chunk(const RightBatchArgs& a, index_t q, index_t slab, index_t c0, index_t c1,
                    index_t mblocks, const PanelStore& store, RightScratch& x) {
  const index_t nb = a.nb, nbk = (c1 - c0 + kNR - 1) / kNR;
  x.panel_list.resize(static_cast<size_t>(nbk * nb));
  x.panel_nl.assign(static_cast<size_t>(nbk), 0);
  x.bptr.resize(static_cast<size_t>(nbk * nb));
  x.rows.resize(static_cast<size_t>(nb));
  x.flags.resize(static_cast<size_t>(nb));
  store.locate(q, x.rows.data(), x.flags.data());
  for (index_t j = 0; j < nbk; ++j) {
    const index_t jr = j * nb * kNR, jf = j * nb;
    index_t nl = 0;
    for (index_t s = 0; s < nb; ++s) {
      x.bptr[jf + s] = x.rows[s] + jr;
      x.panel_list[jf + nl] = static_cast<std::int32_t>(s);
      nl += x.flags[s][jf] != 0 ? 1 : 0;
    }
    x.panel_nl[j] = nl;
  }
  for (index_t mb = 0; mb < mblocks; ++mb) {
    const index_t rows = x.row0[mb + 1] - x.row0[mb];
    double* wr[kMR];
    for (index_t m = 0; m < rows; ++m) wr[m] = a.w + (x.row0[mb] + m) * a.w_row + slab * a.w_slab;
    const double* ap = x.apack.data() + mb * nb * kMR;
    for (index_t j = 0; j < nbk; ++j) {
      const index_t n0 = c0 + j * kNR, n1 = std::min(c1, n0 + kNR), nl = x.panel_nl[j];
      if (nl == 0 && !a.fresh) continue;  // fresh: the kernels still write the +0s
      kernel_rows(rows, x.panel_list.data() + j * nb, nl, ap, x.bptr.data() + j * nb, n1 - n0, wr,
                  n0, a.fresh);
    }
  }
}

}  // namespace

// right_batch() on this path (kernels/kernel_table.hpp).
void right_batch_isa(const RightBatchArgs& a, const KnownZero& known, PanelStore& store,
                     RightScratch& x, std::vector<std::uint64_t>& counts, std::uint64_t& bad) {
  const index_t nb = a.nb, N = a.N;
  const std::vector<PlaneRef<double>>& planes = *a.planes;
  x.brow.resize(static_cast<size_t>(nb));
  const index_t mblocks = pack_coefficients(a, x);
  const index_t chunk = panel_chunk(nb), per_slab = (N + chunk - 1) / chunk;
  const index_t chunks = a.slabs * per_slab;
  // Chunk q: columns [c0, c1) of slab q / per_slab.
  auto columns = [&](index_t q, index_t& slab, index_t& c0, index_t& c1) {
    slab = q / per_slab;
    c0 = (q % per_slab) * chunk;
    c1 = std::min(N, c0 + chunk);
  };
  index_t brow_slab = -1;
  auto pack = [&](index_t q) {
    index_t slab = 0, c0 = 0, c1 = 0;
    columns(q, slab, c0, c1);
    if (slab != brow_slab)
      for (index_t s = 0; s < nb; ++s)
        x.brow[s] = (*a.mine)[s] ? planes[s].base + slab * planes[s].st1 : nullptr;
    brow_slab = slab;
    double* panels = nullptr;
    char* flags = nullptr;
    store.begin_chunk(q, (c1 - c0 + kNR - 1) / kNR, panels, flags);
    mark_known_zero(a, known, slab, c0, c1, x);
    pack_chunk(a, c0, c1, panels, flags, x, counts, bad);
    store.publish(q);
  };
  // Packing ahead, a member packs chunk q + 1 while the others' rows of chunk q arrive.
  const bool ahead = store.packs_ahead();
  if (ahead && chunks > 0) pack(0);
  for (index_t q = 0; q < chunks; ++q) {
    if (a.stop && a.stop()) return;
    if (!ahead)
      pack(q);
    else if (q + 1 < chunks)
      pack(q + 1);
    store.acquire(q);  // every member's rows of chunk q are packed
    index_t slab = 0, c0 = 0, c1 = 0;
    columns(q, slab, c0, c1);
    multiply_chunk(a, q, slab, c0, c1, mblocks, store, x);
    store.end_chunk(q);
  }
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada::kernels
#include "kernels/isa_end.hpp"
