#pragma once
// Memory each rank of a triada-transform run needs, predicted from the plan alone (no
// MPI, nothing read), so a run that cannot fit is refused before it allocates; and what
// this machine has available. doc/errors.md "Errors" describes both.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "geometry/plan.hpp"

namespace triada {

struct MemoryModelOptions {
  std::size_t element_bytes = 8;  // sizeof(T): 8 real, 16 complex
  std::size_t cell_bytes = 24;    // sizeof(Cell<T>) (reference executor)
  bool reference = false;         // reference executor (a Cell per cell of the brick)
  bool check = false;             // --check: a copy of the input and a second run
  bool initial = false;           // the affine form's Y0: one output brick held through the run
  int coeff_copies = 1;           // matrices alive while one is built (gemt --inverse: 3)
  // World rank 0 opened the input's metadata before the run's baseline (the program; not
  // --model-only or in-memory tensors): it then holds HDF5's state already (--dry-run's
  // estimate only).
  bool hdf5_open_on_rank0 = true;
  bool matrices_from_file = false;  // gemt: an actuator rank reads its matrix (HDF5's state)
  // Every line lives on one node: lines of >= 2 bricks get a shared window. Otherwise
  // both a window and two batch buffers are counted (an upper bound), unless node_of_rank
  // says where each rank is.
  bool one_node = true;
  // The node of every world rank (its lowest world rank), where the run's placement is
  // known: a line has a window only where all its bricks share a node (Topology), else
  // two batch buffers. Empty: one_node decides for every line.
  std::vector<int> node_of_rank;
  // --transport broadcast: no line has a window (planes are broadcast, their batch buffers
  // counted as off a node).
  bool shared_windows = true;
  // The cells compute binary64 (CellMode::fp64): real stages along axes 1 and 2 pack
  // their planes through the windows' scratch; other modes read them in place.
  bool binary64_kernels = true;
};

struct MemoryPrediction {
  // Growth of resident memory after the setup (what the report's peak minus baseline
  // measures): registers, stage scratch, coefficient matrices, actuator stream, I/O.
  std::uint64_t run = 0;
  std::uint64_t registers = 0;  // the brick registers alone (part of run)
  // The growth a run is expected to show (--dry-run's estimate of the measured peak): run
  // without the fixed allowance and the upper bounds, with what was measured in their place.
  std::uint64_t expected = 0;
  std::uint64_t window_own = 0;     // this rank's segments of the shared windows
  std::uint64_t window_mapped = 0;  // what it maps of every segment (its own and its
                                    // partners') at setup
  std::uint64_t node_share() const { return run + window_own; }  // what it adds to its node
};

// Fixed allowance for what the model does not count buffer by buffer: MPI-IO's
// collective buffer (ROMIO: 16 MiB), HDF5's chunk cache and conversion buffers, MPI's
// own state, the packing panels. Measured: 5 to 15 MiB above the registers at np 1 to 3.
inline constexpr std::uint64_t kMemoryModelFixedBytes = std::uint64_t{24} << 20;
// --dry-run's estimate of the measured growth (MemoryPrediction::expected) counts, in place
// of kMemoryModelFixedBytes, what runs of 0.2 to 25 MiB bricks measured above the registers,
// scratch and streams (Open MPI 4.1, HDF5 1.10, one node): one rank alone 1 MiB; a brick rank
// of several 3.5 MiB for HDF5's state and MPI-IO when it first opens the input, and per axis
// its line communicators span 1.5 MiB plus its brick's bytes, at most 3.5 MiB (MPI's
// buffers of the line); an actuator rank 1.5 MiB, and the 3.5 MiB if it reads a gemt matrix. Not
// counted: ROMIO's collective buffer (up to 16 MiB) on the aggregating rank while it reads an input
// whose bricks interleave in the file (a grid split along axis 3).
inline constexpr std::uint64_t kExpectedOneRankBytes = std::uint64_t{1} << 20;
inline constexpr std::uint64_t kExpectedIoBytes = std::uint64_t{7} << 19;
inline constexpr std::uint64_t kExpectedLineBaseBytes = std::uint64_t{3} << 19;
inline constexpr std::uint64_t kExpectedLineBytes = std::uint64_t{7} << 19;
inline constexpr std::uint64_t kExpectedActuatorBytes = std::uint64_t{3} << 19;
// Packing scratch after each member's segment of a shared window (must equal
// Topology::kLineScratchBytes; node_memory.cpp checks).
inline constexpr std::uint64_t kWindowScratchBytes = std::uint64_t{3} << 20;

// Prediction for world rank r of the plan. Throws input_error (naming `what`) if a
// size overflows 64 bits.
MemoryPrediction predict_memory(const Plan& plan, int world_rank, const MemoryModelOptions& opt,
                                const std::string& what);

// Memory this process may still use: TRIADA_MEMORY_LIMIT (bytes) if set, else the
// smaller of MemAvailable (/proc/meminfo) and the cgroup's limit minus its usage
// (v2 memory.max / memory.current, or v1 memory.limit_in_bytes / memory.usage_in_bytes).
struct AvailableMemory {
  std::uint64_t bytes = 0;
  std::string source;  // "MemAvailable", "cgroup limit", "TRIADA_MEMORY_LIMIT"
};
AvailableMemory available_memory();

// Memory figures in text are MiB (2^20 bytes) whatever their size (doc/design.md §5.8):
// mib gives the number, 1 decimal from 10 MiB, else 3 significant digits ("36044.8",
// "812.0", "0.954", "0.000488"); format_bytes adds " MiB".
std::string mib(double bytes);
std::string format_bytes(std::uint64_t bytes);
std::string format_bytes(double bytes);

// Throws input_error "<what>: needs X, Y available (source)" if one process would need
// more than is available (for single-process allocations from a user's size).
void require_memory(std::uint64_t bytes, const std::string& what);

}  // namespace triada
