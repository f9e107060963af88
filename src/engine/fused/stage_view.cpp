#include "engine/fused/stage_view.hpp"

#include <algorithm>

#include "actuator/actuator.hpp"
#include "mesh/shared_window.hpp"

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
  const bool folded_axis = s.plan.fold[s.a] > 1;
  s.cb.reserve(static_cast<size_t>(s.sp.n() * s.wext));
  std::vector<std::byte> msg;
  std::vector<char> present(static_cast<size_t>(s.wext));
  for (;;) {
    receive_x(s.topo, s.sp.axis, msg);
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
StageView<T> read_stage(const Topology& topo, const EngineOptions& opt, int stage_index) {
  StageView<T> s(topo, opt, stage_index);
  s.a = s.sp.axis - 1;
  const auto [d1, d2] = other_axes(s.sp.axis);
  s.d1 = d1;
  s.d2 = d2;
  s.esop = opt.mode == Mode::esop;
  s.kernel_path = !is_complex_v<T> && opt.cell_mode == CellMode::fp64;
  s.vb = topo.cells().intersect(whole(s.sp.in_shape));
  s.wb = topo.cells().intersect(whole(s.sp.out_shape));
  s.ev = s.vb.extents();
  const ext3 ew = s.wb.extents();
  s.sv = {s.ev[1] * s.ev[2], s.ev[2], 1};
  s.sw = {ew[1] * ew[2], ew[2], 1};
  // The brick's planes along the axis may hold V without W or W without V; its lines (the
  // two other axes) are the same for both (Brick::intersect keeps them even when the
  // brick holds no plane of V or W along the stage's axis).
  s.vlo = s.wlo = topo.cells().lo[s.a];
  s.vext = s.ev[s.a];
  s.wext = ew[s.a];
  s.le1 = s.ev[d1];
  s.le2 = s.ev[d2];
  s.L = s.le1 * s.le2;
  read_steps(s);
  s.line = topo.line(s.sp.axis);
  s.line_size = mpi::comm_size(s.line);
  s.line_rank = mpi::comm_rank(s.line);
  return s;
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
BusiestLines::BusiestLines(const StageView<T>& s) {
  const Plan& plan = s.plan;
  const int d1 = s.d1, d2 = s.d2;
  const Brick& cells = s.topo.cells();
  folded_ = plan.fold[d1] > 1 || plan.fold[d2] > 1;
  if (!folded_ || s.L == 0) return;
  phys_line_.resize(static_cast<size_t>(s.L));
  const index_t q1 = plan.phys_of(d1 + 1, cells.lo[d1]), q2 = plan.phys_of(d2 + 1, cells.lo[d2]);
  const index_t n2 = plan.phys_of(d2 + 1, cells.lo[d2] + s.le2 - 1) - q2 + 1;
  for (index_t l1 = 0; l1 < s.le1; ++l1)
    for (index_t l2 = 0; l2 < s.le2; ++l2)
      phys_line_[l1 * s.le2 + l2] = (plan.phys_of(d1 + 1, cells.lo[d1] + l1) - q1) * n2 +
                                    (plan.phys_of(d2 + 1, cells.lo[d2] + l2) - q2);
  block_count_.resize(static_cast<size_t>(phys_line_.back() + 1));
}

template <class T>
std::uint64_t BusiestLines::operator()(const StageView<T>& s, const PlaneRef<T>& p,
                                       std::uint64_t nnz_p) {
  if (!folded_ || s.L == 0) return nnz_p > 0 ? 1 : 0;
  std::fill(block_count_.begin(), block_count_.end(), 0);
  for (index_t l1 = 0; l1 < s.le1; ++l1)
    for (index_t l2 = 0; l2 < s.le2; ++l2)
      if (!s.esop || !is_zero(p.at(l1, l2))) ++block_count_[phys_line_[l1 * s.le2 + l2]];
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

#define TRIADA_FUSED_VIEW(T)                                                               \
  template StageView<T> read_stage(const Topology&, const EngineOptions&, int);            \
  template std::uint64_t plane_nnz(const StageView<T>&, const PlaneRef<T>&, bool&);        \
  template BusiestLines::BusiestLines(const StageView<T>&);                                \
  template std::uint64_t BusiestLines::operator()(const StageView<T>&, const PlaneRef<T>&, \
                                                  std::uint64_t);
TRIADA_FUSED_VIEW(double)
TRIADA_FUSED_VIEW(cplx)
#undef TRIADA_FUSED_VIEW

}  // namespace triada::detail::fused
