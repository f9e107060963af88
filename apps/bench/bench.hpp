#pragma once
// triada-bench: times the fused and reference executors against a 3-mode product through
// OpenBLAS dgemm and against FFTW's 3D DFT / DCT-II / DHT, on the same machine in one run;
// with --accuracy, tabulates the error, cycles and MAC energy of every cell mode instead;
// with --calibrate, measures the constants of a time model of a distributed run.
// Only the simulation is timed (after the brick-local input is generated, before anything
// is written); baselines are timed the same way (after planning / input set-up).
//
// This program links OpenBLAS and FFTW; the triada library itself never does. Its parts:
// options.cpp (the command line), timing.cpp (the engine, timed), baselines.cpp (OpenBLAS
// in a child process, FFTW, the memory floor), accuracy.cpp (--accuracy), output.cpp
// (table, JSON, machine facts), calibrate*.cpp (--calibrate) and main.cpp (the timing run).
#include <mpi.h>

#include <array>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/types.hpp"
#include "counters/counters.hpp"
#include "counters/progress.hpp"
#include "engine/engine.hpp"
#include "geometry/brick.hpp"
#include "geometry/plan.hpp"
#include "io/generate.hpp"
#include "mesh/mpi.hpp"
#include "mesh/topology.hpp"
#include "report/provenance.hpp"

namespace triada {

struct BenchConfig {
  std::vector<ext3> sizes;              // tensor shapes (N1, N2, N3); the transforms are square
  std::vector<std::string> sparsities;  // dense, r50, r90, r99, lines90
  std::vector<std::string> variants;    // fused, reference, openblas, fftw-dft, fftw-dct, fftw-dht
  int reps = 3;                         // best of reps
  index_t reference_max = 32768;        // reference executor only up to this many elements
  TransformKind transform = TransformKind::dct;  // what fused / reference run
  ActuatorPlacement actuators = ActuatorPlacement::colocated;
  std::uint64_t seed = 1;
  std::string json;    // output path (default filled in by the parser)
  bool force = false;  // --force: replace an existing JSON file
  bool quick = false;
  // --accuracy: instead of timing, run a 3D DFT (complex), a 3D DCT and a GEMM (gemt with
  // C1 random, C2 = C3 = I) in every cell mode through the engine and compare each with the
  // fp64 run of the same inputs (doc/precision.md).
  bool accuracy = false;
  std::string mesh;  // --mesh: INI whose [energy] keys give the per-mode MAC energies
  // --mxu: instead, time the planar MXU's fused executor against dgemm (mxu.cpp).
  bool mxu = false;
  // --m3xu: instead, the M3XU paper's comparison of FP32 designs on the planar MXU (m3xu.cpp);
  // the GEMM side is sizes[0][0] unless m3xu_size_default.
  bool m3xu = false;
  bool m3xu_size_default = true;
  // --calibrate: instead, measure the constants of a time model of a distributed run on
  // this machine (calibrate*.cpp): compute rate, memory bandwidth, point-to-point,
  // broadcast, synchronisation, shared-memory reads, overlap. sizes and reps apply.
  bool calibrate = false;
  // --progress: never silences the per-row lines on stderr (auto and always print them: they
  // are plain lines, one per finished row).
  ProgressMode progress = ProgressMode::automatic;
  std::string command_line;  // the words of the run, shell-quoted (report/provenance.hpp)
  Provenance provenance;     // the run's, set by run_bench on every rank: each JSON's record
};

// Parses the command line. Returns nothing after writing --help to `help`; throws
// config_error with one line for a bad option or value.
std::optional<BenchConfig> parse_bench_options(int argc, char** argv, std::ostream& help,
                                               int world_size);

// The body of triada-bench under run_main (collective over MPI_COMM_WORLD).
int run_bench(int argc, char** argv);

// The OpenBLAS measurement runs in a child process of the bench (OpenBLAS reads
// OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE when it loads, so the child gets an environment
// without them): `triada-bench --openblas-child N1xN2xN3 REPS TRANSFORM SEED`, no MPI.
// It prints one JSON line on stdout: {"seconds", "corename", "config", "threads"}.
bool is_openblas_child(int argc, char** argv);
int run_openblas_child(int argc, char** argv);

// ---------------------------------------------------------------------------------------
// The parts' shared pieces.
namespace bench {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

double seconds_since(Clock::time_point t0);
index_t elements(const ext3& s);
// Dense MACs of the 3-mode product with square matrices: N1 N2 N3 (N1 + N2 + N3).
std::uint64_t dense_macs(const ext3& s);
std::string shape_str(const ext3& s);

// options.cpp: "N" (a cube) or "N1xN2xN3", each at most 4096; errors name `option`.
ext3 parse_size(const std::string& token, const std::string& option);
std::vector<std::string> split(const std::string& s, char sep);
// Whole-string integer (no sign for unsigned types, no spaces, no overflow).
template <class Int>
bool parse_int(const std::string& s, Int& out) {
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && p == end && !s.empty();
}

// timing.cpp: inputs, coefficients and the engine, timed.
// The benchmark's input patterns, all uniform in [-1, 1) from the counter-based generator.
GenSpec input_spec(const ext3& shape, const std::string& sparsity, std::uint64_t seed);
std::array<CoeffMatrix, 3> coefficients(TransformKind kind, const ext3& shape);

struct EngineTiming {
  double seconds = std::numeric_limits<double>::infinity();  // best rep, max over ranks
  std::vector<double> stage_seconds;  // world rank 0's stage durations in the best rep
  RunCounters counters;
  std::vector<double> out;  // this rank's output brick (of the last rep)
  Brick out_box;
};
EngineTiming time_engine(const Topology& topo, const std::array<CoeffMatrix, 3>& coeffs,
                         Executor executor, const std::vector<double>& input, int reps);
// Gathers every rank's output brick into the whole tensor on rank 0 (others get nothing).
std::vector<double> gather_on_root(MPI_Comm comm, const ext3& shape, const Brick& box,
                                   const std::vector<double>& vals);
// Largest relative difference max|a - b| / max|b|.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b);

// baselines.cpp
// Y = X x3 C3 x1 C1 x2 C2 (stage order 3, 1, 2) by cblas_dgemm, one thread.
class ThreeModeProduct {
 public:
  ThreeModeProduct(const ext3& shape, const std::array<CoeffMatrix, 3>& c);
  void run(const std::vector<double>& x);
  const std::vector<double>& result() const { return y_; }

 private:
  static int blas_int(index_t v);
  ext3 n_{}, k_{};
  std::vector<double> c1_, c2_, c3_, t1_, t2_, y_;
};
struct OpenblasResult {
  double seconds = 0;
  std::string corename;
  std::string config;
};
// The OpenBLAS measurement in a child process without OPENBLAS_CORETYPE / _L2_SIZE.
OpenblasResult spawn_openblas_child(const ext3& shape, int reps, TransformKind kind,
                                    std::uint64_t seed);
// Best of `reps` FFTW executions of `variant` (fftw-dft, fftw-dct, fftw-dht) on x.
double time_fftw(const std::string& variant, const ext3& s, const std::vector<double>& x, int reps);
// Best of max(reps, 3) memcpy of the whole tensor into a touched buffer.
double memory_floor_seconds(const ext3& shape, int reps);
// The kernel OpenBLAS picks in this process (with the inherited environment).
std::string openblas_corename();
const char* fftw_version_string();
void set_openblas_threads(int n);

// output.cpp: rows, table, JSON, machine facts.
struct Row {
  ext3 shape{};
  std::string sparsity;
  std::string variant;
  int ranks = 1;
  int brick_ranks = 1;
  std::array<int, 3> grid{1, 1, 1};
  double seconds = 0;
  std::uint64_t macs = 0;
  std::uint64_t macs_dense = 0;
  std::optional<std::uint64_t> steps;
  std::optional<std::uint64_t> input_nonzeros;
  std::vector<double> stage_seconds;
  std::vector<int> stage_axes;
  double ratio_openblas = std::numeric_limits<double>::quiet_NaN();
  double ratio_fftw = std::numeric_limits<double>::quiet_NaN();
  // Useful MACs per second / 1e9 (one MAC = one multiply-add = 2 flops).
  double gmacs_per_s() const {
    return seconds > 0 ? static_cast<double>(macs) / seconds / 1e9 : 0.0;
  }
  bool baseline() const { return variant != "fused" && variant != "reference"; }
};
std::string fftw_variant_for(TransformKind k);
// Ratio = baseline seconds / row seconds, both of the same shape (> 1: faster).
void fill_ratios(std::vector<Row>& rows, TransformKind kind);
json nullable(double v);
json row_json(const Row& r);
std::string fmt(const char* f, double v);
void print_table(std::ostream& os, const std::vector<Row>& rows, TransformKind kind);
std::string today();
std::string cpu_model();
std::string env_or(const char* name, const char* fallback);
std::string load_average();
// bench/results/<kind>-<host>-<date>[-np<K>].json for the run `c` configures.
std::string default_json_path(const BenchConfig& c, int world_size);
// Creates the folder of the JSON file and probes the file as every output is probed
// (io/output_files.hpp), before any timing.
void prepare_json_path(const std::string& path, bool force);
// Writes `j` with the run's `provenance` to cfg.json ("-": stdout; --force: cfg.force), then
// "wrote PATH" on stdout for a file.
void write_json(const BenchConfig& cfg, json j);
// Whether rank `rank` prints the bench's progress lines (rank 0 unless --progress never).
bool prints_progress(const BenchConfig& cfg, int rank);

// Runs `f` on rank 0 of `world` while the others wait, an error agreed by every rank as
// everywhere else (mpi::collectively). Returns 0, the exit code of a run that gets here.
template <class F>
int on_rank0(MPI_Comm world, F&& f) {
  mpi::collectively(world, [&] {
    if (mpi::rank(world) == 0) f();
  });
  return 0;
}

// accuracy.cpp: --accuracy, collective over `world`.
int run_accuracy(const BenchConfig& cfg, MPI_Comm world);
// mxu.cpp: --mxu, on one rank (one core: on_rank0).
void run_mxu(const BenchConfig& cfg);
// m3xu.cpp: --m3xu, on one rank (on_rank0).
void run_m3xu(const BenchConfig& cfg);
// calibrate.cpp: --calibrate, collective over `world`.
int run_calibrate(const BenchConfig& cfg, MPI_Comm world);

}  // namespace bench
}  // namespace triada
