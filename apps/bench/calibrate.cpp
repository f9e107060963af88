// --calibrate: the measured constants of a time model of a distributed run on this machine
// (calibrate.hpp). This file: the run and its JSON, the compute rate, memory bandwidth,
// synchronisation and shared-memory reads; calibrate_comm.cpp has the MPI series.
#include "apps/bench/calibrate.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <span>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "geometry/memory_model.hpp"
#include "jobs/world_plan.hpp"
#include "mesh/node_memory.hpp"
#include "mesh/shared_window.hpp"

namespace triada::bench::calib {

Calibration::Calibration(const BenchConfig& c, MPI_Comm w)
    : cfg(c),
      world(w),
      rank(mpi::rank(w)),
      size(mpi::size(w)),
      comm(mpi::Comm::borrow(w).dup()),
      node(mpi::Comm::borrow(w).split_shared(mpi::rank(w))),
      reps(c.reps),
      comm_reps(2 * c.reps + 1),
      phases(static_cast<int>(c.sizes.size()) + 6),
      start(Clock::now()) {
  int first = rank;  // the node's first world rank names the node
  mpi::bcast(node.get(), std::span<int>(&first, 1), 0);
  std::vector<int> mine(static_cast<size_t>(size), 0);
  mine[static_cast<size_t>(rank)] = first;
  mpi::allreduce(world, mine, node_of, mpi::Op::sum);
}

void Calibration::progress(const std::string& phase, const std::string& summary) {
  ++done;
  if (!prints_progress(cfg, rank)) return;
  std::fprintf(stderr, "triada-bench [%d/%d] calibrate %s: %s (%.1f s)\n", done, phases,
               phase.c_str(), summary.c_str(), seconds_since(start));
}

double median_of(std::vector<double> v) {
  std::erase_if(v, [](double x) { return !std::isfinite(x); });
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json spread(MPI_Comm comm, double mine) {
  std::vector<double> all = mpi::gather<double>(comm, std::span<const double>(&mine, 1), 0);
  if (mpi::rank(comm) != 0) return nullptr;
  std::erase_if(all, [](double x) { return !std::isfinite(x); });
  if (all.empty()) return {{"min", nullptr}, {"median", nullptr}, {"max", nullptr}};
  const auto [lo, hi] = std::minmax_element(all.begin(), all.end());
  return {{"min", *lo}, {"median", median_of(all)}, {"max", *hi}};
}

double slowest(MPI_Comm comm, double mine) {
  return mpi::max_of(comm, mine);
}

std::vector<double> sizes_by_4(std::size_t lo, std::size_t hi) {
  std::vector<double> out;
  for (std::size_t b = lo; b <= hi; b *= 4) out.push_back(static_cast<double>(b));
  return out;
}

namespace {

// ---- compute -------------------------------------------------------------------------

// Each rank's stage seconds (median over the reps) and MACs of a dense DCT of `shape` on a
// one-rank mesh of its own (MPI_COMM_SELF), every rank at once.
struct StageTimes {
  std::vector<int> axes;
  std::vector<std::uint64_t> macs;
  std::vector<double> seconds;
};

// alone: called on rank 0 only, after the same shape ran on every rank (which checked the
// memory), while the others wait asleep.
StageTimes time_own_mesh(Calibration& c, const ext3& shape, bool alone = false) {
  PlanRequest req;
  req.in_shape = shape;
  req.out_shape = shape;
  req.stage_order = {3, 1, 2};
  req.actuators = ActuatorPlacement::colocated;
  const Plan plan = plan_for_world(MPI_COMM_SELF, req);
  const std::string what = "--sizes " + shape_str(shape);
  if (!alone) {
    std::uint64_t need = 0;
    mpi::collectively(c.world, [&] {
      need = checked_add(predict_memory(plan, 0, {}, what).node_share(),
                         checked_mul(checked_product<std::uint64_t>(shape, what), 8u, what), what);
    });
    require_node_memory(c.world, need, what);  // every rank's mesh, on its node
  }
  const Topology topo(plan, MPI_COMM_SELF, sizeof(double));
  const std::array<CoeffMatrix, 3> coeffs = coefficients(TransformKind::dct, shape);
  EngineOptions opt;
  opt.executor = Executor::fused;
  opt.mode = Mode::dense;  // every MAC done, whatever the values
  opt.coefficients = [&](int axis) { return coeffs[axis - 1]; };
  std::vector<double> input;
  generate_brick(input_spec(shape, "dense", c.cfg.seed), whole(shape), input);
  std::vector<double> spare = spare_register<double>(topo);
  StageTimes st;
  std::vector<std::vector<double>> secs(plan.stages.size());
  for (int r = -1; r < c.reps; ++r) {  // r = -1: the warm-up
    std::vector<double> in = input;
    if (!alone) mpi::barrier(c.world);
    EngineResult<double> res = run_engine<double>(topo, opt, std::move(in), &spare);
    if (r < 0) continue;
    for (size_t s = 0; s < secs.size(); ++s) secs[s].push_back(res.counters.stage_seconds.at(s));
    st.axes.clear();
    st.macs.clear();
    for (const StageTotals& t : res.counters.stages) {
      st.axes.push_back(t.axis);
      st.macs.push_back(t[Counter::macs]);
    }
  }
  for (const auto& s : secs) st.seconds.push_back(median_of(s));
  return st;
}

// Rank 0's rates with no other rank computing (the others asleep): against the rates with
// every rank busy, what sharing the node's cores, caches and memory costs.
json compute_alone(Calibration& c, const ext3& shape) {
  json j;
  if (c.rank == 0) {
    const StageTimes st = time_own_mesh(c, shape, c.size > 1);
    double macs[2] = {0, 0}, secs[2] = {0, 0};  // left, right
    for (size_t s = 0; s < st.axes.size(); ++s) {
      macs[st.axes[s] == 3 ? 0 : 1] += static_cast<double>(st.macs[s]);
      secs[st.axes[s] == 3 ? 0 : 1] += st.seconds[s];
    }
    j = {{"rank", 0},
         {"left_macs_per_s", macs[0] / secs[0]},
         {"right_macs_per_s", macs[1] / secs[1]}};
  }
  mpi::sleepy_barrier(c.world);
  return j;
}

json compute_shape(Calibration& c, const ext3& shape) {
  const StageTimes st = time_own_mesh(c, shape);
  json stages = json::array();
  double left_macs = 0, left_s = 0, right_macs = 0, right_s = 0;
  for (size_t s = 0; s < st.axes.size(); ++s) {
    const double macs = static_cast<double>(st.macs[s]);
    const bool left = st.axes[s] == 3;
    (left ? left_macs : right_macs) += macs;
    (left ? left_s : right_s) += st.seconds[s];
    stages.push_back({{"axis", st.axes[s]},
                      {"kernel", left ? "left" : "right"},
                      {"macs", st.macs[s]},
                      {"seconds", spread(c.world, st.seconds[s])},
                      {"macs_per_s", spread(c.world, macs / st.seconds[s])}});
  }
  json j = {{"shape", {shape[0], shape[1], shape[2]}},
            {"stages", stages},
            {"left_macs_per_s", spread(c.world, left_macs / left_s)},
            {"right_macs_per_s", spread(c.world, right_macs / right_s)},
            {"alone", compute_alone(c, shape)}};
  c.progress("compute " + shape_str(shape),
             "left " + si(number_at(j["left_macs_per_s"], "median"), "MAC/s") + ", right " +
                 si(number_at(j["right_macs_per_s"], "median"), "MAC/s") + " per rank (median)");
  return j;
}

// ---- memory bandwidth ----------------------------------------------------------------

// Median seconds of `reps` memcpy of src into dst after one untimed, a barrier of `comm`
// before each (none if comm is MPI_COMM_NULL).
double copy_seconds(MPI_Comm comm, std::vector<std::byte>& dst, const std::vector<std::byte>& src,
                    int reps) {
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    if (comm != MPI_COMM_NULL) mpi::barrier(comm);
    const auto t0 = Clock::now();
    std::memcpy(dst.data(), src.data(), src.size());
    if (r >= 0) t.push_back(seconds_since(t0));
  }
  return median_of(t);
}

// ---- shared-memory reads ----------------------------------------------------------------

// Reads every word (an integer sum, which the compiler vectorises); the sum is kept.
std::uint64_t read_words(const std::byte* p, std::size_t bytes) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(p);
  const std::size_t n = bytes / sizeof(std::uint64_t);
  std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += w[i];
    s1 += w[i + 1];
    s2 += w[i + 2];
    s3 += w[i + 3];
  }
  for (; i < n; ++i) s0 += w[i];
  return s0 + s1 + s2 + s3;
}

volatile std::uint64_t g_sink = 0;  // keeps the reads

double read_seconds(MPI_Comm comm, const std::byte* p, std::size_t bytes, int reps) {
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    mpi::barrier(comm);
    const auto t0 = Clock::now();
    g_sink = g_sink + read_words(p, bytes);
    if (r >= 0) t.push_back(seconds_since(t0));
  }
  return median_of(t);
}

// ---- synchronisation ------------------------------------------------------------------

// Seconds per call of `call` (n calls a sample, after a barrier), the slowest rank of comm,
// median over `reps` samples after a warm-up one.
template <class F>
double per_call_seconds(MPI_Comm comm, int n, int reps, F&& call) {
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    mpi::barrier(comm);
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) call();
    const double s = slowest(comm, seconds_since(t0) / n);
    if (r >= 0) t.push_back(s);
  }
  return median_of(t);
}

// Two flags in node rank 0's segment, each on a cache line of its own.
std::byte* flags_of(const mpi::SharedWindow& win) {
  std::size_t bytes = 0;
  void* p = win.segment(0, bytes);
  if (!std::align(64, 128, p, bytes)) throw error("--calibrate: the shared segment is too small");
  return static_cast<std::byte*>(p);
}

// Half round trip of a flag handshake in a shared segment between node ranks 0 and 1: one
// stores a sequence number, the other waits for it and answers with its own store. No MPI.
double flag_handshake(const mpi::SharedWindow& win, int node_rank, int iters, int reps) {
  std::byte* base = flags_of(win);
  std::atomic_ref<std::uint64_t> ping(*reinterpret_cast<std::uint64_t*>(base));
  std::atomic_ref<std::uint64_t> pong(*reinterpret_cast<std::uint64_t*>(base + 64));
  const auto wait_for = [](std::atomic_ref<std::uint64_t>& flag, std::uint64_t v) {
    for (int spins = 0; flag.load(std::memory_order_acquire) != v; ++spins)
      if (spins > 2000) sched_yield();  // more ranks than cores: let the partner run
  };
  std::uint64_t seq = 0;
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) {
      ++seq;
      if (node_rank == 0) {
        ping.store(seq, std::memory_order_release);
        wait_for(pong, seq);
      } else {
        wait_for(ping, seq);
        pong.store(seq, std::memory_order_release);
      }
    }
    if (r >= 0) t.push_back(seconds_since(t0) / (2.0 * iters));
  }
  return median_of(t);
}

}  // namespace

json measure_compute(Calibration& c) {
  json shapes = json::array();
  for (const ext3& s : c.cfg.sizes) shapes.push_back(compute_shape(c, s));
  return {{"executor", "fused"},      {"mode", "dense"},
          {"transform", "dct"},       {"norm", "ortho"},
          {"stage_order", {3, 1, 2}}, {"ranks_computing", c.size},
          {"reps", c.reps},           {"warmup", 1},
          {"shapes", shapes}};
}

json measure_memory(Calibration& c) {
  const std::size_t bytes = 64 * kMiB;
  require_node_memory(c.world, 2 * bytes, "--calibrate memory bandwidth");
  const std::vector<std::byte> src(bytes, std::byte{0x5a});
  std::vector<std::byte> dst(bytes);  // zero filled: its pages are mapped
  const double all = copy_seconds(c.world, dst, src, c.reps);
  double alone = kNaN;
  if (c.rank == 0) alone = copy_seconds(MPI_COMM_NULL, dst, src, c.reps);
  mpi::sleepy_barrier(c.world);  // the others wait asleep while rank 0 copies alone
  const double moved = 2.0 * static_cast<double>(bytes);
  json j = {{"bytes_per_copy", bytes},
            {"bytes_counted", 2 * bytes},
            {"reps", c.reps},
            {"all_ranks",
             {{"seconds", spread(c.world, all)}, {"bytes_per_s", spread(c.world, moved / all)}}},
            {"alone", {{"rank", 0}, {"seconds", alone}, {"bytes_per_s", moved / alone}}}};
  c.progress("memory", si(number_at(j["all_ranks"]["bytes_per_s"], "median"), "B/s") +
                           " per rank with all copying, " + si(moved / alone, "B/s") + " alone");
  return j;
}

json measure_sync(Calibration& c) {
  // Short samples of a few calls, many of them: the median leaves out those during which
  // the scheduler took a core away (a loaded machine).
  const int n = 10, samples = 5 * c.comm_reps;
  const double barrier = per_call_seconds(c.world, n, samples, [&] { mpi::barrier(c.world); });
  const mpi::SharedWindow win(c.node.get(), 4096);
  win.fence();
  const double fence = per_call_seconds(c.node.get(), n, samples, [&] { win.fence(); });
  // The flag handshake, between the first two ranks of each node (rank 0's is reported).
  const int node_rank = c.node.rank(), node_size = c.node.size();
  if (node_rank == 0) std::memset(flags_of(win), 0, 128);
  win.fence();
  double flag = kNaN;
  if (node_size >= 2 && node_rank < 2) flag = flag_handshake(win, node_rank, n, samples);
  mpi::sleepy_barrier(c.world);
  json j = {
      {"barrier", {{"communicator_ranks", c.size}, {"calls_per_sample", n}, {"seconds", barrier}}},
      {"fence", {{"communicator_ranks", node_size}, {"calls_per_sample", n}, {"seconds", fence}}},
      {"flag_handshake",
       c.rank == 0 && std::isfinite(flag)
           ? json{{"ranks", {0, 1}}, {"round_trips_per_sample", n}, {"seconds", flag}}
           : json(nullptr)},
      {"samples", samples}};
  c.progress("synchronisation", "barrier " + si(barrier, "s") + ", fence " + si(fence, "s") +
                                    (std::isfinite(flag) ? ", flag " + si(flag, "s") : ""));
  return j;
}

json measure_shared_reads(Calibration& c) {
  if (c.size < 2) {
    c.progress("shared-memory reads", "needs 2 ranks");
    return nullptr;
  }
  const std::size_t bytes = 64 * kMiB;
  require_node_shared_memory(c.world, bytes, "--calibrate shared-memory reads");
  const mpi::SharedWindow win(c.node.get(), bytes);
  const int node_rank = c.node.rank(), node_size = c.node.size();
  std::size_t got = 0;
  std::byte* own = win.segment(node_rank, got);
  std::memset(own, node_rank + 1, bytes);  // its pages, mapped by their owner
  win.fence();
  const std::byte* other = win.segment((node_rank + 1) % node_size, got);
  const double t_other = read_seconds(c.node.get(), other, bytes, c.reps);
  const double t_own = read_seconds(c.node.get(), own, bytes, c.reps);
  const double b = static_cast<double>(bytes);
  // Ranks alone on their node have no neighbour: left out of the neighbour's figures.
  const double bw_other = node_size >= 2 ? b / t_other : kNaN;
  json j = {
      {"bytes", bytes},
      {"reps", c.reps},
      {"node_ranks", node_size},
      {"neighbour",
       {{"seconds", spread(c.world, node_size >= 2 ? t_other : kNaN)},
        {"bytes_per_s", spread(c.world, bw_other)}}},
      {"own", {{"seconds", spread(c.world, t_own)}, {"bytes_per_s", spread(c.world, b / t_own)}}}};
  c.progress("shared-memory reads", si(number_at(j["neighbour"]["bytes_per_s"], "median"), "B/s") +
                                        " per rank from a neighbour's segment, " +
                                        si(number_at(j["own"]["bytes_per_s"], "median"), "B/s") +
                                        " from its own");
  return j;
}

}  // namespace triada::bench::calib

namespace triada::bench {

int run_calibrate(const BenchConfig& cfg, MPI_Comm world) {
  calib::Calibration c(cfg, world);
  const std::string load_start = load_average();
  std::vector<int> nodes = c.node_of;
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int node_ranks = c.node.size();
  if (c.rank == 0)
    std::cout << "triada-bench --calibrate: " << c.size << " rank" << (c.size > 1 ? "s" : "")
              << " on " << nodes.size() << " node" << (nodes.size() > 1 ? "s" : "") << " (" << cores
              << " cores on rank 0's node"
              << (node_ranks > cores ? ", oversubscribed: timings are not the machine's" : "")
              << "), median of " << cfg.reps << " reps after a warm-up (MPI series: " << c.comm_reps
              << ")\n"
              << std::flush;
  json j;
  j["schema"] = "triada-calibration/1";
  j["date"] = today();
  j["compute"] = calib::measure_compute(c);
  j["memory"] = calib::measure_memory(c);
  j["point_to_point"] = calib::measure_point_to_point(c);
  j["broadcast"] = calib::measure_broadcast(c);
  j["sync"] = calib::measure_sync(c);
  j["shared_reads"] = calib::measure_shared_reads(c);
  j["overlap"] = calib::measure_overlap(c);
  mpi::collectively(world, [&] {
    if (c.rank != 0) return;
    j["machine"] = {{"hostname", host_name()},
                    {"cpu_model", cpu_model()},
                    {"cores", cores},
                    {"mpi_world_size", c.size},
                    {"nodes", nodes.size()},
                    {"ranks_on_node_of_rank_0", node_ranks},
                    {"oversubscribed", node_ranks > cores},
                    {"loadavg_start", load_start},
                    {"loadavg_end", load_average()},
                    {"compiler", __VERSION__}};
    j["config"] = {{"quick", cfg.quick},
                   {"reps", cfg.reps},
                   {"mpi_reps", c.comm_reps},
                   {"seed", cfg.seed},
                   {"sizes", json::array()}};
    for (const ext3& s : cfg.sizes) j["config"]["sizes"].push_back({s[0], s[1], s[2]});
    j["notes"] = calib::calibration_notes();
    calib::print_calibration(std::cout, j);
    write_json(cfg, j);
  });
  return 0;
}

}  // namespace triada::bench
