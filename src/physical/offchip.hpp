#pragma once
// Off-chip memory (doc/physical.md §4.4): its kind's bandwidth and energy per bit, the passes
// a tiled run makes over the tensor, and the bytes each pass moves, in closed form from the
// plan. kind = none leaves the model as it was: the tensor already inside the cells.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "geometry/plan.hpp"

namespace triada {

enum class MemoryKind { none, hbm3, hbm2e, ddr5 };
// none: the memory's time adds to the compute's; double_buffer: each pass takes the longer.
enum class Overlap { none, double_buffer };

std::string to_string(MemoryKind k);
std::string to_string(Overlap o);
MemoryKind parse_memory_kind(const std::string& s);  // throws config_error listing the choices
Overlap parse_overlap(const std::string& s);

// A kind's published figures per chip (sources: meshcfg/default.ini, doc/physical.md §6).
struct MemoryKindFigures {
  double gbps = 0;  // GB/s, 1e9 bytes per second
  double pj_per_bit = 0;
};
MemoryKindFigures memory_kind_figures(MemoryKind k);

struct MemoryParams {
  MemoryKind kind = MemoryKind::none;
  std::optional<double> gbps, pj_per_bit;  // override the kind's (peak; the device's side)
  Overlap overlap = Overlap::none;
  double efficiency = 0.887;     // the share of the peak a streaming access achieves
  double host_pj_per_bit = 1.0;  // the chip's side: PHY, controller, on-die distribution
  bool modelled() const { return kind != MemoryKind::none; }
  double bandwidth_gbps() const { return gbps.value_or(memory_kind_figures(kind).gbps); }
  double achieved_gbps() const { return bandwidth_gbps() * efficiency; }
  double energy_pj_per_bit() const {
    return pj_per_bit.value_or(memory_kind_figures(kind).pj_per_bit);
  }
  double total_pj_per_bit() const { return energy_pj_per_bit() + host_pj_per_bit; }
  bool operator==(const MemoryParams&) const = default;
};

// The stages (indices into plan.stages) each of `passes` passes runs: one pass all of
// them; two the first two, then the last; three one each.
std::vector<std::vector<int>> pass_stages(const Plan& plan, int passes);

// Virtual cells a cell holds in a run of `passes` passes: the whole fold for one pass;
// else the largest of the passes' tiles, each whole along its stages' axes and one mesh
// extent along the others, doubled when double-buffered.
std::uint64_t held_block(const Plan& plan, int passes, Overlap overlap);

// The tiles a pass runs: one mesh extent along each axis its stages do not transform.
std::uint64_t pass_tiles(const Plan& plan, const std::vector<int>& stages);

// The bytes one pass moves: it reads the tensor its first stage takes (X in the first
// pass; Y0 too in the last, with `initial`) and the coefficients of its stages, and writes
// what its last stage gives (Y in the last). C_s is read once into its actuator's memory,
// or, where it exceeds `actuator_bytes`, streamed again for every tile of the pass.
struct PassTraffic {
  std::vector<int> stages;
  double bytes_read = 0, bytes_written = 0, coefficient_bytes = 0;  // read includes coefficients
  double held_coefficient_bytes = 0;  // loaded once into the actuators, before the first tile
  std::uint64_t tiles = 1;            // pass_tiles: the tiles it runs one after another
};
std::vector<PassTraffic> pass_traffic(const Plan& plan, int passes, int word_bits, bool initial,
                                      std::optional<double> actuator_bytes = std::nullopt);

}  // namespace triada
