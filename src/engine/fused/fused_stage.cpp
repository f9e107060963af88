// The fused executor: the output-stationary reading of a stage (paper Sec. 5, Eqs. 6).
// Per brick, the cells' W registers are accumulators and the time steps are the inner
// loop of a register-blocked kernel. Every W element receives exactly the reference's
// sequence of W = fma(y, c, W) in streaming order, so the bits are the same:
//  - zero operands are skipped where that is exact: fma(0, c, W) == W and fma(y, 0, W) == W
//    for finite y, c unless W is -0; W starts at +0 and a sum that starts at +0 reaches -0
//    only by an FMA underflowing (doc/design.md §3.4: a known limitation). A plane holding
//    Inf or NaN, and an affine last stage whose Y0 holds -0 or NaN, fall back to the exact
//    scalar rule (exact.cpp);
//  - counters are derived per step from the bus traffic: nnz(pivot plane) and nnz(row of C)
//    give macs, receives and waits exactly as the cell rule counts them (step_record);
//  - a stage that runs as one batch starts the kernels' accumulators at +0 (no zero fill of
//    W, every element written once) and counts the pivots while packing them;
//  - along axis 3 lines are rows of V (left_batch: scanned once, zero / sparse / dense);
//    along axes 1 and 2 pivot planes are packed in column panels (right_batch), on a
//    node-local line by each plane's owner into shared memory (transport.hpp).
#include <algorithm>
#include <utility>

#include "core/memory.hpp"
#include "engine/fused/exact.hpp"
#include "engine/fused/transport.hpp"
#include "kernels/left_batch.hpp"
#include "kernels/right_batch.hpp"
#include "mesh/cancel.hpp"

namespace triada::detail {

namespace fused {
namespace {

// A panel store whose packing (from a chunk's start to its publishing) is charged to the
// clock's pack, and its synchronisation (a free buffer, the others' rows) to wait.
class TimedPanels final : public kernels::PanelStore {
 public:
  TimedPanels(kernels::PanelStore& inner, StageClock& clock) : inner_(inner), clock_(clock) {}
  bool packs_ahead() const override { return inner_.packs_ahead(); }
  void begin_chunk(index_t q, index_t nbk, double*& panels, char*& flags) override {
    {
      const auto waiting = clock_.wait();
      inner_.begin_chunk(q, nbk, panels, flags);
    }
    t0_ = StageClock::clock::now();
  }
  void publish(index_t q) override {
    clock_.charge(TimePart::pack, t0_);
    inner_.publish(q);
  }
  void acquire(index_t q) override {
    const auto waiting = clock_.wait();
    inner_.acquire(q);
  }
  void locate(index_t q, const double** rows, const char** flags) const override {
    inner_.locate(q, rows, flags);
  }
  void end_chunk(index_t q) override { inner_.end_chunk(q); }

 private:
  kernels::PanelStore& inner_;
  StageClock& clock_;
  StageClock::clock::time_point t0_{};
};

// The binary64 kernels of one batch, with their scratch reused from batch to batch.
// counts[s] (ESOP): the pivot plane's non-zeros over the brick's lines, counted while
// packing; bad: an Inf or NaN pivot was seen (the caller then redoes the batch exactly).
struct BatchKernels {
  kernels::LeftScratch left;
  kernels::RightScratch right;

  // Along axis 3 (data on the left): a single batch (fresh) leaves its zero lines for the
  // next stage.
  void run_left(const StageView<double>& s, const PlaneSource<double>& src, index_t b0,
                const std::vector<PlaneRef<double>>& planes, bool fresh, std::vector<double>& w,
                std::vector<std::uint64_t>& counts, std::uint64_t& bad, ZeroLines& zero_lines) {
    std::uint8_t* zero_out = nullptr;
    if (s.esop && fresh) {  // the whole stage in this batch: its zero lines are final
      zero_lines.axis = 3;
      zero_lines.zero.assign(static_cast<size_t>(s.L), 0);
      zero_out = zero_lines.zero.data();
    }
    kernels::left_batch(planes, src.v_base(), s.vext, s.L, s.cb.data() + b0 * s.wext, s.wext,
                        w.data(), s.esop, fresh, counts, bad, left, zero_out, &cancel::requested);
  }

  // Along axes 1 and 2 (data on the right); `known`: zero lines the previous stage (along
  // axis 3) reported, for this brick's own planes (ESOP: a skipped row is exact; V here is
  // that stage's W brick).
  void run_right(const StageView<double>& s, PlaneSource<double>& src, index_t b0, index_t nb,
                 const std::vector<PlaneRef<double>>& planes, bool fresh, std::vector<double>& w,
                 std::vector<std::uint64_t>& counts, std::uint64_t& bad, const ZeroLines& known) {
    const index_t N = s.sp.axis == 2 ? s.le2 : s.L;
    std::unique_ptr<kernels::PanelStore> store = src.panels(b0, nb, N);
    std::vector<char> mine(static_cast<size_t>(nb), 1);
    if (store)  // shared packing: each member packs its own planes
      for (index_t i = 0; i < nb; ++i) mine[i] = s.owner(s.steps[b0 + i].t) == s.line_rank;
    kernels::KnownZero kz;
    if (s.esop && known.axis == 3 && static_cast<index_t>(known.zero.size()) == s.ev[0] * s.ev[1]) {
      kz.zero = known.zero.data();
      kz.ev1 = s.ev[1];
      kz.ev2 = s.ev[2];
      kz.plane.resize(static_cast<size_t>(nb));
      for (index_t i = 0; i < nb; ++i)
        kz.plane[i] = s.own(s.steps[b0 + i].t) ? s.steps[b0 + i].t - s.vlo : -1;
    }
    kernels::RightBatchArgs ra;
    ra.axis = s.sp.axis;
    ra.nb = nb;
    ra.N = N;
    ra.slabs = s.sp.axis == 2 ? s.le1 : 1;
    ra.wext = s.wext;
    ra.cbb = s.cb.data() + b0 * s.wext;
    ra.w = w.data();
    ra.w_row = s.sw[s.a];
    ra.w_slab = s.sp.axis == 2 ? s.sw[s.d1] : 0;
    ra.planes = &planes;
    ra.mine = &mine;
    ra.esop = s.esop;
    ra.fresh = fresh;
    if (!store) ra.stop = &cancel::requested;
    kernels::PrivatePanels own(nb, s.esop);
    TimedPanels timed(store ? *store : own, *s.clock);
    kernels::right_batch(ra, kz, timed, right, counts, bad);
  }
};

// One batch's W update: the kernels where they are exact, else (or after they met an Inf
// or NaN pivot) the exact path. Sets nnz where the kernels counted it.
template <class T>
void compute_batch(const StageView<T>& s, PlaneSource<T>& src, index_t b0, index_t nb,
                   std::vector<PlaneRef<T>>& planes, std::vector<std::uint64_t>& nnz, bool finite,
                   bool fresh, std::vector<T>& w, BatchKernels& kern, const ZeroLines& known,
                   ZeroLines& zero_lines) {
  if (s.L > 0 && s.wext > 0) {
    // The kernels compute binary64 FMAs; other cell modes, complex data and non-finite
    // pivots under ESOP take the element-by-element path of the cell rule.
    bool exact = !s.kernel_path || (s.esop && !finite);
    bool redo = fresh;  // W not started yet, or the kernels already updated it
    if constexpr (!is_complex_v<T>) {
      if (!exact) {
        redo = true;  // (then this is the stage's only batch: an in-place source)
        std::vector<std::uint64_t> counts(static_cast<size_t>(nb), 0);
        std::uint64_t bad = 0;
        if (s.sp.axis == 3)
          kern.run_left(s, src, b0, planes, fresh, w, counts, bad, zero_lines);
        else
          kern.run_right(s, src, b0, nb, planes, fresh, w, counts, bad, known);
        exact = src.after_kernels(b0, nb, counts, bad, planes, nnz);
      }
    }
    // A run being stopped redoes nothing (its W is no longer used).
    if (exact && !cancel::requested()) exact_batch(s, planes, b0, w, redo, &cancel::requested);
  } else if (src.counts_in_kernels() && s.esop) {
    // No W here to update, but the pivots still drive their lines: count them.
    for (index_t i = 0; i < nb; ++i) {
      bool fin = true;
      nnz[i] = plane_nnz(s, planes[i], fin);
    }
  }
}

// Batches in streaming order. A single batch (one rank per line, or planes read in place)
// lets the kernels write W from +0 without reading it; otherwise W is started (+0, or
// Y0 in the affine form's last stage) and accumulates. A run being stopped still moves
// every batch's planes but computes nothing (mesh/cancel.hpp).
template <class T>
void run_batches(const StageView<T>& s, PlaneSource<T>& src, std::vector<T>& w,
                 const ZeroLines& known, ZeroLines& zero_lines, std::vector<StepRecord>& records) {
  const index_t S = s.S(), B = src.batch_steps();
  const bool fresh = s.kernel_path && !s.w0 && B >= S && S > 0 && s.L > 0 && s.wext > 0;
  if (fresh)
    w.resize(static_cast<size_t>(s.wb.count()));  // every element is written below
  else
    start_w(s, w);
  BusiestLines busiest(s);
  BatchKernels kern;
  std::vector<PlaneRef<T>> planes;
  std::vector<std::uint64_t> nnz;
  if (S > 0) src.post(0);
  for (index_t b0 = 0; b0 < S; b0 += B) {
    const index_t nb = std::min(B, S - b0);
    if (b0 + B < S) src.post(b0 + B);
    planes.assign(static_cast<size_t>(nb), {});
    nnz.assign(static_cast<size_t>(nb), 0);
    bool finite = true;
    s.clock->start_batch(b0 / B, b0, nb);
    src.take(b0, nb, planes, nnz, finite);
    if (!src.skip(cancel::requested()))
      compute_batch(s, src, b0, nb, planes, nnz, finite, fresh, w, kern, known, zero_lines);
    for (index_t i = 0; i < nb; ++i) {
      const StepInfo& si = s.steps[b0 + i];
      const std::uint64_t nnz_p = s.esop ? nnz[i] : static_cast<std::uint64_t>(s.L);
      records.push_back(step_record(s.stage_index, si, nnz_p, s.L, s.esop, s.own(si.t),
                                    busiest(s, planes[i], nnz_p)));
    }
    s.clock->end_batch();
    if (s.opt.on_progress)
      s.opt.on_progress(s.stage_index, static_cast<std::uint64_t>(b0 + nb),
                        static_cast<std::uint64_t>(S));
  }
}

}  // namespace
}  // namespace fused

template <class T>
void fused_stage(const Topology& topo, const EngineOptions& opt, int stage_index, std::vector<T>& v,
                 std::vector<T>& w, std::vector<StepRecord>& records, RunCounters& rc,
                 ZeroLines& zero_lines, StageClock& clock, const StageStart<T>& start) {
  // The previous stage's knowledge is for this stage only; this one may leave its own.
  ZeroLines known;
  std::swap(known, zero_lines);
  fused::StageView<T> s = fused::read_stage<T>(topo, opt, stage_index, clock);
  s.y_traffic = &rc.mpi_stages[stage_index].y;
  s.w0 = start.w0;
  // A W that may start at -0 or NaN takes the cell rule's exact updates (agreed by every
  // rank, so the members of a line pick the same transport).
  if (start.exact) s.kernel_path = false;
  if (w.capacity() < static_cast<size_t>(s.wb.count()))
    reserve_huge(w, static_cast<size_t>(s.wb.count()));
  const std::unique_ptr<fused::PlaneSource<T>> src = fused::make_plane_source<T>(s, v);
  fused::run_batches(s, *src, w, known, zero_lines, records);
  const auto waiting = clock.wait();
  src->finish();
}

template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<double>&,
                          std::vector<double>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&,
                          StageClock&, const StageStart<double>&);
template void fused_stage(const Topology&, const EngineOptions&, int, std::vector<cplx>&,
                          std::vector<cplx>&, std::vector<StepRecord>&, RunCounters&, ZeroLines&,
                          StageClock&, const StageStart<cplx>&);

}  // namespace triada::detail
