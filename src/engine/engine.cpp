#include "engine/engine.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <span>

#include "actuator/actuator.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "engine/stage_executors.hpp"
#include "geometry/brick_stage.hpp"
#include "mesh/cancel.hpp"

namespace triada {

namespace {
constexpr int kTagX = 100;      // + axis: actuator -> brick messages of that stage
constexpr int kTagToken = 200;  // control passes from actuator to actuator
// A physical message of the actuator's stream ends with the step message that brings it to
// this size: bounded for MPI's int counts, large enough that a stage needs a few sends
// per brick.
constexpr std::size_t kStreamPieceBytes = std::size_t{64} << 20;
}  // namespace

namespace detail {

// Brick side: receives one message of the stage's actuator into `buf` (its storage reused).
template <class T>
XStream<T>::XStream(const Topology& topo, int axis, StageClock& clock) {
  const auto waiting = clock.wait();
  const int from = topo.plan().ranks.actuator_rank[axis - 1];
  std::vector<std::byte> piece;
  for (bool end = false; !end;) {
    mpi::recv_bytes(topo.world(), from, kTagX + axis, piece);
    // The piece's messages, checked; the last one of the stream ends the stage.
    for (std::size_t pos = 0; pos < piece.size();) {
      const std::size_t bytes = message_bytes<T>(piece.data() + pos, piece.size() - pos);
      if (bytes == 0 || end) throw internal_error("malformed actuator stream");
      XHeader h;
      std::memcpy(&h, piece.data() + pos, sizeof h);
      end = h.pivot == kEndOfStage;
      pos += bytes;
    }
    buf_.insert(buf_.end(), piece.begin(), piece.end());
  }
}

template <class T>
const std::byte* XStream<T>::next() {
  const std::byte* msg = buf_.data() + pos_;
  pos_ += message_bytes<T>(msg, buf_.size() - pos_);  // checked on arrival
  return msg;
}
template class XStream<double>;
template class XStream<cplx>;

// The other two axes (0-based) of a stage along `axis`, in increasing order.
std::array<int, 2> other_axes(int axis) {
  const int a = axis - 1;
  return {a == 0 ? 1 : 0, a == 2 ? 1 : 2};
}

}  // namespace detail

namespace {

// Posts every message of one stage's stream (non-blocking). Runs on the rank hosting the
// stage's actuator, whether that is a dedicated actuator rank or a brick rank.
template <class T>
struct StreamState {
  std::vector<std::byte> arena;  // every message of the stage, back to back
  // After the arena (a pending send never outlives it): the sends to the other ranks, and
  // to this rank's own brick (completed only by its own receive, in its stage).
  mpi::Requests requests, to_self;
  std::vector<StepRecord> records;  // x_bus_sends of each emitted step
  BitRows coeffs;                   // --activity: the non-zero coefficients (K x N)
};

// Column k, bit t: C[t, k] != 0 as the actuator streams it.
template <class T>
BitRows coefficient_bits(const Actuator<T>& act, const StagePlan& sp) {
  BitRows b(sp.k(), sp.n());
  for (index_t k = 0; k < sp.k(); ++k)
    for (index_t t = 0; t < sp.n(); ++t)
      if (act.nonzero(t, k)) b.set(k, t);
  return b;
}

// One group's stream (stream_groups): its step messages for the planes `rg` along `axis`
// and the end of the stage, built into the arena, then every piece sent to every brick of
// the group (a send to this rank itself kept apart: its own receive completes it).
template <class T>
void post_group(const Topology& topo, const Actuator<T>& act, int axis, Range rg,
                const std::vector<int>& bricks, StreamState<T>& st, MpiTraffic& traffic) {
  const std::size_t most =  // bytes of one of the group's messages at most
      sizeof(XHeader) +
      static_cast<std::size_t>(std::max<index_t>(0, rg.hi - rg.lo)) * sizeof(XEntry<T>);
  std::vector<std::pair<std::size_t, std::size_t>> pieces;  // [begin, end) in the arena
  std::size_t piece = st.arena.size();
  auto build = [&](auto&& write) {
    if (st.arena.size() + most > st.arena.capacity())  // before: the arena must never move
      throw internal_error("actuator arena too small");
    const std::size_t off = st.arena.size();
    write();
    traffic.add(bricks.size(), bricks.size() * (st.arena.size() - off));
    if (st.arena.size() - piece >= kStreamPieceBytes) {
      pieces.emplace_back(piece, st.arena.size());
      piece = st.arena.size();
    }
  };
  for (const StepRecord& rec : st.records)
    build([&] { act.build_message(rec.pivot, rg.lo, rg.hi, st.arena); });
  build([&] { Actuator<T>::build_end_message(st.arena); });
  if (piece < st.arena.size()) pieces.emplace_back(piece, st.arena.size());
  for (int dest : bricks)
    for (const auto& [b, e] : pieces)
      (dest == topo.world_rank() ? st.to_self : st.requests)
          .add(mpi::isend_bytes(topo.world(), st.arena.data() + b, e - b, dest, kTagX + axis));
}

// The bricks that take the same stream: those with the same cells along the stage's axis
// (the same grid coordinate on it), in brick rank order.
std::vector<std::vector<int>> stream_groups(const Plan& plan, int axis) {
  std::vector<std::vector<int>> groups(static_cast<size_t>(plan.ranks.grid[axis - 1]));
  for (int r = 0; r < plan.ranks.n_bricks; ++r)
    groups[static_cast<size_t>(plan.brick_coords(r)[axis - 1])].push_back(r);
  return groups;
}

template <class T>
void post_stream(const Topology& topo, const EngineOptions& opt, int stage_index,
                 StreamState<T>& st, RunCounters& rc) {
  const Plan& plan = topo.plan();
  const StagePlan& sp = plan.stages[stage_index];
  const CoeffMatrix c = opt.coefficients(sp.axis);
  const Actuator<T> act(sp, c, opt.mode, opt.shuffle_seed);
  if (opt.activity) st.coeffs = coefficient_bits(act, sp);
  MpiTraffic& traffic = rc.mpi_stages[stage_index].x;
  for (index_t t : act.row_order()) {
    if (!act.emits(t)) continue;  // ESOP: an all-zero row costs no step
    StepRecord rec;
    rec.stage = stage_index;
    rec.pivot = t;
    rec[Counter::x_bus_sends] = act.x_bus_sends(t);
    st.records.push_back(rec);
  }
  // Bricks with the same planes along the axis take the same messages: each group's are
  // built once (back to back, a step message after another) and sent to every brick of the
  // group, in pieces of about kStreamPieceBytes cut after the message that reaches it: a
  // few sends per brick and stage. The MPI figures count one message per step and brick,
  // as the X-bus carries them.
  const std::vector<std::vector<int>> groups = stream_groups(plan, sp.axis);
  std::size_t per_step = 0;  // bytes of a step's messages at most, over the groups
  for (size_t g = 0; g < groups.size(); ++g) {
    const Range rg = plan.cell_range(sp.axis, static_cast<int>(g));
    per_step += sizeof(XHeader) +
                static_cast<std::size_t>(std::max<index_t>(0, rg.hi - rg.lo)) * sizeof(XEntry<T>);
  }
  // One allocation for the stage: the arena never grows past it (checked before each
  // message is built), so the pointers handed to MPI_Isend stay valid.
  st.arena.clear();
  st.arena.reserve(per_step * (st.records.size() + 1));
  const std::byte* base = st.arena.data();
  for (size_t g = 0; g < groups.size(); ++g)
    post_group(topo, act, sp.axis, plan.cell_range(sp.axis, static_cast<int>(g)), groups[g], st,
               traffic);
  if (st.arena.data() != base) throw internal_error("actuator arena moved under MPI_Isend");
}

// Control passes from the actuator of stage s to that of stage s + 1 (doc/design.md §2).
void receive_control(const Topology& topo, int stage_index) {
  if (stage_index == 0) return;
  const int from = topo.plan().ranks.actuator_rank[topo.plan().stages[stage_index - 1].axis - 1];
  mpi::recv<int>(topo.world(), from, kTagToken);
}
void pass_control(const Topology& topo, int stage_index, mpi::Requests& reqs, RunCounters& rc) {
  const auto& stages = topo.plan().stages;
  if (stage_index + 1 >= static_cast<int>(stages.size())) return;
  const int to = topo.plan().ranks.actuator_rank[stages[stage_index + 1].axis - 1];
  static const int token = 1;
  reqs.add(mpi::isend(topo.world(), token, to, kTagToken));
  rc.mpi_control.add(1, sizeof token);
}

// Sums the per-step records of all ranks into one sequence on every rank.
void reduce_records(const Topology& topo, const std::vector<std::vector<StepRecord>>& per_stage,
                    RunCounters& rc) {
  const Plan& plan = topo.plan();
  const int ns = static_cast<int>(plan.stages.size());
  std::vector<std::int64_t> counts(static_cast<size_t>(ns)), global(static_cast<size_t>(ns));
  for (int s = 0; s < ns; ++s) counts[s] = static_cast<std::int64_t>(per_stage[s].size());
  mpi::allreduce(topo.world(), counts, global, mpi::Op::max);
  std::int64_t total = 0;
  for (auto g : global) total += g;
  const int width = kCounters + 1;  // counters + pivot
  std::vector<std::uint64_t> flat(static_cast<size_t>(total * width), 0), sum(flat.size(), 0);
  std::vector<std::int64_t> pivots(static_cast<size_t>(total), -1), pmax(pivots.size(), -1);
  std::vector<std::uint64_t> busy(static_cast<size_t>(total), 0), bmax(busy.size(), 0);
  std::int64_t off = 0;
  for (int s = 0; s < ns; ++s) {
    for (size_t i = 0; i < per_stage[s].size(); ++i) {
      const StepRecord& r = per_stage[s][i];
      for (int c = 0; c < kCounters; ++c) flat[(off + i) * width + c] = r.n[c];
      pivots[off + i] = r.pivot;
      busy[off + i] = r.busiest;
    }
    off += global[s];
  }
  if (total > 0) {
    mpi::allreduce(topo.world(), flat, sum, mpi::Op::sum);
    mpi::allreduce(topo.world(), pivots, pmax, mpi::Op::max);
    mpi::allreduce(topo.world(), busy, bmax, mpi::Op::max);
  }
  rc.steps.clear();
  rc.stages.assign(static_cast<size_t>(ns), StageTotals{});
  off = 0;
  for (int s = 0; s < ns; ++s) {
    rc.stages[s].axis = plan.stages[s].axis;
    rc.stages[s].steps = static_cast<std::uint64_t>(global[s]);
    for (std::int64_t i = 0; i < global[s]; ++i) {
      StepRecord r;
      r.stage = s;
      r.pivot = pmax[off + i];
      r.busiest = bmax[off + i];
      rc.stages[s].cycles += r.cycles() * static_cast<std::uint64_t>(rc.substeps);
      for (int c = 0; c < kCounters; ++c) {
        r.n[c] = sum[(off + i) * width + c];
        rc.stages[s].n[c] += r.n[c];
      }
      rc.steps.push_back(r);
    }
    off += global[s];
  }
  // MPI traffic: sum over ranks.
  rc.mpi_stages.resize(static_cast<size_t>(ns));
  std::vector<std::uint64_t> t, ts(static_cast<size_t>(4 * ns + 2));
  for (const auto& m : rc.mpi_stages)
    t.insert(t.end(), {m.x.messages, m.x.bytes, m.y.messages, m.y.bytes});
  t.insert(t.end(), {rc.mpi_control.messages, rc.mpi_control.bytes});
  mpi::allreduce(topo.world(), t, ts, mpi::Op::sum);
  for (int s = 0; s < ns; ++s)
    rc.mpi_stages[s] = {{ts[4 * s], ts[4 * s + 1]}, {ts[4 * s + 2], ts[4 * s + 3]}};
  rc.mpi_control = {ts[4 * ns], ts[4 * ns + 1]};
}

// Every rank's pieces of every stage on world rank 0 (9 numbers a piece), each rank's idle
// piece added: a rank's pieces of a stage then sum to the stage's time.
void gather_pieces(const Topology& topo, const std::vector<BatchTime>& pieces, RunCounters& rc) {
  std::vector<double> mine;
  for (const BatchTime& b : pieces)
    mine.insert(mine.end(), {double(b.stage), double(b.rank), double(static_cast<int>(b.piece)),
                             double(b.batch), double(b.first_step), double(b.steps), b.split.s[0],
                             b.split.s[1], b.split.s[2]});
  const int n = static_cast<int>(mine.size());
  const std::vector<int> counts = mpi::gather<int>(topo.world(), std::span<const int>(&n, 1), 0);
  const std::vector<double> all = mpi::gatherv<double>(topo.world(), mine, counts, 0);
  if (topo.world_rank() != 0) return;
  const auto world = static_cast<size_t>(topo.plan().ranks.world_size);
  std::vector<std::vector<double>> busy(rc.stage_seconds.size(), std::vector<double>(world, 0.0));
  for (size_t i = 0; i + 9 <= all.size(); i += 9) {
    BatchTime b;
    b.stage = static_cast<int>(all[i]);
    b.rank = static_cast<int>(all[i + 1]);
    b.piece = static_cast<TracePiece>(static_cast<int>(all[i + 2]));
    b.batch = static_cast<index_t>(all[i + 3]);
    b.first_step = static_cast<index_t>(all[i + 4]);
    b.steps = static_cast<index_t>(all[i + 5]);
    for (int p = 0; p < 3; ++p) b.split.s[p] = all[i + 6 + p];
    busy[b.stage][b.rank] += b.split.sum();
    rc.batch_times.push_back(b);
  }
  for (size_t s = 0; s < busy.size(); ++s)
    for (size_t r = 0; r < busy[s].size(); ++r) {
      BatchTime idle;
      idle.stage = static_cast<int>(s);
      idle.rank = static_cast<int>(r);
      idle.piece = TracePiece::idle;
      // (a rounding below zero on the slowest rank is no time)
      idle.split[TimePart::idle] = std::max(0.0, rc.stage_seconds[s] - busy[s][r]);
      rc.batch_times.push_back(idle);
    }
}

// The stages' times (the longest interval of any rank) and, over the brick ranks, the
// minimum, mean and maximum of each part of their split (counters/time_split.hpp).
void reduce_times(const Topology& topo, const std::vector<TimeSplit>& splits,
                  const std::vector<BatchTime>& pieces, bool record_batches, RunCounters& rc) {
  const auto ns = splits.size();
  std::vector<double> interval(ns), lo(4 * ns), hi(4 * ns), sum(4 * ns);
  for (size_t s = 0; s < ns; ++s) {
    interval[s] = splits[s].sum();
    const std::array<double, 4> v{splits[s].s[0], splits[s].s[1], splits[s].s[2], interval[s]};
    for (int p = 0; p < 4; ++p) {  // actuator ranks take no part in the statistics
      const bool brick = topo.is_brick();
      lo[4 * s + p] = brick ? v[p] : std::numeric_limits<double>::infinity();
      hi[4 * s + p] = brick ? v[p] : -std::numeric_limits<double>::infinity();
      sum[4 * s + p] = brick ? v[p] : 0.0;
    }
  }
  mpi::allreduce(topo.world(), interval, rc.stage_seconds, mpi::Op::max);
  mpi::allreduce_in_place(topo.world(), std::span<double>(lo), mpi::Op::min);
  mpi::allreduce_in_place(topo.world(), std::span<double>(hi), mpi::Op::max);
  mpi::allreduce_in_place(topo.world(), std::span<double>(sum), mpi::Op::sum);
  rc.stage_time.clear();
  for (size_t s = 0; s < ns; ++s) {
    auto four = [&](const std::vector<double>& x) {
      return std::array<double, 4>{x[4 * s], x[4 * s + 1], x[4 * s + 2], x[4 * s + 3]};
    };
    rc.stage_time.push_back(stage_time_stats(topo.plan().stages[s].axis, rc.stage_seconds[s],
                                             topo.plan().ranks.n_bricks, four(lo), four(sum),
                                             four(hi)));
  }
  if (record_batches) gather_pieces(topo, pieces, rc);
}

}  // namespace

namespace {
// Elements of the largest stage result of this brick (0 on actuator ranks).
index_t register_elements(const Topology& topo) {
  return topo.is_brick() ? register_elements(topo.plan(), topo.coords()) : 0;
}

// A -0 or a NaN component: adding a zero product to it is not a no-op.
bool not_inert(double x) {
  return std::isnan(x) || (x == 0.0 && std::signbit(x));
}
bool not_inert(const cplx& x) {
  return not_inert(x.real()) || not_inert(x.imag());
}

// The last stage's start from Y0 (collective over the world when `initial` is given): its
// brick checked, and whether any rank's Y0 needs the exact updates (StageStart::exact).
template <class T>
detail::StageStart<T> last_stage_start(const Topology& topo, const std::vector<T>* initial) {
  detail::StageStart<T> start;
  if (!initial) return start;
  const Brick out_box = topo.cells().intersect(whole(topo.plan().out_shape));
  if (topo.is_brick() && static_cast<index_t>(initial->size()) != out_box.count())
    throw internal_error("initial output brick has the wrong size");
  const bool mine =
      std::any_of(initial->begin(), initial->end(), [](const T& x) { return not_inert(x); });
  start.w0 = initial;
  start.exact = mpi::max_of(topo.world(), mine ? 1 : 0) != 0;
  return start;
}
}  // namespace

// What run_engine's stages share: the registers, the counters, the control tokens and the
// zero lines one fused stage hands the next.
template <class T>
struct EngineState {
  const Topology& topo;
  const EngineOptions& opt;
  std::vector<T>& v;  // the stage's input (the brick's V)
  std::vector<T>& w;  // the spare register its result goes into
  RunCounters& rc;
  mpi::Requests& control;
  detail::ZeroLines zero_lines{};
  detail::StageStart<T> last_start{};
};

// One stage on this rank: the actuator's stream if it hosts it, the brick's stage if it is
// one; returns this rank's records of the stage's steps. The clock is charged as it goes.
template <class T>
std::vector<StepRecord> run_stage(EngineState<T>& st, int s, StageClock& clock) {
  const Topology& topo = st.topo;
  const EngineOptions& opt = st.opt;
  const int ns = static_cast<int>(topo.plan().stages.size());
  // W starts at +0, but in the last stage of the affine form at Y0.
  const detail::StageStart<T> start = s == ns - 1 ? st.last_start : detail::StageStart<T>{};
  StreamState<T> stream;
  const bool host = topo.hosts_actuator(topo.plan().stages[s].axis);
  if (host) {
    {
      const auto waiting = clock.wait();
      receive_control(topo, s);
    }
    {
      const auto packing = clock.pack();
      post_stream<T>(topo, opt, s, stream, st.rc);
    }
    // After its last vector the actuator passes control (doc/design.md §2): the next one may
    // stream while the bricks still work; they take each stage's vectors in stage order
    // (one tag per axis, and one actuator rank per axis keeps same-axis stages in order).
    pass_control(topo, s, st.control, st.rc);
  }
  if (opt.activity)
    detail::record_activity<T>(topo, opt, s, st.v, std::move(stream.coeffs), *opt.activity);
  if (host) {
    // A brick rank hosting the actuator completes its stream to the other bricks before
    // its own brick's work: each brick takes its whole stream before the stage's first
    // collective (XStream), and a send that waited for this rank's progress (MPI progresses
    // only inside its calls) would hold the others until its compute ended. Its sends to
    // itself complete with its own brick's receive, in the stage. An actuator rank waits
    // asleep, leaving its core to the bricks.
    const auto waiting = clock.wait();
    if (topo.is_brick())
      stream.requests.wait_all();
    else
      stream.requests.wait_all_asleep();
  }
  std::vector<StepRecord> records;
  if (topo.is_brick()) {
    if (opt.executor == Executor::reference)
      detail::reference_stage<T>(topo, opt, s, st.v, st.w, records, st.rc, clock, start);
    else
      detail::fused_stage<T>(topo, opt, s, st.v, st.w, records, st.rc, st.zero_lines, clock, start);
    if (rounds_on_store(opt.cell_mode))  // wide accumulators store in their format
      for (auto& x : st.w) x = store(opt.cell_mode, x);
    // The result is the next stage's input; the old input's storage is reused.
    std::swap(st.v, st.w);
  }
  if (host) {
    stream.to_self.wait_all();
    // A co-located actuator's x counts join the brick's records of the same steps.
    if (!topo.is_brick()) return std::move(stream.records);
    for (size_t i = 0; i < records.size(); ++i)
      records[i][Counter::x_bus_sends] += stream.records[i][Counter::x_bus_sends];
  }
  return records;
}

template <class T>
std::vector<T> spare_register(const Topology& topo) {
  std::vector<T> r;
  reserve_huge(r, static_cast<std::size_t>(register_elements(topo)));
  r.assign(r.capacity(), T{});
  return r;
}

template <class T>
EngineResult<T> run_engine(const Topology& topo, const EngineOptions& opt, std::vector<T> in,
                           std::vector<T>* spare, const std::vector<T>* initial) {
  const Plan& plan = topo.plan();
  const int ns = static_cast<int>(plan.stages.size());
  EngineResult<T> res;
  res.counters.substeps = substeps(opt.cell_mode, is_complex_v<T>);
  std::vector<std::vector<StepRecord>> records(static_cast<size_t>(ns));
  mpi::Requests control;
  std::vector<T> v = std::move(in), w;
  if (spare) w = std::move(*spare);
  // One spare register for every stage's result (a no-op when the caller's is big enough).
  if (topo.is_brick()) reserve_huge(w, static_cast<std::size_t>(register_elements(topo)));
  if (topo.is_brick() &&
      static_cast<index_t>(v.size()) != topo.cells().intersect(whole(plan.in_shape)).count())
    throw internal_error("input brick has the wrong size");
  EngineState<T> st{topo, opt, v, w, res.counters, control};
  st.last_start = last_stage_start(topo, initial);
  std::vector<TimeSplit> splits;
  std::vector<BatchTime> pieces;
  for (int s = 0; s < ns; ++s) {
    cancel::requested();  // actuator ranks poll here (a request is then told to the others)
    StageClock clock;
    clock.start_stage(s, topo.world_rank(), opt.record_batches);
    records[s] = run_stage(st, s, clock);
    splits.push_back(clock.end_stage());
    pieces.insert(pieces.end(), clock.pieces().begin(), clock.pieces().end());
    if (opt.on_stage_done && topo.world_rank() == 0)
      opt.on_stage_done(s, static_cast<std::uint64_t>(records[s].size()));
  }
  control.wait_all();
  reduce_records(topo, records, res.counters);
  reduce_times(topo, splits, pieces, opt.record_batches, res.counters);
  res.out_box = topo.cells().intersect(whole(plan.out_shape));
  if (topo.is_brick()) res.out = std::move(v);
  if (spare)
    *spare = std::move(w);
  else
    w = std::vector<T>();
  return res;
}

Executor parse_executor(const std::string& word) {
  if (word == "reference") return Executor::reference;
  if (word == "fused") return Executor::fused;
  throw config_error("expected reference or fused, got '" + word + "'");
}
const char* to_string(Executor e) {
  return e == Executor::reference ? "reference" : "fused";
}

PivotTransport parse_transport(const std::string& word) {
  if (word == "auto") return PivotTransport::automatic;
  if (word == "broadcast") return PivotTransport::broadcast;
  if (word == "shared") return PivotTransport::shared;
  throw config_error("expected auto, broadcast or shared, got '" + word + "'");
}
const char* to_string(PivotTransport t) {
  switch (t) {
    case PivotTransport::automatic:
      return "auto";
    case PivotTransport::broadcast:
      return "broadcast";
    case PivotTransport::shared:
      return "shared";
  }
  return "?";
}

template EngineResult<double> run_engine(const Topology&, const EngineOptions&, std::vector<double>,
                                         std::vector<double>*, const std::vector<double>*);
template EngineResult<cplx> run_engine(const Topology&, const EngineOptions&, std::vector<cplx>,
                                       std::vector<cplx>*, const std::vector<cplx>*);
template std::vector<double> spare_register(const Topology&);
template std::vector<cplx> spare_register(const Topology&);

}  // namespace triada
