// The fused executor: the output-stationary reading of a stage (paper Sec. 5, Eqs. 6).
// Per brick, the cells' W registers are accumulators and the time steps are the inner
// loop of a register-blocked kernel. Every W element receives exactly the reference's
// sequence of W = fma(y, c, W) in streaming order, so the bits are the same:
//  - zero operands are skipped where that is exact: fma(0, c, W) == W and fma(y, 0, W) == W
//    for finite y, c, because W starts at +0 and a sum of finite terms that starts at +0 is
//    never -0; a plane holding Inf or NaN falls back to the exact scalar rule;
//  - counters are derived per step from the bus traffic: nnz(pivot plane) and nnz(row of C)
//    give macs, receives and waits exactly as the cell rule counts them.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "actuator/actuator.hpp"
#include "cell/stage_executors.hpp"

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
[[maybe_unused]] void tail_kernel(const std::int32_t* list, index_t nl, const double* ap,
                                  index_t mr, const double* const* brow, index_t b0ofs,
                                  index_t nvalid, double* const* w, index_t n0, index_t rows) {
  for (index_t m = 0; m < rows; ++m)
    for (index_t n = 0; n < nvalid; ++n) {
      double acc = w[m][n0 + n];
      for (index_t i = 0; i < nl; ++i) {
        const std::int32_t s = list[i];
        acc = std::fma(ap[static_cast<index_t>(s) * mr + m], brow[s][b0ofs + n], acc);
      }
      w[m][n0 + n] = acc;
    }
}

#if defined(__AVX512F__)
constexpr index_t kMR = 16;   // rows of the register block
constexpr index_t kNR = 16;  // columns of the register block (two 8-wide vectors)
#else
constexpr index_t kMR = 6;
constexpr index_t kNR = 8;   // two 4-wide vectors
#endif

// ---- real kernel: W[m][n] = fma(A(m, s), B(s, n), W[m][n]) for s in `list` order ----
// A is packed s-major: ap[s * MR + m]; B row s starts at brow[s] (+ n0). Columns
// n0 .. n0 + nvalid (nvalid <= kNR) are updated; the rest of the block is left alone.
template <int MR>
void micro_kernel(const std::int32_t* list, index_t nl, const double* ap,
                  const double* const* brow, index_t b0ofs, index_t nvalid, double* const* w,
                  index_t n0) {
#if defined(__AVX512F__)
  const __mmask8 k0 = static_cast<__mmask8>(nvalid >= 8 ? 0xFF : (1u << nvalid) - 1);
  const __mmask8 k1 = static_cast<__mmask8>(nvalid >= 16 ? 0xFF : nvalid <= 8 ? 0 : (1u << (nvalid - 8)) - 1);
  __m512d c[MR][2];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    c[m][0] = _mm512_maskz_loadu_pd(k0, w[m] + n0);
    c[m][1] = _mm512_maskz_loadu_pd(k1, w[m] + n0 + 8);
  }
  for (index_t i = 0; i < nl; ++i) {
    const std::int32_t s = list[i];
    const double* b = brow[s] + b0ofs;
    const __m512d b0 = _mm512_maskz_loadu_pd(k0, b), b1 = _mm512_maskz_loadu_pd(k1, b + 8);
    const double* a = ap + static_cast<index_t>(s) * MR;
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) {
      const __m512d am = _mm512_set1_pd(a[m]);
      c[m][0] = _mm512_fmadd_pd(am, b0, c[m][0]);
      c[m][1] = _mm512_fmadd_pd(am, b1, c[m][1]);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    _mm512_mask_storeu_pd(w[m] + n0, k0, c[m][0]);
    _mm512_mask_storeu_pd(w[m] + n0 + 8, k1, c[m][1]);
  }
#elif defined(TRIADA_HAVE_AVX2_FMA)
  if (nvalid < kNR) {
    tail_kernel(list, nl, ap, MR, brow, b0ofs, nvalid, w, n0, MR);
    return;
  }
  __m256d c[MR][2];
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m) {
    c[m][0] = _mm256_loadu_pd(w[m] + n0);
    c[m][1] = _mm256_loadu_pd(w[m] + n0 + 4);
  }
  for (index_t i = 0; i < nl; ++i) {
    const std::int32_t s = list[i];
    const double* b = brow[s] + b0ofs;
    const __m256d b0 = _mm256_loadu_pd(b), b1 = _mm256_loadu_pd(b + 4);
    const double* a = ap + static_cast<index_t>(s) * MR;
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
  tail_kernel(list, nl, ap, MR, brow, b0ofs, nvalid, w, n0, MR);
#endif
}

// A row block of up to kMR rows against all N columns. B comes as column panels of
// kNR: row s of panel j at panels[j * S + s].
void block_rows(index_t rows, const std::int32_t* list, index_t nl, const double* ap,
                const double* const* panels, index_t S, index_t N, double* const* w) {
  if (nl == 0) return;
  if (rows == kMR) {
    for (index_t n0 = 0, j = 0; n0 < N; n0 += kNR, ++j)
      micro_kernel<kMR>(list, nl, ap, panels + j * S, 0, std::min(kNR, N - n0), w, n0);
    return;
  }
  // Fewer rows: one row at a time, reading the packed block with its kMR stride.
  std::vector<double> a1(static_cast<size_t>(list[nl - 1] + 1));
  for (index_t m = 0; m < rows; ++m) {
    for (index_t i = 0; i < nl; ++i) a1[list[i]] = ap[static_cast<index_t>(list[i]) * kMR + m];
    double* wm = w[m];
    for (index_t n0 = 0, j = 0; n0 < N; n0 += kNR, ++j)
      micro_kernel<1>(list, nl, a1.data(), panels + j * S, 0, std::min(kNR, N - n0), &wm, n0);
  }
}

// Reference semantics, element by element (complex data, or a plane with Inf/NaN under
// ESOP): skip exactly what the cell rule skips.
template <class T>
void exact_batch(Mode mode, const std::vector<PlaneRef<T>>& planes, const T* cb, index_t wext,
                 index_t e1, index_t e2, const std::function<T*(index_t, index_t, index_t)>& wat) {
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
          *w = mac(*w, y, c[k]);
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

}  // namespace

template <class T>
void fused_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                 const std::vector<T>& v, std::vector<T>& w, std::vector<StepRecord>& records,
                 RunCounters& rc) {
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
  const index_t e1 = std::max(ev[d1], ew[d1]) == 0 ? 0 : ev[d1];
  const index_t e2 = ev[d2];
  const index_t L = (vext > 0 ? e1 * e2 : ew[d1] * ew[d2]);
  const index_t le1 = vext > 0 ? e1 : ew[d1], le2 = vext > 0 ? e2 : ew[d2];

  // 1. The actuator's stream for this stage: one message per step taken.
  std::vector<StepInfo> steps;
  std::vector<T> cb;  // S x wext coefficients of the brick's W planes, streaming order
  for (;;) {
    const std::vector<std::byte> msg = receive_x(topo, sp.axis);
    XHeader h;
    std::memcpy(&h, msg.data(), sizeof h);
    if (h.pivot == kEndOfStage) break;
    StepInfo si;
    si.t = h.pivot;
    const size_t row = cb.size();
    cb.resize(row + static_cast<size_t>(wext), T{});
    std::vector<char> present(static_cast<size_t>(wext), 0);
    for (std::int64_t e = 0; e < h.count; ++e) {
      XEntry<T> xe;
      std::memcpy(&xe, msg.data() + sizeof h + static_cast<size_t>(e) * sizeof xe, sizeof xe);
      if (xe.k < wlo || xe.k >= wlo + wext) continue;
      cb[row + static_cast<size_t>(xe.k - wlo)] = xe.c;
      present[static_cast<size_t>(xe.k - wlo)] = 1;
    }
    std::uint64_t in_block = 0;
    for (index_t k = 0; k < wext; ++k) {
      const T c = cb[row + static_cast<size_t>(k)];
      const bool updates = present[k] && (!esop || !is_zero(c));
      si.nnz_c += updates ? 1 : 0;
      if (wlo + k == si.t && updates) si.diag = 1;
      // Planes of one physical cell are consecutive (folding, Plan::phys_block).
      if (k > 0 && plan.phys_of(sp.axis, wlo + k) != plan.phys_of(sp.axis, wlo + k - 1)) in_block = 0;
      in_block += updates ? 1 : 0;
      si.max_c = std::max(si.max_c, in_block);
    }
    steps.push_back(si);
  }
  const index_t S = static_cast<index_t>(steps.size());

  w.assign(static_cast<size_t>(wb.count()), T{});  // reuses the caller's buffer
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
  auto local_plane = [&](index_t t) {
    return PlaneRef<T>{v.data() + (t - vlo) * sv[a], sv[d1], sv[d2]};
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

  // Non-zeros (and finiteness) of the brick's own planes, in one pass over V in memory
  // order; received planes are counted as they arrive.
  std::vector<std::int64_t> nnz_local(static_cast<size_t>(vext), 0);
  std::vector<char> finite_local(static_cast<size_t>(vext), 1);
  for (index_t i = 0; esop && i < ev[0]; ++i)
    for (index_t j = 0; j < ev[1]; ++j)
      for (index_t l = 0; l < ev[2]; ++l) {
        const ext3 g{i, j, l};
        const T y = v[i * sv[0] + j * sv[1] + l];
        nnz_local[g[a]] += is_zero(y) ? 0 : 1;
        if (!finite_value(y)) finite_local[g[a]] = 0;
      }
  // Non-zeros of every plane of the axis, known to every member of the line (ESOP), so
  // that all agree on how each plane travels.
  const index_t n_axis = sp.n();
  std::vector<std::int64_t> nnz_all(static_cast<size_t>(n_axis), L);
  if (esop && line_size > 1 && L > 0) {
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
  }
  auto compressed = [&](index_t t) {
    return esop && static_cast<size_t>(nnz_all[t]) * sizeof(PlaneEntry<T>) <
                       static_cast<size_t>(L) * sizeof(T);
  };

  const index_t budget = static_cast<index_t>(opt.plane_batch_bytes);
  const index_t B = line_size == 1 ? std::max<index_t>(S, 1)
                                   : std::clamp<index_t>(budget / std::max<index_t>(1, L * sizeof(T)), 1, std::max<index_t>(S, 1));
  struct Slot {
    std::vector<T> dense;                        // B x L received planes
    std::vector<std::vector<PlaneEntry<T>>> sparse;  // per step of the batch
    std::vector<MPI_Request> reqs;
  };
  Slot slots[2];
  auto post = [&](index_t b0, Slot& slot) {
    slot.reqs.clear();
    if (line_size == 1 || L == 0) return;
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
  const bool data_left = sp.axis == 3;
  std::vector<std::int32_t> list;
  std::vector<double> apack;
  std::vector<const double*> brow, prow;
  std::vector<double> a1, bpack;

  auto compute_real = [&](index_t b0, index_t nb, const std::vector<PlaneRef<double>>& planes) {
    const double* cbb = reinterpret_cast<const double*>(cb.data()) + b0 * wext;
    list.resize(static_cast<size_t>(nb));
    brow.resize(static_cast<size_t>(nb));
    if (data_left) {
      // B: coefficients packed in column panels of kNR (zero padded); A: pivot values of
      // kMR lines packed s-major.
      const index_t npan = (wext + kNR - 1) / kNR;
      bpack.assign(static_cast<size_t>(npan * nb * kNR), 0.0);
      brow.resize(static_cast<size_t>(npan * nb));
      for (index_t j = 0; j < npan; ++j)
        for (index_t s = 0; s < nb; ++s) {
          double* dst = bpack.data() + (j * nb + s) * kNR;
          for (index_t n = 0; n < kNR && j * kNR + n < wext; ++n) dst[n] = cbb[s * wext + j * kNR + n];
          brow[j * nb + s] = dst;
        }
      apack.assign(static_cast<size_t>(nb * kMR), 0.0);
      std::vector<std::int32_t> one(static_cast<size_t>(nb));
      for (index_t m0 = 0; m0 < L; m0 += kMR) {
        const index_t rows = std::min(kMR, L - m0);
        double* wr[kMR];
        index_t nl = 0, nz = 0;
        for (index_t s = 0; s < nb; ++s) {
          bool any = false;
          for (index_t m = 0; m < rows; ++m) {
            const index_t l = m0 + m, l1 = l / le2, l2 = l % le2;
            const double y = planes[s].base[l1 * planes[s].st1 + l2 * planes[s].st2];
            apack[s * kMR + m] = y;
            any |= y != 0.0;
            nz += y != 0.0;
          }
          if (!esop || any) list[nl++] = static_cast<std::int32_t>(s);
        }
        for (index_t m = 0; m < rows; ++m) {
          const index_t l = m0 + m;
          wr[m] = reinterpret_cast<double*>(w_at(0, l / le2, l % le2));
        }
        if (esop && nz * 2 < nl * rows) {
          // Sparse rows: each line with its own list of non-zero pivots.
          for (index_t m = 0; m < rows; ++m) {
            index_t n1 = 0;
            for (index_t i = 0; i < nl; ++i)
              if (apack[list[i] * kMR + m] != 0.0) one[n1++] = list[i];
            a1.assign(static_cast<size_t>(nb), 0.0);
            for (index_t i = 0; i < n1; ++i) a1[one[i]] = apack[one[i] * kMR + m];
            for (index_t n0 = 0, j = 0; n0 < wext; n0 += kNR, ++j)
              micro_kernel<1>(one.data(), n1, a1.data(), brow.data() + j * nb, 0,
                              std::min(kNR, wext - n0), &wr[m], n0);
          }
        } else {
          block_rows(rows, list.data(), nl, apack.data(), brow.data(), nb, wext, wr);
        }
      }
      return;
    }
    // Coefficients on the left: pack all of A once (s-major, kMR rows per block).
    const index_t mblocks = (wext + kMR - 1) / kMR;
    apack.assign(static_cast<size_t>(mblocks * nb * kMR), 0.0);
    for (index_t mb = 0; mb < mblocks; ++mb)
      for (index_t s = 0; s < nb; ++s)
        for (index_t m = 0; m < kMR && mb * kMR + m < wext; ++m)
          apack[(mb * nb + s) * kMR + m] = cbb[s * wext + mb * kMR + m];
    prow.resize(static_cast<size_t>(nb));
    const index_t slabs = sp.axis == 2 ? le1 : 1;
    const index_t N = sp.axis == 2 ? le2 : L;
    for (index_t slab = 0; slab < slabs; ++slab) {
      for (index_t s = 0; s < nb; ++s) brow[s] = planes[s].base + slab * planes[s].st1;
      for (index_t n0 = 0; n0 < N; n0 += kNR) {
        const index_t n1 = std::min(N, n0 + kNR);
        index_t nl = 0;
        for (index_t s = 0; s < nb; ++s) {
          bool any = !esop;
          for (index_t n = n0; n < n1 && !any; ++n) any = brow[s][n] != 0.0;
          if (any) list[nl++] = static_cast<std::int32_t>(s);
        }
        if (nl == 0) continue;
        // Pack the panel of pivot rows (contiguous, zero padded) for the row blocks.
        bpack.resize(static_cast<size_t>(nb * kNR));
        for (index_t i = 0; i < nl; ++i) {
          const std::int32_t sidx = list[i];
          double* dst = bpack.data() + static_cast<index_t>(sidx) * kNR;
          for (index_t n = 0; n < kNR; ++n) dst[n] = n0 + n < n1 ? brow[sidx][n0 + n] : 0.0;
          prow[sidx] = dst;
        }
        for (index_t mb = 0; mb < mblocks; ++mb) {
          const index_t rows = std::min(kMR, wext - mb * kMR);
          double* wr[kMR];
          for (index_t m = 0; m < rows; ++m)
            wr[m] = reinterpret_cast<double*>(sp.axis == 2 ? w_at(mb * kMR + m, slab, 0)
                                                           : w_at(mb * kMR + m, 0, 0));
          const double* ap = apack.data() + mb * nb * kMR;
          if (rows == kMR) {
            micro_kernel<kMR>(list.data(), nl, ap, prow.data(), 0, n1 - n0, wr, n0);
          } else {
            for (index_t m = 0; m < rows; ++m) {
              // one row: its column of A with stride 1
              a1.resize(static_cast<size_t>(nb));
              for (index_t s = 0; s < nb; ++s) a1[s] = ap[s * kMR + m];
              micro_kernel<1>(list.data(), nl, a1.data(), prow.data(), 0, n1 - n0, &wr[m], n0);
            }
          }
        }
      }
    }
  };

  // 3. Batches in streaming order.
  std::vector<PlaneRef<T>> planes;
  if (S > 0) post(0, slots[0]);
  for (index_t b0 = 0, bi = 0; b0 < S; b0 += B, ++bi) {
    const index_t nb = std::min(B, S - b0);
    Slot& cur = slots[bi % 2];
    if (b0 + B < S) post(b0 + B, slots[(bi + 1) % 2]);
    if (!cur.reqs.empty())
      CHECK_MPI(MPI_Waitall(static_cast<int>(cur.reqs.size()), cur.reqs.data(), MPI_STATUSES_IGNORE));
    planes.assign(static_cast<size_t>(nb), {});
    bool finite = true;
    for (index_t i = 0; i < nb; ++i) {
      const StepInfo& si = steps[b0 + i];
      const int root = plan.owner_along(sp.axis, si.t);
      std::uint64_t nnz_p = 0;
      if (line_size == 1 || root == line_rank) {
        planes[i] = local_plane(si.t);
        nnz_p = static_cast<std::uint64_t>(nnz_local[si.t - vlo]);
        finite = finite && finite_local[si.t - vlo];
      } else {
        T* row = cur.dense.data() + i * L;
        if (compressed(si.t))
          for (const auto& e : cur.sparse[i]) row[e.line] = e.v;
        planes[i] = PlaneRef<T>{row, le2, 1};
        nnz_p = plane_nnz(planes[i], finite);
      }
      // Counters of this step, from what travelled on the buses.
      if (!esop) nnz_p = static_cast<std::uint64_t>(L);
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
    if (L > 0 && wext > 0) {
      if constexpr (is_complex_v<T>) {
        exact_batch<T>(opt.mode, planes, cb.data() + b0 * wext, wext, le1, le2, w_at);
      } else {
        if (esop && !finite)
          exact_batch<T>(opt.mode, planes, cb.data() + b0 * wext, wext, le1, le2, w_at);
        else
          compute_real(b0, nb, planes);
      }
    }
    if (opt.on_progress) opt.on_progress(stage_index, static_cast<std::uint64_t>(b0 + nb),
                                         static_cast<std::uint64_t>(S));
  }
  (void)e1;
}

template void fused_stage(const Topology&, const EngineOptions&, int, const std::vector<double>&,
                          std::vector<double>&, std::vector<StepRecord>&, RunCounters&);
template void fused_stage(const Topology&, const EngineOptions&, int, const std::vector<cplx>&,
                          std::vector<cplx>&, std::vector<StepRecord>&, RunCounters&);

}  // namespace triada::detail
