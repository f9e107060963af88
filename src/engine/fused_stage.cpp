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
#include "core/memory.hpp"
#include "engine/stage_executors.hpp"
#include "kernels/left_batch.hpp"
#include "kernels/packing.hpp"
#include "kernels/right_batch.hpp"

namespace triada::detail {

namespace {

using kernels::kNR;
using kernels::PlaneRef;
using kernels::shared_pack_half;

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

// Shared packing: member r packs its planes' rows of a chunk into buffer (chunk % 2) of
// its window scratch, at scratch[r] + h * half (panels, then flags); the others read them.
class SharedPanels final : public kernels::PanelStore {
 public:
  SharedPanels(const Topology& topo, int axis, int line_rank, int line_size, index_t nb, index_t N,
               std::vector<int> owner)
      : nb_(nb), me_(line_rank), owner_(std::move(owner)) {
    for (int r = 0; r < line_size; ++r) {
      std::size_t bytes = 0;
      scratch_.push_back(topo.line_scratch(axis, r, bytes));
    }
    half_ = shared_pack_half(nb, N);
    panel_bytes_ = static_cast<std::size_t>((std::min(kernels::panel_chunk(nb), N) + kNR - 1) /
                                            kNR * nb * kNR) *
                   sizeof(double);
    win_ = topo.line_window_handle(axis);
  }
  void begin_chunk(index_t chunk_no, index_t, double*& panels, char*& flags) override {
    off_ = static_cast<std::size_t>(chunk_no % 2) * half_;
    panels = reinterpret_cast<double*>(scratch_[me_] + off_);
    flags = reinterpret_cast<char*>(scratch_[me_] + off_ + panel_bytes_);
  }
  // Every member's rows of this chunk are packed (and the buffer the next chunk
  // overwrites is no longer read by anyone).
  void publish() override { CHECK_MPI(MPI_Win_fence(0, win_)); }
  const double* row(index_t j, index_t s) const override {
    return reinterpret_cast<const double*>(scratch_[owner_[s]] + off_) + (j * nb_ + s) * kNR;
  }
  bool flag(index_t j, index_t s) const override {
    return reinterpret_cast<const char*>(scratch_[owner_[s]] + off_ + panel_bytes_)[j * nb_ + s] !=
           0;
  }
  // Nobody packs into the scratch again before every member has read its last chunk.
  void finish() { CHECK_MPI(MPI_Win_fence(0, win_)); }

 private:
  index_t nb_;
  int me_;
  std::vector<int> owner_;
  std::vector<std::byte*> scratch_;
  std::size_t half_ = 0, panel_bytes_ = 0, off_ = 0;
  MPI_Win win_ = MPI_WIN_NULL;
};

// Reference semantics, element by element (complex data, or a plane with Inf/NaN under
// ESOP): skip exactly what the cell rule skips.
template <class T>
void exact_batch(Mode mode, CellMode cell_mode, const std::vector<PlaneRef<T>>& planes, const T* cb,
                 index_t wext, index_t e1, index_t e2,
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

}  // namespace

template <class T>
void fused_stage(const Topology& topo, const EngineOptions& opt, int stage_index, std::vector<T>& v,
                 std::vector<T>& w, std::vector<StepRecord>& records, RunCounters& rc,
                 ZeroLines& zero_lines) {
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
      if (k > 0 &&
          (!folded_axis || plan.phys_of(sp.axis, wlo + k) != plan.phys_of(sp.axis, wlo + k - 1)))
        in_block = 0;
      in_block += updates ? 1 : 0;
      si.max_c = std::max(si.max_c, in_block);
    }
    steps.push_back(si);
  }
  const index_t S = static_cast<index_t>(steps.size());

  if (w.capacity() < static_cast<size_t>(wb.count()))
    reserve_huge(w, static_cast<size_t>(wb.count()));
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
        if (!esop || !is_zero(p.base[l1 * p.st1 + l2 * p.st2]))
          ++block_count[phys_line[l1 * le2 + l2]];
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
        for (index_t p = 0; p < vext; ++p)
          nnz_local[p] += count(v.data() + (b * vext + p) * len, len);
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
    CHECK_MPI(MPI_Allgatherv(nnz_local.data(), static_cast<int>(vext), MPI_INT64_T, nnz_all.data(),
                             counts.data(), displs.data(), MPI_INT64_T, line));
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
  const index_t budget =
      opt.plane_batch_bytes > 0
          ? static_cast<index_t>(opt.plane_batch_bytes)
          : std::max<index_t>(index_t{2} << 20, vb.count() * static_cast<index_t>(sizeof(T)) / 4);
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
    std::vector<T> dense;                            // B x L received planes
    std::vector<std::vector<PlaneEntry<T>>> sparse;  // per step of the batch
    std::vector<MPI_Request> reqs;
  };
  Slot slots[2];
  // The broadcasts the owners' planes stand for when the line shares memory.
  auto account_shared = [&](index_t b0) {
    for (index_t i = b0; i < std::min(S, b0 + B); ++i) {
      const index_t t = steps[i].t;
      if (plan.owner_along(sp.axis, t) != line_rank || (esop && nnz_all[t] == 0)) continue;
      const std::uint64_t bytes =
          compressed(t) ? static_cast<std::uint64_t>(nnz_all[t]) * sizeof(PlaneEntry<T>)
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
            for (index_t l2 = 0; l2 < le2; ++l2)
              row[l1 * le2 + l2] = p.base[l1 * p.st1 + l2 * p.st2];
        }
        buf = row;
        bytes = static_cast<int>(L * sizeof(T));
      }
      slot.reqs.emplace_back();
      CHECK_MPI(MPI_Ibcast(buf, bytes, MPI_BYTE, root, line, &slot.reqs.back()));
      if (mine)
        y_traffic.add(
            static_cast<std::uint64_t>(line_size - 1),
            static_cast<std::uint64_t>(line_size - 1) * static_cast<std::uint64_t>(bytes));
    }
  };

  // GEMM view of the stage (see file comment): rows m, columns n, inner index s.
  //  axis 3: rows = lines, columns = k:  A = pivot values, B = coefficients;
  //  axis 1: rows = k, columns = lines:  A = coefficients, B = pivot planes;
  //  axis 2: per i1, rows = k, columns = i3.
  kernels::LeftScratch left_scratch;
  kernels::RightScratch right_scratch;

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
      kernels::left_batch(planes, reinterpret_cast<const double*>(vbase), vext, L, cbb, wext,
                          reinterpret_cast<double*>(w.data()), esop, fresh, counts, bad,
                          left_scratch, zero_out);
      return;
    }
    std::vector<char> mine(static_cast<size_t>(nb), 1);
    if (shared_pack)
      for (index_t s = 0; s < nb; ++s)
        mine[s] = plan.owner_along(sp.axis, steps[b0 + s].t) == line_rank ? 1 : 0;
    // Zero lines the previous stage (along axis 3) reported, for this brick's own planes
    // (ESOP: a skipped row is exact; V here is that stage's W brick).
    kernels::KnownZero kz;
    if (esop && known.axis == 3 && static_cast<index_t>(known.zero.size()) == ev[0] * ev[1]) {
      kz.zero = known.zero.data();
      kz.ev1 = ev[1];
      kz.ev2 = ev[2];
      kz.plane.resize(static_cast<size_t>(nb));
      for (index_t s = 0; s < nb; ++s)
        kz.plane[s] = line_size == 1 || plan.owner_along(sp.axis, steps[b0 + s].t) == line_rank
                          ? steps[b0 + s].t - vlo
                          : -1;
    }
    kernels::RightBatchArgs ra;
    ra.axis = sp.axis;
    ra.nb = nb;
    ra.N = right_N;
    ra.slabs = sp.axis == 2 ? le1 : 1;
    ra.wext = wext;
    ra.cbb = cbb;
    ra.w = reinterpret_cast<double*>(w.data());
    ra.w_row = sw[a];
    ra.w_slab = sp.axis == 2 ? sw[d1] : 0;
    ra.planes = &planes;
    ra.mine = &mine;
    ra.esop = esop;
    ra.fresh = fresh;
    if (shared_pack) {
      std::vector<int> owner(static_cast<size_t>(nb));
      for (index_t s = 0; s < nb; ++s) owner[s] = plan.owner_along(sp.axis, steps[b0 + s].t);
      SharedPanels sh(topo, sp.axis, line_rank, line_size, nb, right_N, std::move(owner));
      kernels::right_batch(ra, kz, sh, right_scratch, counts, bad);
      sh.finish();
    } else {
      kernels::PrivatePanels pp(nb, esop);
      kernels::right_batch(ra, kz, pp, right_scratch, counts, bad);
    }
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
      CHECK_MPI(
          MPI_Waitall(static_cast<int>(cur.reqs.size()), cur.reqs.data(), MPI_STATUSES_IGNORE));
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
              for (index_t i = 0; i < nb; ++i)
                nnz[i] = static_cast<std::uint64_t>(nnz_all[steps[b0 + i].t]);
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
    if (opt.on_progress)
      opt.on_progress(stage_index, static_cast<std::uint64_t>(b0 + nb),
                      static_cast<std::uint64_t>(S));
  }
}

template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<double>&,
                          std::vector<double>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&);
template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<cplx>&,
                          std::vector<cplx>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&);

}  // namespace triada::detail
