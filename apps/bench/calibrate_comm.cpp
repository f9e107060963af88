// --calibrate's MPI series (calibrate.hpp): ping-pong and broadcast times per message size
// with their alpha-beta fits, and whether a non-blocking broadcast progresses while its
// caller computes. Every call goes through the wrappers of mesh/mpi.hpp.
#include <algorithm>
#include <cmath>
#include <span>

#include "apps/bench/calibrate.hpp"

namespace triada::bench::calib {

AlphaBeta fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  AlphaBeta f;
  const size_t n = std::min(bytes.size(), seconds.size());
  if (n < 2) return f;
  // Relative residuals: minimise sum (1 - alpha p_i - beta q_i)^2, p_i = 1 / t_i, q_i = x_i / t_i.
  double pp = 0, pq = 0, qq = 0, p1 = 0, q1 = 0;
  for (size_t i = 0; i < n; ++i) {
    const double p = 1.0 / seconds[i], q = bytes[i] / seconds[i];
    pp += p * p;
    pq += p * q;
    qq += q * q;
    p1 += p;
    q1 += q;
  }
  const auto residual = [&](double a, double b) {
    double r = 0;
    for (size_t i = 0; i < n; ++i) {
      const double e = 1.0 - (a + b * bytes[i]) / seconds[i];
      r += e * e;
    }
    return r;
  };
  // The unconstrained optimum, on columns scaled to unit length (better conditioned).
  const double sp = std::sqrt(pp), sq = std::sqrt(qq), cs = pq / (sp * sq);
  const double det = 1.0 - cs * cs;
  double a = det > 0 ? (p1 / sp - cs * q1 / sq) / det / sp : -1.0;
  double b = det > 0 ? (q1 / sq - cs * p1 / sp) / det / sq : -1.0;
  if (!(a >= 0 && b >= 0)) {  // the optimum lies on an edge: alpha = 0 or beta = 0
    const double b_only = std::max(0.0, q1 / qq), a_only = std::max(0.0, p1 / pp);
    if (residual(0.0, b_only) <= residual(a_only, 0.0)) {
      a = 0;
      b = b_only;
    } else {
      a = a_only;
      b = 0;
    }
  }
  f.alpha = a;
  f.beta = b;
  f.max_rel_residual = 0;
  for (size_t i = 0; i < n; ++i)
    f.max_rel_residual =
        std::max(f.max_rel_residual, std::abs(a + b * bytes[i] - seconds[i]) / seconds[i]);
  return f;
}

json fit_json(const AlphaBeta& f) {
  const auto num = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  return {{"alpha_s", num(f.alpha)},
          {"beta_s_per_byte", num(f.beta)},
          {"bytes_per_s", f.beta > 0 ? num(1.0 / f.beta) : json(nullptr)},
          {"max_rel_residual", num(f.max_rel_residual)},
          {"method", "least squares of relative residuals (weights 1/t^2), alpha, beta >= 0"}};
}

namespace {

constexpr int kTag = 7100;

json whole_bytes(const std::vector<double>& sizes) {
  json j = json::array();
  for (const double b : sizes) j.push_back(static_cast<std::uint64_t>(b));
  return j;
}
constexpr double kPollSeconds = 20e-6;  // overlap: MPI_Test this often in the polling variant

// Separate send and receive buffers of a ping-pong, as the OSU latency benchmark has them: a
// message sent straight from the buffer the last one was received into is slower (its
// lines are still in the other core's cache after the receive's copy; 4x at 2 MiB on the
// 2-core VM).
struct PingPongBuffers {
  std::vector<std::byte> send = std::vector<std::byte>(8 * kMiB, std::byte{1});
  std::vector<std::byte> recv = std::vector<std::byte>(8 * kMiB);
};

// Half round trip of `iters` round trips of `bytes` bytes between ranks a (which sends
// first) and b of comm; this rank is one of them.
double ping_pong(MPI_Comm comm, int me, int a, int b, PingPongBuffers& buf, std::size_t bytes,
                 int iters) {
  const int peer = me == a ? b : a;
  const auto t0 = Clock::now();
  for (int i = 0; i < iters; ++i) {
    if (me == a) {
      mpi::isend_bytes(comm, buf.send.data(), bytes, peer, kTag).wait();
      mpi::recv_bytes(comm, peer, kTag, buf.recv.data(), bytes);
    } else {
      mpi::recv_bytes(comm, peer, kTag, buf.recv.data(), bytes);
      mpi::isend_bytes(comm, buf.send.data(), bytes, peer, kTag).wait();
    }
  }
  return seconds_since(t0) / (2.0 * iters);
}

// Ping-pong of world ranks a and b for 8 B .. 8 MiB; the others wait asleep. A repetition
// is a number of round trips timed in short batches (a few us to tens of us below 64 KiB),
// and the median over every batch of every repetition is reported: a batch during which
// the scheduler took a rank's core away (a loaded machine) is an outlier, not a mean.
json pair_series(Calibration& c, int a, int b, PingPongBuffers& buf) {
  const std::vector<double> sizes = sizes_by_4(8, 8 * kMiB);
  std::vector<double> secs;
  std::vector<int> trips, batches;
  for (const double bytes : sizes) {
    const auto n = static_cast<std::size_t>(bytes);
    const auto batch = static_cast<int>(std::clamp<std::size_t>(64 * 1024 / n, 1, 16));
    const auto iters = static_cast<int>(
        std::clamp<std::size_t>(4 * kMiB / n, 2, c.cfg.quick ? 48 : 192));  // ~8 MiB a rep
    trips.push_back(iters);
    batches.push_back(batch);
    if (c.rank != a && c.rank != b) continue;
    ping_pong(c.comm.get(), c.rank, a, b, buf, n, 2);  // the warm-up
    std::vector<double> t;
    for (int r = 0; r < c.comm_reps; ++r)
      for (int done = 0; done < iters; done += batch)
        t.push_back(ping_pong(c.comm.get(), c.rank, a, b, buf, n, batch));
    secs.push_back(median_of(t));
  }
  mpi::sleepy_barrier(c.world);
  if (c.rank != a) return nullptr;  // a = 0 reports
  return {{"ranks", {a, b}},
          {"same_node", c.same_node(a, b)},
          {"sizes_bytes", whole_bytes(sizes)},
          {"round_trips_per_rep", trips},
          {"round_trips_per_sample", batches},
          {"seconds", secs},
          {"fit", fit_json(fit_alpha_beta(sizes, secs))}};
}

// Seconds of one broadcast of buf from rank 0 of comm (MPI_Bcast, or MPI_Ibcast then
// MPI_Wait), the slowest rank, median over reps after a warm-up; a barrier before each.
double bcast_seconds(MPI_Comm comm, bool nonblocking, std::span<std::byte> buf, int reps) {
  std::vector<double> t;
  for (int r = -1; r < reps; ++r) {
    mpi::barrier(comm);
    const auto t0 = Clock::now();
    if (nonblocking)
      mpi::ibcast_bytes(comm, buf, 0).wait();
    else
      mpi::bcast_bytes(comm, buf, 0);
    const double s = slowest(comm, seconds_since(t0));
    if (r >= 0) t.push_back(s);
  }
  return median_of(t);
}

// Both broadcasts on the communicator of world ranks 0 .. k-1, 8 KiB .. 8 MiB.
json bcast_series(Calibration& c, int k, std::vector<std::byte>& buf) {
  const mpi::Comm sub = c.comm.split(c.rank < k ? 0 : MPI_UNDEFINED, c.rank);
  const std::vector<double> sizes = sizes_by_4(8 << 10, 8 * kMiB);
  std::vector<double> blocking, nonblocking;
  if (sub.valid())
    for (const double bytes : sizes) {
      const std::span<std::byte> b(buf.data(), static_cast<std::size_t>(bytes));
      blocking.push_back(bcast_seconds(sub.get(), false, b, c.comm_reps));
      nonblocking.push_back(bcast_seconds(sub.get(), true, b, c.comm_reps));
    }
  mpi::sleepy_barrier(c.world);
  if (c.rank != 0) return nullptr;
  bool one_node = true;
  for (int r = 1; r < k; ++r) one_node = one_node && c.same_node(0, r);
  return {{"ranks", k},
          {"one_node", one_node},
          {"sizes_bytes", whole_bytes(sizes)},
          {"bcast", {{"seconds", blocking}, {"fit", fit_json(fit_alpha_beta(sizes, blocking))}}},
          {"ibcast",
           {{"seconds", nonblocking}, {"fit", fit_json(fit_alpha_beta(sizes, nonblocking))}}}};
}

volatile double g_busy_sink = 0;  // keeps the busy loop's arithmetic

// Computes for `seconds` without MPI; with `poll`, calls MPI_Test on it every kPollSeconds.
void busy(double seconds, mpi::Request* poll) {
  const auto t0 = Clock::now();
  auto last = t0;
  double x = 1.0;
  while (seconds_since(t0) < seconds) {
    for (int i = 0; i < 256; ++i) x = x * 1.0000001 + 1e-9;
    if (poll && seconds_since(last) >= kPollSeconds) {
      poll->test();
      last = Clock::now();
    }
  }
  g_busy_sink = x;
}

struct Overlapped {
  double post = kNaN, wait = kNaN;  // slowest rank, median over reps
};

// MPI_Ibcast of buf from rank 0, `compute` seconds of computation, MPI_Wait.
Overlapped ibcast_during_compute(MPI_Comm comm, std::span<std::byte> buf, double compute, bool poll,
                                 int reps) {
  std::vector<double> post, wait;
  for (int r = -1; r < reps; ++r) {
    mpi::barrier(comm);
    const auto t0 = Clock::now();
    mpi::Request q = mpi::ibcast_bytes(comm, buf, 0);
    const double p = seconds_since(t0);
    busy(compute, poll ? &q : nullptr);
    const auto t1 = Clock::now();
    q.wait();
    const double w = seconds_since(t1);
    const double ps = slowest(comm, p), ws = slowest(comm, w);
    if (r < 0) continue;
    post.push_back(ps);
    wait.push_back(ws);
  }
  return {median_of(post), median_of(wait)};
}

const char* verdict(double ratio) {
  return ratio <= 0.25 ? "asynchronous" : ratio >= 0.75 ? "none" : "partial";
}

}  // namespace

json measure_point_to_point(Calibration& c) {
  json pairs = json::array();
  if (c.size >= 2) {
    PingPongBuffers buf;
    pairs.push_back(pair_series(c, 0, c.size - 1, buf));
    if (c.size > 2) pairs.push_back(pair_series(c, 0, 1, buf));
  }
  std::string summary = "needs 2 ranks";
  if (c.rank == 0 && !pairs.empty()) {
    const json& f = pairs[0]["fit"];
    summary = "ranks 0-" + std::to_string(c.size - 1) + ": alpha " +
              si(number_at(f, "alpha_s"), "s") + ", 1/beta " +
              si(number_at(f, "bytes_per_s"), "B/s");
  }
  c.progress("point-to-point", summary);
  return {{"method",
           "ping-pong, MPI_Isend + MPI_Wait then MPI_Recv, separate send and receive buffers; "
           "half round trip"},
          {"reps", c.comm_reps},
          {"pairs", pairs}};
}

json measure_broadcast(Calibration& c) {
  json comms = json::array();
  if (c.size >= 2) {
    std::vector<std::byte> buf(8 * kMiB);
    for (int k = 2; k < c.size; k *= 2) comms.push_back(bcast_series(c, k, buf));
    comms.push_back(bcast_series(c, c.size, buf));
  }
  std::string summary = "needs 2 ranks";
  if (c.rank == 0 && !comms.empty()) {
    const json& w = comms.back();
    summary = std::to_string(c.size) + " ranks: MPI_Bcast alpha " +
              si(number_at(w["bcast"]["fit"], "alpha_s"), "s") + ", 1/beta " +
              si(number_at(w["bcast"]["fit"], "bytes_per_s"), "B/s") + "; MPI_Ibcast alpha " +
              si(number_at(w["ibcast"]["fit"], "alpha_s"), "s") + ", 1/beta " +
              si(number_at(w["ibcast"]["fit"], "bytes_per_s"), "B/s");
  }
  c.progress("broadcast", summary);
  return {{"root", 0},
          {"method",
           "a barrier, then one call (MPI_Bcast, or MPI_Ibcast + MPI_Wait); the "
           "slowest rank's time"},
          {"reps", c.comm_reps},
          {"communicators", comms}};
}

json measure_overlap(Calibration& c) {
  if (c.size < 2) {
    c.progress("overlap", "needs 2 ranks");
    return nullptr;
  }
  const std::size_t bytes = 2 * kMiB;
  std::vector<std::byte> buf(bytes);
  const MPI_Comm comm = c.comm.get();
  const double blocking = bcast_seconds(comm, false, buf, c.comm_reps);
  const double compute = 2.0 * blocking;
  const Overlapped plain = ibcast_during_compute(comm, buf, compute, false, c.comm_reps);
  const Overlapped polled = ibcast_during_compute(comm, buf, compute, true, c.comm_reps);
  const double ratio = plain.wait / blocking, ratio_polled = polled.wait / blocking;
  c.progress("overlap", "MPI_Ibcast of 2 MiB: MPI_Wait after computing takes " +
                            si(plain.wait, "s") + ", " + fmt("%.2f", ratio) + " x the blocking " +
                            si(blocking, "s") + " (progress: " + verdict(ratio) + ")");
  return {{"bytes", bytes},
          {"root", 0},
          {"communicator_ranks", c.size},
          {"reps", c.comm_reps},
          {"blocking_seconds", blocking},
          {"compute_seconds", compute},
          {"post_seconds", plain.post},
          {"wait_seconds", plain.wait},
          {"ratio", ratio},
          {"progress", verdict(ratio)},
          {"with_tests",
           {{"poll_interval_s", kPollSeconds},
            {"post_seconds", polled.post},
            {"wait_seconds", polled.wait},
            {"ratio", ratio_polled},
            {"progress", verdict(ratio_polled)}}}};
}

}  // namespace triada::bench::calib
