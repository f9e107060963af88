#include "engine/fused/stage_view.hpp"

#include <algorithm>

#include "actuator/actuator.hpp"
#include "core/error.hpp"

namespace triada::detail::fused {

namespace {

template <class T>
bool finite_value(const T& v) {
  if constexpr (is_complex_v<T>)
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  else
    return std::isfinite(v);
}

// The actuator's stream for this stage: one message per step taken, until its end.
template <class T>
void read_steps(StageView<T>& s) {
  const bool folded_axis = s.bs.axis_folded;
  s.cb.reserve(static_cast<size_t>(s.sp.n() * s.wext));
  XStream<T> stream(s.topo, s.sp.axis, *s.clock);
  std::vector<char> present(static_cast<size_t>(s.wext));
  for (;;) {
    const std::byte* msg = stream.next();
    const size_t row = s.cb.size();
    s.cb.resize(row + static_cast<size_t>(s.wext), T{});
    std::fill(present.begin(), present.end(), 0);
    const XHeader h = read_message<T>(msg, [&](const XEntry<T>& xe) {
      if (xe.k < s.wlo || xe.k >= s.wlo + s.wext) return;
      s.cb[row + static_cast<size_t>(xe.k - s.wlo)] = xe.c;
      present[static_cast<size_t>(xe.k - s.wlo)] = 1;
    });
    if (h.pivot == kEndOfStage) {
      s.cb.resize(row);
      break;
    }
    StepInfo si;
    si.t = h.pivot;
    std::uint64_t in_block = 0;
    for (index_t k = 0; k < s.wext; ++k) {
      const T c = s.cb[row + static_cast<size_t>(k)];
      const bool updates = present[k] && (!s.esop || !is_zero(c));
      si.nnz_c += updates ? 1 : 0;
      if (s.wlo + k == si.t && updates) si.diag = 1;
      // Planes of one physical cell are consecutive (folding, Plan::phys_block); unfolded,
      // every plane is its own cell.
      if (k > 0 && (!folded_axis || s.plan.phys_of(s.sp.axis, s.wlo + k) !=
                                        s.plan.phys_of(s.sp.axis, s.wlo + k - 1)))
        in_block = 0;
      in_block += updates ? 1 : 0;
      si.max_c = std::max(si.max_c, in_block);
    }
    s.steps.push_back(si);
  }
}

}  // namespace

template <class T>
StageView<T> read_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                        StageClock& clock) {
  StageView<T> s(topo, opt, stage_index);
  s.clock = &clock;
  s.bs = make_brick_stage(s.plan, stage_index, topo.coords(), sizeof(T), opt.plane_batch_bytes);
  const BrickStage& bs = s.bs;
  s.a = bs.a;
  s.d1 = bs.line_axes[0];
  s.d2 = bs.line_axes[1];
  s.esop = opt.mode == Mode::esop;
  s.kernel_path = !is_complex_v<T> && opt.cell_mode == CellMode::fp64;
  s.vb = bs.in_box;
  s.wb = bs.out_box;
  s.ev = s.vb.extents();
  const ext3 ew = s.wb.extents();
  s.sv = {s.ev[1] * s.ev[2], s.ev[2], 1};
  s.sw = {ew[1] * ew[2], ew[2], 1};
  // The brick's planes along the axis may hold V without W or W without V; its lines (the
  // two other axes) are the same for both.
  s.vlo = s.wlo = bs.plane_lo;
  s.vext = bs.in_planes;
  s.wext = bs.out_planes;
  s.le1 = bs.line_extent[0];
  s.le2 = bs.line_extent[1];
  s.L = bs.n_lines;
  read_steps(s);
  s.line = topo.line(s.sp.axis);
  s.line_size = bs.line_size;
  s.line_rank = bs.line_rank;  // the line communicator's rank is the grid coordinate
  return s;
}

template <class T>
void start_w(const StageView<T>& s, std::vector<T>& w) {
  if (!s.w0) {
    w.assign(static_cast<size_t>(s.wb.count()), T{});
    return;
  }
  if (static_cast<index_t>(s.w0->size()) != s.wb.count())
    throw internal_error("initial output brick has the wrong size");
  w.assign(s.w0->begin(), s.w0->end());
  if (s.opt.cell_mode != CellMode::fp64)
    for (T& x : w) x = seed_register(s.opt.cell_mode, x);
}

template <class T>
std::uint64_t plane_nnz(const StageView<T>& s, const PlaneRef<T>& p, bool& finite) {
  std::uint64_t n = 0;
  for (index_t l1 = 0; l1 < s.le1; ++l1)
    for (index_t l2 = 0; l2 < s.le2; ++l2) {
      const T y = p.at(l1, l2);
      n += is_zero(y) ? 0 : 1;
      finite = finite && finite_value(y);
    }
  return n;
}

template <class T>
BusiestLines::BusiestLines(const StageView<T>& s)
    : folded_(s.bs.lines_folded),
      block_count_(folded_ ? static_cast<size_t>(s.bs.n_phys_lines) : 0) {}

template <class T>
std::uint64_t BusiestLines::operator()(const StageView<T>& s, const PlaneRef<T>& p,
                                       std::uint64_t nnz_p) {
  if (!folded_ || s.L == 0) return nnz_p > 0 ? 1 : 0;
  std::fill(block_count_.begin(), block_count_.end(), 0);
  for (index_t l1 = 0; l1 < s.le1; ++l1)
    for (index_t l2 = 0; l2 < s.le2; ++l2)
      if (!s.esop || !is_zero(p.at(l1, l2))) ++block_count_[s.bs.line_cell(l1 * s.le2 + l2)];
  return *std::max_element(block_count_.begin(), block_count_.end());
}

StepRecord step_record(int stage_index, const StepInfo& si, std::uint64_t nnz_p, index_t L,
                       bool esop, bool sends, std::uint64_t busiest_lines) {
  StepRecord rec;
  rec.stage = stage_index;
  rec.pivot = si.t;
  const std::uint64_t others = si.nnz_c - si.diag;
  rec[Counter::macs] = nnz_p * si.nnz_c;
  rec[Counter::y_bus_receives] = nnz_p * others;
  rec[Counter::waits] = esop ? (static_cast<std::uint64_t>(L) - nnz_p) * others : 0;
  if (sends) rec[Counter::y_bus_sends] = nnz_p;
  rec.busiest = si.max_c * busiest_lines;
  return rec;
}

#define TRIADA_FUSED_VIEW(T)                                                                 \
  template StageView<T> read_stage(const Topology&, const EngineOptions&, int, StageClock&); \
  template std::uint64_t plane_nnz(const StageView<T>&, const PlaneRef<T>&, bool&);          \
  template void start_w(const StageView<T>&, std::vector<T>&);                               \
  template BusiestLines::BusiestLines(const StageView<T>&);                                  \
  template std::uint64_t BusiestLines::operator()(const StageView<T>&, const PlaneRef<T>&,   \
                                                  std::uint64_t);
TRIADA_FUSED_VIEW(double)
TRIADA_FUSED_VIEW(cplx)
#undef TRIADA_FUSED_VIEW

}  // namespace triada::detail::fused
