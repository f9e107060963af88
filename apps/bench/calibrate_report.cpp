// --calibrate's table (from the JSON it writes, so both say the same) and the JSON's notes.
#include <cmath>
#include <cstdio>
#include <ostream>

#include "apps/bench/calibrate.hpp"

namespace triada::bench::calib {

std::string si(double v, const char* unit) {
  if (!std::isfinite(v)) return "-";
  static const char* const kUp[] = {"", "k", "M", "G", "T", "P"};
  static const char* const kDown[] = {"", "m", "u", "n", "p"};
  int e = 0;
  double m = v;
  if (m != 0) {
    while (std::abs(m) >= 1000 && e < 5) m /= 1000, ++e;
    while (std::abs(m) < 1 && e > -4) m *= 1000, --e;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", m, e >= 0 ? kUp[e] : kDown[-e], unit);
  return buf;
}

namespace {

double num(const json& j) {
  return j.is_number() ? j.get<double>() : kNaN;
}

// "min / median / max unit", the three scaled by the median's SI prefix.
std::string spread_str(const json& s, const char* unit) {
  const double med = number_at(s, "median");
  if (!std::isfinite(med)) return "-";
  const std::string m = si(med, unit);  // "12.3 GB/s"
  const double mantissa = std::stod(m.substr(0, m.find(' ')));
  const double scale = mantissa != 0 ? med / mantissa : 1.0;
  char buf[96];
  std::snprintf(buf, sizeof buf, "%.3g / %.3g / %.3g%s", number_at(s, "min") / scale, med / scale,
                number_at(s, "max") / scale, m.substr(m.find(' ')).c_str());
  return buf;
}

std::string ranks_str(const json& n) {
  const int k = n.get<int>();
  return std::to_string(k) + (k == 1 ? " rank" : " ranks");
}

struct SeriesColumn {
  std::string label;
  const json* seconds;  // array, one per size
  const json* fit;
};

// Rows of sizes, a column of seconds per series, then each fit's alpha and 1/beta.
void print_series(std::ostream& os, const json& sizes, const std::vector<SeriesColumn>& cols) {
  char line[64];
  std::snprintf(line, sizeof line, "  %-16s", "bytes");
  os << line;
  for (const auto& c : cols) {
    std::snprintf(line, sizeof line, " %14s", c.label.c_str());
    os << line;
  }
  os << "\n";
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::snprintf(line, sizeof line, "  %-16.0f", num(sizes[i]));
    os << line;
    for (const auto& c : cols) {
      std::snprintf(line, sizeof line, " %14s", si(num((*c.seconds)[i]), "s").c_str());
      os << line;
    }
    os << "\n";
  }
  const std::pair<const char*, const char*> rows[] = {{"fit alpha", "alpha_s"},
                                                      {"fit 1/beta", "bytes_per_s"},
                                                      {"max rel. resid.", "max_rel_residual"}};
  for (const auto& [name, key] : rows) {
    std::snprintf(line, sizeof line, "  %-16s", name);
    os << line;
    for (const auto& c : cols) {
      const double v = number_at(*c.fit, key);
      const std::string s = std::string(key) == "alpha_s"       ? si(v, "s")
                            : std::string(key) == "bytes_per_s" ? si(v, "B/s")
                                                                : fmt("%.0f%%", 100 * v);
      std::snprintf(line, sizeof line, " %14s", s.c_str());
      os << line;
    }
    os << "\n";
  }
}

void print_compute(std::ostream& os, const json& c) {
  const int ranks = c["ranks_computing"].get<int>();
  os << "compute: fused executor, dense DCT (ESOP off) on each rank's own one-rank mesh, "
     << (ranks > 1 ? "all " + std::to_string(ranks) + " ranks at once" : "one rank")
     << "; per rank, min / median / max over ranks, median of " << c["reps"].get<int>()
     << " reps\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-12s %4s %6s %12s %12s  %s\n", "shape", "axis", "kernel",
                "MACs", "seconds", "MAC/s min / median / max");
  os << line;
  for (const json& s : c["shapes"]) {
    const ext3 sh{s["shape"][0].get<index_t>(), s["shape"][1].get<index_t>(),
                  s["shape"][2].get<index_t>()};
    for (const json& st : s["stages"]) {
      std::snprintf(line, sizeof line, "  %-12s %4d %6s %12llu %12s  %s\n", shape_str(sh).c_str(),
                    st["axis"].get<int>(), st["kernel"].get<std::string>().c_str(),
                    static_cast<unsigned long long>(st["macs"].get<std::uint64_t>()),
                    si(number_at(st["seconds"], "median"), "s").c_str(),
                    spread_str(st["macs_per_s"], "MAC/s").c_str());
      os << line;
    }
    os << "  " << shape_str(sh) << ": left kernel (axis 3) "
       << spread_str(s["left_macs_per_s"], "MAC/s") << ", right kernel (axes 1, 2) "
       << spread_str(s["right_macs_per_s"], "MAC/s") << "\n";
  }
}

void print_mpi_series(std::ostream& os, const json& j) {
  const json& pairs = j["point_to_point"]["pairs"];
  if (!pairs.empty()) {
    os << "point-to-point: ping-pong, half round trip, median of "
       << j["point_to_point"]["reps"].get<int>() << "\n";
    std::vector<SeriesColumn> cols;
    for (const json& p : pairs)
      cols.push_back({"ranks " + std::to_string(p["ranks"][0].get<int>()) + "-" +
                          std::to_string(p["ranks"][1].get<int>()),
                      &p["seconds"], &p["fit"]});
    print_series(os, pairs[0]["sizes_bytes"], cols);
  }
  const json& comms = j["broadcast"]["communicators"];
  if (!comms.empty()) {
    os << "broadcast from rank 0: seconds per call, slowest rank, median of "
       << j["broadcast"]["reps"].get<int>() << "\n";
    std::vector<SeriesColumn> cols;
    for (const json& c : comms) {
      const std::string k = std::to_string(c["ranks"].get<int>());
      cols.push_back({"Bcast@" + k, &c["bcast"]["seconds"], &c["bcast"]["fit"]});
      cols.push_back({"Ibcast@" + k, &c["ibcast"]["seconds"], &c["ibcast"]["fit"]});
    }
    print_series(os, comms[0]["sizes_bytes"], cols);
  }
}

void print_rest(std::ostream& os, const json& j) {
  const json& m = j["memory"];
  os << "memory: memcpy of " << m["bytes_per_copy"].get<std::uint64_t>() / kMiB
     << " MiB, bytes read + written per second: "
     << spread_str(m["all_ranks"]["bytes_per_s"], "B/s") << " per rank with every rank copying; "
     << si(number_at(m["alone"], "bytes_per_s"), "B/s") << " with rank 0 alone\n";
  const json& s = j["sync"];
  os << "synchronisation: MPI_Barrier (" << ranks_str(s["barrier"]["communicator_ranks"]) << ") "
     << si(number_at(s["barrier"], "seconds"), "s") << ", MPI_Win_fence ("
     << ranks_str(s["fence"]["communicator_ranks"]) << " of a node) "
     << si(number_at(s["fence"], "seconds"), "s") << " per call";
  if (!s["flag_handshake"].is_null())
    os << "; shared-memory flag handshake " << si(number_at(s["flag_handshake"], "seconds"), "s")
       << " (half round trip)";
  os << "\n";
  if (const json& r = j["shared_reads"]; !r.is_null())
    os << "shared-memory reads of " << r["bytes"].get<std::uint64_t>() / kMiB
       << " MiB, every rank at once, per rank: a neighbour's segment "
       << spread_str(r["neighbour"]["bytes_per_s"], "B/s") << "; its own "
       << spread_str(r["own"]["bytes_per_s"], "B/s") << "\n";
  if (const json& o = j["overlap"]; !o.is_null())
    os << "overlap: MPI_Ibcast of " << o["bytes"].get<std::uint64_t>() / kMiB << " MiB on "
       << o["communicator_ranks"].get<int>() << " ranks, then "
       << si(number_at(o, "compute_seconds"), "s")
       << " of computation without MPI, then MPI_Wait: " << si(number_at(o, "wait_seconds"), "s")
       << " = " << fmt("%.2f", number_at(o, "ratio")) << " x the blocking MPI_Bcast's "
       << si(number_at(o, "blocking_seconds"), "s")
       << " (asynchronous progress: " << o["progress"].get<std::string>()
       << "); with MPI_Test every " << si(number_at(o["with_tests"], "poll_interval_s"), "s")
       << ": " << fmt("%.2f", number_at(o["with_tests"], "ratio")) << "\n";
}

}  // namespace

void print_calibration(std::ostream& os, const json& j) {
  const json& m = j["machine"];
  os << "machine: " << m["hostname"].get<std::string>() << ", " << m["cpu_model"].get<std::string>()
     << ", " << m["cores"].get<long>() << " cores; MPI world " << m["mpi_world_size"].get<int>()
     << " on " << m["nodes"].get<std::size_t>() << " node(s); load average "
     << m["loadavg_start"].get<std::string>() << " at start, "
     << m["loadavg_end"].get<std::string>() << " at end\n\n";
  print_compute(os, j["compute"]);
  os << "\n";
  print_rest(os, j);
  os << "\n";
  print_mpi_series(os, j);
}

json calibration_notes() {
  return {
      "every measurement: a warm-up first, a barrier before each timed repetition, the median "
      "over the repetitions; where a collective completes when its slowest rank does "
      "(broadcast, barrier, fence, overlap), a repetition's time is the slowest rank's",
      "{min, median, max}: over the ranks of each rank's own median",
      "compute: each rank runs run_engine (fused executor, dense mode: every MAC is done) on "
      "its own one-rank mesh (MPI_COMM_SELF) of a dense real input, DCT-II ortho on every "
      "axis, stage order 3, 1, 2, every rank at once (memory contention included); seconds "
      "are run_engine's stage_seconds; macs_per_s = the stage's MACs / its seconds; the stage "
      "along axis 3 runs the left kernel, those along axes 1 and 2 the right kernel "
      "(right_macs_per_s = their MACs / their seconds together)",
      "memory: memcpy between two buffers of bytes_per_copy, both touched before; "
      "bytes_per_s counts bytes read + written (2 x bytes_per_copy) per second",
      "point_to_point: seconds = half the round trip of a ping-pong (MPI_Isend + MPI_Wait, "
      "MPI_Recv) of each message size: round_trips_per_rep round trips a repetition, timed "
      "in samples of round_trips_per_sample, the median over every sample of every repetition "
      "(a sample during which the scheduler took a core away is an outlier, not averaged in)",
      "fit: t = alpha_s + bytes * beta_s_per_byte over the series' points, least squares of "
      "the relative residuals (weights 1/t^2, every size alike) with alpha, beta >= 0; "
      "bytes_per_s = 1 / beta_s_per_byte; max_rel_residual = max |fit - t| / t",
      "broadcast: root 0, on the communicator of world ranks 0 .. ranks-1; seconds per call",
      "sync: seconds per call, median over `samples` samples of calls_per_sample calls (the "
      "handshake: round_trips_per_sample round trips), each after a barrier, the slowest "
      "rank's; fence: MPI_Win_fence on an "
      "MPI_Win_allocate_shared window of the node communicator (MPI_COMM_TYPE_SHARED) of rank "
      "0; flag_handshake: half round trip of two ranks of a node storing and spinning on "
      "flags in a shared segment, no MPI",
      "shared_reads: every rank of a node at once reads (sums) a segment of bytes of the next "
      "node rank's part of a shared window (neighbour) or its own part (own); bytes read per "
      "second; ranks alone on their node are left out of neighbour",
      "overlap: MPI_Ibcast of bytes from rank 0 to every rank, then compute_seconds (twice "
      "the blocking MPI_Bcast's time) of computation without MPI calls, then MPI_Wait: "
      "ratio = wait_seconds / blocking_seconds, near 0 when the library progresses the "
      "broadcast on its own, near 1 when it progresses only inside MPI calls; with_tests: "
      "the same with MPI_Test every poll_interval_s during the computation",
  };
}

}  // namespace triada::bench::calib
