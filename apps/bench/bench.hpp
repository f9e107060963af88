#pragma once
// triada-bench: times the fused and reference executors against a 3-mode product through
// OpenBLAS dgemm and against FFTW's 3D DFT / DCT-II / DHT, on the same machine in one run;
// with --accuracy, tabulates the error, cycles and MAC energy of every cell mode instead.
// Only the simulation is timed (after the brick-local input is generated, before anything
// is written); baselines are timed the same way (after planning / input set-up).
//
// This piece links OpenBLAS and FFTW; the triada library itself never does.
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/types.hpp"
#include "geometry/plan.hpp"

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
};

// Parses the command line. Returns nothing after writing --help to `help`; throws
// config_error with one line for a bad option or value.
std::optional<BenchConfig> parse_bench_options(int argc, char** argv, std::ostream& help,
                                               int world_size);

// The body of triada-bench under run_app (collective over MPI_COMM_WORLD).
int run_bench(int argc, char** argv);

// The OpenBLAS measurement runs in a child process of the bench (OpenBLAS reads
// OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE when it loads, so the child gets an environment
// without them): `triada-bench --openblas-child N1xN2xN3 REPS TRANSFORM SEED`, no MPI.
// It prints one JSON line on stdout: {"seconds", "corename", "config", "threads"}.
bool is_openblas_child(int argc, char** argv);
int run_openblas_child(int argc, char** argv);

}  // namespace triada
