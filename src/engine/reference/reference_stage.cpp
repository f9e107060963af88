// The reference executor: a stage on one brick run cell by cell, step by step, with the
// cell rule's pivot_output and cell_update (the readable spec, doc/design.md §10.4). The
// fused executor (engine/fused/) must give the same bits and counters.
#include <algorithm>
#include <cstring>
#include <optional>

#include "actuator/actuator.hpp"
#include "core/error.hpp"
#include "engine/stage_executors.hpp"
#include "geometry/brick_stage.hpp"
#include "mesh/cancel.hpp"

namespace triada::detail {

namespace {

template <class T>
struct PivotEntry {
  std::int64_t line;
  T v;
};

// The brick's cells during a stage of the reference executor: planes along the axis by
// lines, over the union box (a cell holds V or W only where the tensor has that element).
// W starts at +0, or at Y0 (w0, over the W box) loaded in the cell mode's register format.
template <class T>
class CellGrid {
 public:
  CellGrid(const BrickStage& bs, const std::vector<T>& v_in, const std::vector<T>* w0,
           CellMode mode)
      : bs_(bs) {
    if (w0 && static_cast<index_t>(w0->size()) != bs.out_box.count())
      throw internal_error("initial output brick has the wrong size");
    const Brick& u = bs.union_box;
    cells_.resize(static_cast<size_t>(u.count()));
    for (index_t i = u.lo[0]; i < u.hi[0]; ++i)
      for (index_t j = u.lo[1]; j < u.hi[1]; ++j)
        for (index_t l = u.lo[2]; l < u.hi[2]; ++l) {
          Cell<T>& c = cells_[u.local_offset(i, j, l)];
          const ext3 g{i, j, l};
          c.has_v = g[bs.a] < bs.n;
          c.has_w = g[bs.a] < bs.k;
          if (c.has_v) c.v = v_in[bs.in_box.local_offset(i, j, l)];
          if (c.has_w && w0) c.w = seed_register(mode, (*w0)[bs.out_box.local_offset(i, j, l)]);
        }
  }
  index_t planes() const { return bs_.union_box.extent(bs_.a); }
  Cell<T>& at(index_t plane, index_t line) {
    const Brick& u = bs_.union_box;
    const auto [d1, d2] = bs_.line_axes;
    ext3 g;
    g[bs_.a] = u.lo[bs_.a] + plane;
    g[d1] = u.lo[d1] + line / bs_.line_extent[1];
    g[d2] = u.lo[d2] + line % bs_.line_extent[1];
    return cells_[u.local_offset(g[0], g[1], g[2])];
  }
  // The stage's result, which becomes the next stage's stationary input.
  void store_w(std::vector<T>& w) const {
    const Brick& wb = bs_.out_box;
    const Brick& u = bs_.union_box;
    w.assign(static_cast<size_t>(wb.count()), T{});
    for (index_t i = wb.lo[0]; i < wb.hi[0]; ++i)
      for (index_t j = wb.lo[1]; j < wb.hi[1]; ++j)
        for (index_t l = wb.lo[2]; l < wb.hi[2]; ++l)
          w[wb.local_offset(i, j, l)] = cells_[u.local_offset(i, j, l)].w;
  }

 private:
  const BrickStage& bs_;
  std::vector<Cell<T>> cells_;
};

// Y-bus: the pivot plane's owner (root) broadcasts what its cells put on the lines to the
// other bricks along the lines: the count, then dense values (positions need not travel)
// or ESOP's (line, value) pairs. On return every member holds the root's `sent`.
template <class T>
void broadcast_pivots(const Topology& topo, const BrickStage& bs, bool dense, int root,
                      std::vector<PivotEntry<T>>& sent, MpiTraffic& y_traffic) {
  if (bs.line_size == 1) return;
  const MPI_Comm line = topo.line(bs.axis);
  std::int64_t count = static_cast<std::int64_t>(sent.size());
  mpi::bcast(line, std::span<std::int64_t>(&count, 1), root);
  sent.resize(static_cast<size_t>(count));
  if (dense) {
    std::vector<T> values(sent.size());
    if (bs.line_rank == root)
      for (size_t i = 0; i < sent.size(); ++i) values[i] = sent[i].v;
    if (count > 0) mpi::bcast_bytes(line, std::span<T>(values), root);
    for (size_t i = 0; i < sent.size(); ++i) sent[i] = {static_cast<std::int64_t>(i), values[i]};
  } else if (count > 0) {
    mpi::bcast_bytes(line, std::span<PivotEntry<T>>(sent), root);
  }
  if (bs.line_rank == root) {
    const std::uint64_t payload = dense ? count * sizeof(T) : count * sizeof(PivotEntry<T>);
    y_traffic.add(static_cast<std::uint64_t>(bs.line_size - 1),
                  (sizeof count + payload) * static_cast<std::uint64_t>(bs.line_size - 1));
  }
}

// Every cell applies the rule to what reached it; counts the step into `rec` (macs on
// each physical cell give the busiest one, folding).
template <class T>
void update_cells(const BrickStage& bs, const EngineOptions& opt, CellGrid<T>& grid,
                  const std::vector<std::optional<XElement<T>>>& x,
                  const std::vector<std::optional<T>>& y, std::vector<std::uint64_t>& phys_macs,
                  StepRecord& rec) {
  const auto multiply_add = [&](const T& w0, const T& y0, const T& c0) {
    return mac(opt.cell_mode, w0, y0, c0);
  };
  std::fill(phys_macs.begin(), phys_macs.end(), 0);
  auto count_mac = [&](index_t p, index_t ln) {
    ++rec[Counter::macs];
    ++phys_macs[static_cast<size_t>(bs.plane_cell(p) * bs.n_phys_lines + bs.line_cell(ln))];
  };
  for (index_t p = 0; p < grid.planes(); ++p) {
    const XElement<T>* xp = x[static_cast<size_t>(p)] ? &*x[static_cast<size_t>(p)] : nullptr;
    for (index_t ln = 0; ln < bs.n_lines; ++ln) {
      const T* yp = y[static_cast<size_t>(ln)] ? &*y[static_cast<size_t>(ln)] : nullptr;
      switch (cell_update(grid.at(p, ln), xp, yp, opt.mode, multiply_add)) {
        case Outcome::none:
          break;
        case Outcome::wait:
          ++rec[Counter::waits];
          break;
        case Outcome::update_own:
          count_mac(p, ln);
          break;
        case Outcome::update_received:
          count_mac(p, ln);
          ++rec[Counter::y_bus_receives];
          break;
      }
    }
  }
  for (std::uint64_t m : phys_macs) rec.busiest = std::max(rec.busiest, m);
}

}  // namespace

// One stage on one brick, cell by cell.
template <class T>
void reference_stage(const Topology& topo, const EngineOptions& opt, int stage_index,
                     const std::vector<T>& v_in, std::vector<T>& w,
                     std::vector<StepRecord>& records, RunCounters& rc, StageClock& clock,
                     const StageStart<T>& start) {
  const BrickStage bs = brick_stage<T>(topo, opt, stage_index);
  CellGrid<T> grid(bs, v_in, start.w0, opt.cell_mode);
  const index_t planes = grid.planes();
  MpiTraffic& y_traffic = rc.mpi_stages[stage_index].y;
  std::vector<std::uint64_t> phys_macs(static_cast<size_t>(bs.n_phys_planes * bs.n_phys_lines));
  std::vector<std::optional<XElement<T>>> x(static_cast<size_t>(planes));
  std::vector<std::optional<T>> y(static_cast<size_t>(bs.n_lines));
  const index_t plane0 = bs.union_box.lo[bs.a];
  XStream<T> stream(topo, bs.axis, clock);
  for (;;) {
    const std::byte* msg = stream.next();
    // X-bus: coefficient elements arrive on the planes of this brick.
    std::fill(x.begin(), x.end(), std::nullopt);
    const XHeader h = read_message<T>(msg, [&](const XEntry<T>& xe) {
      if (xe.k >= plane0 && xe.k < plane0 + planes)
        x[static_cast<size_t>(xe.k - plane0)] = XElement<T>{xe.c, xe.tag != 0};
    });
    if (h.pivot == kEndOfStage) break;
    const auto step = static_cast<index_t>(records.size());
    clock.start_batch(step, step, 1);  // a batch of one step
    StepRecord rec;
    rec.stage = stage_index;
    rec.pivot = h.pivot;
    // Y-bus: the green (pivot) cells drive their lines.
    const int root = bs.plane_owner[static_cast<size_t>(h.pivot)];
    std::vector<PivotEntry<T>> sent;
    if (bs.line_rank == root) {
      const index_t plane = h.pivot - plane0;
      const auto& xo = x[static_cast<size_t>(plane)];
      const XElement<T>* xp = xo ? &*xo : nullptr;
      for (index_t ln = 0; ln < bs.n_lines; ++ln)
        if (auto out = pivot_output(grid.at(plane, ln), xp, opt.mode)) sent.push_back({ln, *out});
      rec[Counter::y_bus_sends] = sent.size();
    }
    {
      const auto waiting = clock.wait();
      broadcast_pivots(topo, bs, opt.mode == Mode::dense, root, sent, y_traffic);
    }
    std::fill(y.begin(), y.end(), std::nullopt);
    for (const auto& s : sent) y[static_cast<size_t>(s.line)] = s.v;
    // A run being stopped still moves the pivots but updates no cell (mesh/cancel.hpp).
    if (!cancel::requested()) update_cells(bs, opt, grid, x, y, phys_macs, rec);
    records.push_back(rec);
    clock.end_batch();
    if (opt.on_progress)
      opt.on_progress(stage_index, records.size(), static_cast<std::uint64_t>(bs.n));
  }
  grid.store_w(w);
}

template void reference_stage(const Topology&, const EngineOptions&, int,
                              const std::vector<double>&, std::vector<double>&,
                              std::vector<StepRecord>&, RunCounters&, StageClock&,
                              const StageStart<double>&);
template void reference_stage(const Topology&, const EngineOptions&, int, const std::vector<cplx>&,
                              std::vector<cplx>&, std::vector<StepRecord>&, RunCounters&,
                              StageClock&, const StageStart<cplx>&);

}  // namespace triada::detail
