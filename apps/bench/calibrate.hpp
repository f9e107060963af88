#pragma once
// --calibrate's parts: calibrate.cpp (the run, compute, memory, synchronisation, shared
// reads), calibrate_comm.cpp (point-to-point, broadcast, overlap, the alpha-beta fit) and
// calibrate_report.cpp (table and notes). Each phase measures with every rank at once,
// after a warm-up, with the ranks synchronised (barrier) before each timed repetition,
// and reports medians over the repetitions; where a collective completes when its slowest
// rank does, a repetition's time is the slowest rank's.
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

#include "apps/bench/bench.hpp"
#include "mesh/mpi.hpp"

namespace triada::bench::calib {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::size_t kMiB = std::size_t{1} << 20;

// The run's shared state.
struct Calibration {
  Calibration(const BenchConfig& c, MPI_Comm w);
  const BenchConfig& cfg;
  MPI_Comm world;
  int rank = 0, size = 1;
  mpi::Comm comm;  // a private duplicate of the world: nothing else matches our messages
  mpi::Comm node;  // the ranks sharing this rank's node memory, in world rank order
  // Every world rank's node, named by the world rank of the node's first rank.
  std::vector<int> node_of;
  int reps = 3;       // timed repetitions of compute, memory and shared reads (--reps)
  int comm_reps = 7;  // of each point of the MPI series: 2 reps + 1
  int phases = 7, done = 0;
  Clock::time_point start;
  bool same_node(int a, int b) const { return node_of[a] == node_of[b]; }
  // One line on stderr (rank 0 unless --progress never) when a phase is done.
  void progress(const std::string& phase, const std::string& summary);
};

// Median of the finite values (NaN if none).
double median_of(std::vector<double> v);
// {min, median, max} of the finite `mine` of every rank of comm, on comm's rank 0 (null
// elsewhere; nulls if no rank has a finite value). Collective.
json spread(MPI_Comm comm, double mine);
// The largest `mine` over comm (a repetition of a collective lasts as long as its slowest
// rank). Collective.
double slowest(MPI_Comm comm, double mine);
// j[key] if it is a number, else NaN (a null, or j itself null off rank 0).
inline double number_at(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : kNaN;
}
// Bytes of each point of a series: lo, 4 lo, 16 lo, ... up to hi.
std::vector<double> sizes_by_4(std::size_t lo, std::size_t hi);

struct AlphaBeta {
  double alpha = kNaN;  // seconds
  double beta = kNaN;   // seconds per byte
  double max_rel_residual = kNaN;
};
// t = alpha + bytes * beta fitted to the points by least squares of the relative residuals
// (weights 1 / t^2, so every size counts alike), with alpha, beta >= 0 (the best fit with one
// of them 0 when the unconstrained one has a negative).
AlphaBeta fit_alpha_beta(const std::vector<double>& bytes, const std::vector<double>& seconds);
json fit_json(const AlphaBeta& f);

// The phases; each returns its section of the JSON, complete on world rank 0. Collective.
json measure_compute(Calibration& c);
json measure_memory(Calibration& c);
json measure_point_to_point(Calibration& c);
json measure_broadcast(Calibration& c);
json measure_sync(Calibration& c);
json measure_shared_reads(Calibration& c);
json measure_overlap(Calibration& c);

// calibrate_report.cpp: the table of a calibration's JSON, and the JSON's notes.
void print_calibration(std::ostream& os, const json& j);
json calibration_notes();
// "12.3 GB/s"-style numbers for the table and the progress lines.
std::string si(double v, const char* unit);

}  // namespace triada::bench::calib
