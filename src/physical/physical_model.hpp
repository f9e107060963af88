#pragma once
// The physical model (doc/physical.md): what the exact counters of a run cost in seconds,
// joules and square millimetres on a given technology node. Plain data in, plain data out:
// parameters (the mesh config's [technology], [timing], [energy] and [area] keys, all given
// at the 45 nm baseline and scaled to the node), the plan and the run's counters.
// TriADA paper, Sec. 6 and Fig. 5: "the critical path of the local processing defines the
// time-step period, which is common or global for all cells"; this model puts numbers on
// that path (X-bus, Y-bus, MAC, latch) instead of assuming one step per cycle.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "physical/offchip.hpp"
#include "physical/technology.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// How a value crosses a line of n cells (doc/physical.md §2).
enum class BusModel { ideal, repeated, rc, tree, pipelined };
// global: one clock, the slowest stage's period; per_stage: each stage its own period.
enum class ClockMode { global, per_stage };
// per_event: the [energy] *_pj figure per bus event; wire: driver + wire per line length.
enum class WireEnergy { per_event, wire };
// stacked: P3 tiers of P1 x P2 cells, axis-3 lines vertical; planar: one die, cell
// (i1, i2, i3) at column i1, row i2 P3 + i3.
enum class Layout { stacked, planar };

std::string to_string(BusModel m);
std::string to_string(ClockMode m);
std::string to_string(WireEnergy m);
std::string to_string(Layout m);
BusModel parse_bus_model(const std::string& s);  // throws config_error listing the choices
ClockMode parse_clock_mode(const std::string& s);
WireEnergy parse_wire_energy(const std::string& s);
Layout parse_layout(const std::string& s);

// Per cell mode, at 45 nm (key names and sources in kModePhysicalTable): one sub-step of its
// MAC unit (a pipelined unit's issue interval), the unit's area, and a pipelined unit's
// latency (null key: unpipelined, the sub-step is its latency).
struct ModePhysical {
  CellMode mode;
  const char* mac_ps_key;
  const char* mac_ps_default;
  const char* mac_um2_key;
  const char* mac_um2_default;
  const char* latency_ps_key = nullptr;
  const char* latency_ps_default = nullptr;
};
extern const std::array<ModePhysical, kCellModes> kModePhysicalTable;

struct TechnologyParams {
  int node_nm = 45;
  std::optional<double> vdd;  // none: the node's nominal VDD
  // Each factor, if given, replaces the one of the scaling tables.
  std::optional<double> delay_factor, energy_factor, power_factor, area_factor;
  bool operator==(const TechnologyParams&) const = default;
};

struct TimingParams {
  BusModel bus_model = BusModel::repeated;
  ClockMode clock = ClockMode::global;
  double driver_ps = 50;         // line driver (repeated, rc) or one hop's (pipelined)
  double wire_ps_per_mm = 80;    // optimally repeated wire
  double wire_ohm_per_mm = 730;  // unrepeated wire (rc)
  double wire_ff_per_mm = 200;
  double stage_ps = 50;                             // one level of a buffered fan-out tree
  double overhead_ps = 60;                          // latch and control per period
  std::array<double, kCellModes> mac_ps{};          // one sub-step of each mode's MAC
  std::array<double, kCellModes> mac_latency_ps{};  // pipelined units' latency; 0: unpipelined
  std::optional<std::uint64_t> actuator_heads;      // none: a whole row per period
  std::uint64_t control_cycles = 1;                 // per hand-over between actuators
  bool operator==(const TimingParams&) const = default;
};

struct WireEnergyParams {
  WireEnergy model = WireEnergy::per_event;
  double driver_fj_per_bit = 5;
  double wire_fj_per_bit_mm = 100;
  double leakage_uw_per_cell = 50;
  bool operator==(const WireEnergyParams&) const = default;
};

struct AreaParams {
  Layout layout = Layout::stacked;
  std::array<double, kCellModes> mac_um2{};
  double bit_um2 = 4.522;               // one register bit (a flip-flop)
  double wire_pitch_um = 0.28;          // one bus track
  double via_um2_per_bit = 25;          // one vertical (axis-3) bus bit through a tier, stacked
  double tier_pitch_um = 20;            // vertical distance between tiers, stacked
  std::optional<double> cell_pitch_um;  // none: derived from the cell's area
  bool operator==(const AreaParams&) const = default;
};

// The die around the mesh (doc/physical.md §4.1-4.3): a budget, the cells' storage and the
// actuators' memories. Modelled only when `modelled()`: without [chip] keys the model is the
// bare mesh of §4. The SRAM constants are 45 nm values, scaled as the other constants.
struct ChipParams {
  std::optional<double> area_mm2;      // the die's budget; none: the chip is priced, not sized
  std::optional<double> power_w;       // none: the clock is never capped
  std::optional<ext3> mesh;            // fixes the mesh (priced against the budget)
  index_t max_tiers = 2;               // stacked layout: P3 at most (one die each)
  std::optional<double> actuator_kib;  // each actuator's memory; none: it holds its C_s
  double overhead_fraction = 0.2;      // of what is built: I/O, clocking, power, PHYs
  std::array<double, 2> max_die_mm{26, 33};  // the outline a die may have: a reticle
  double spare_fraction = 0.0909;            // spare cells per used one (12/132), for yield
  std::uint64_t register_words = 32;         // a cell's V and W words held in flip-flops, at most
  double sram_port_factor = 2;               // a cell's SRAM: 3 accesses a MAC want ports or banks
  double leakage_mw_per_mm2 = 31.5;          // the die's logic, buses and overhead, at 45 nm
  double clock_fraction = 0.25;              // the clock network's share of the dynamic power
  double sram_um2_per_bit = 0.692;           // an SRAM bit with its share of the macro
  double sram_fj_per_bit = 156.25;           // one bit read or written
  double sram_leakage_pw_per_bit = 1000;
  bool modelled() const { return area_mm2 || power_w || mesh; }
  bool operator==(const ChipParams&) const = default;
};

struct PhysicalParams {
  TechnologyParams technology;
  TimingParams timing;
  WireEnergyParams energy;
  AreaParams area;
  ChipParams chip;
  MemoryParams memory;
  PhysicalParams();  // the built-in defaults (= meshcfg/default.ini)
  bool operator==(const PhysicalParams&) const = default;
};

// A stage's critical path (ps): the paper's Fig. 5 path through one cell.
struct CriticalPath {
  double x_bus = 0, y_bus = 0, mac = 0, overhead = 0;
  double total() const { return x_bus + y_bus + mac + overhead; }
};

struct StagePhysical {
  int axis = 0;
  CriticalPath path;
  double period_ps = 0;              // the period this stage runs at (global: the chip's)
  std::uint64_t busiest = 1;         // MACs of the busiest cell in any step (folding)
  std::uint64_t stream_cycles = 0;   // periods of the steps (actuator heads included)
  std::uint64_t fill_cycles = 0;     // pipelined buses: (n_x - 1) + (n_y - 1)
  std::uint64_t control_cycles = 0;  // hand-over into this stage
  std::uint64_t cycles() const { return stream_cycles + fill_cycles + control_cycles; }
  double seconds = 0;
  double x_line_mm = 0, y_line_mm = 0;
  std::uint64_t x_line_cells = 0, y_line_cells = 0;
};

struct PhysicalEnergy {                             // joules
  double mac = 0, x_bus = 0, y_bus = 0, cells = 0;  // cells: receives and waits
  double storage = 0, actuator_memories = 0;        // SRAM accesses (chip only)
  double clock = 0;                                 // the clock network (chip only)
  double off_chip = 0;                              // [memory] traffic
  double static_ = 0;
  double on_die() const { return mac + x_bus + y_bus + cells + storage + actuator_memories; }
  double dynamic() const { return on_die() + clock + off_chip; }
  double total() const { return dynamic() + static_; }
};

struct PhysicalArea {  // mm^2
  double cells = 0, buses = 0;
  // Chip only: cells is then the MAC and operand latches, storage their V and W words;
  // spares the spare cells' logic, storage and buses.
  double storage = 0, actuator_memories = 0, overhead = 0, spares = 0;
  double total() const { return cells + buses + storage + actuator_memories + overhead + spares; }
  double footprint = 0;  // die area: one tier (stacked) or the whole mesh (planar)
};

// A cell's V and W words (doc/physical.md §4.2): flip-flops up to register_words, an SRAM
// macro beyond. `block`: the virtual cells it holds (the fold's product, or a tile's).
struct CellStorage {
  std::uint64_t words = 0;  // 2 block
  std::uint64_t bits = 0;
  bool sram = false;
  double um2 = 0;         // at the node
  double fj_per_mac = 0;  // read W, write W, read V (SRAM; flip-flops: in the MAC's energy)
  double leakage_w = 0;   // per cell (SRAM; flip-flops: in leakage_uw_per_cell)
};
CellStorage cell_storage(std::uint64_t block, int word_bits, const ChipParams& c,
                         const AreaParams& a, const NodeScaling& s);

// The actuators' memories (doc/physical.md §4.3): the N_s x K_s words of C_s each streams.
struct ActuatorMemory {
  int axis = 0;
  std::uint64_t words = 0, bits = 0;    // its capacity
  std::uint64_t coefficient_words = 0;  // N_s x K_s
  bool holds = true;  // C_s fits; else it streams from off-chip memory, tile by tile
  std::uint64_t heads = 0;
  double um2 = 0;
  double gbytes_per_s = 0;  // heads x word x clock
};

struct ChipResult {
  std::optional<double> budget_mm2, budget_w;
  CellStorage storage;
  std::vector<ActuatorMemory> actuators;
  double power_uncapped_w = 0;
  double stretch = 1;                  // period x stretch fits power_w
  bool power_fits = true;              // false: leakage alone exceeds power_w
  std::string bound;                   // what chose the mesh (set by the sizer's caller)
  std::array<double, 2> outline_mm{};  // one die's short and long edge
};

// The off-chip traffic of a run (doc/physical.md §4.4), with [memory] kind set.
// A pass's time splits as doc/physical.md §4.5 says what overlaps: its held coefficients
// load first, then each tile loads (its first stage consuming the planes as they arrive),
// computes and stores (no W is final before the last step).
struct OffChipPass {
  PassTraffic traffic;
  double compute_seconds = 0, memory_seconds = 0;
  double coefficient_seconds = 0;  // held coefficients, before the first tile
  double load_seconds = 0;         // the tensor it reads (and coefficients streamed per tile)
  double store_seconds = 0;        // what its last stage writes
  double first_stage_seconds = 0;  // compute of its first stage (all tiles)
  std::uint64_t first_stage_steps = 1;
  double seconds = 0;  // end to end: compute and the memory time it does not hide
};
// One pass end to end with its compute stretched by k (doc/physical.md §4.5).
double pass_seconds(const OffChipPass& ps, Overlap o, double k = 1);
struct OffChipResult {
  int passes = 1;                // over the tensor: 1 when it fits on chip
  std::uint64_t held_block = 1;  // virtual cells a cell holds (its tile)
  double bytes_read = 0, bytes_written = 0, coefficient_bytes = 0;
  double compute_seconds = 0, memory_seconds = 0;  // seconds: PhysicalResult::seconds
  double flops_per_byte = 0;                       // operational intensity: 2 MACs / off-chip bytes
  double compute_flops = 0;         // the mesh's modelled rate: 2 MACs / compute_seconds
  double ridge_flops_per_byte = 0;  // compute_flops / bandwidth
  bool memory_bound = false;        // memory_seconds > compute_seconds
  std::vector<OffChipPass> per_pass;
};

// [optimistic, nominal, pessimistic] seconds and joules of a run (physical/band.hpp).
struct PhysicalRange {
  std::array<double, 3> seconds{}, energy_j{};
};

struct PhysicalResult {
  NodeScaling node;
  CellMode mode = CellMode::fp64;
  bool complex_data = false;
  double period_ps = 0;    // the chip's clock (global) or the longest stage period
  int critical_stage = 0;  // index into stages of the longest period
  std::vector<StagePhysical> stages;
  std::vector<double> step_ps;  // duration of one step of each record of rc.steps
  double seconds = 0;
  double throughput_gmacs = 0;
  // Real FLOP/s of the mesh at its clock: 2 per real FMA (a complex MAC is 4 of them), every
  // cell as busy as the critical stage's busiest one.
  double peak_flops = 0;
  PhysicalEnergy energy;
  double power_w = 0;
  double edp_js = 0;
  PhysicalArea area;
  double cell_pitch_um = 0;
  int word_bits = 64;
  std::array<double, 3> hop_um{};       // distance between neighbouring cells per axis
  std::optional<ChipResult> chip;       // with [chip] keys
  std::optional<OffChipResult> memory;  // with [memory] kind set; seconds is then end to end
  std::optional<PhysicalRange> range;   // with [chip] or [memory]: set by with_range
};

// The model applied to a finished run. `energy` holds the per-event energies ([energy]
// *_pj, 45 nm) and the run's MAC energy; `complex_data` doubles the word and follows the
// mode's complex sub-steps; `initial`: the run reads Y0 (off-chip traffic only).
PhysicalResult physical_model(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                              const EnergyModel& energy, CellMode mode, bool complex_data,
                              bool initial = false);

// A word of the mode: 64 bits for fp64, 32 for the others, doubled for complex data.
int word_bits_of(CellMode mode, bool complex_data);

// The die a plan needs under p.chip, without counters (doc/physical.md §4.1): its area
// (the overhead included), the storage's share (cells' V and W and the actuator memories)
// and its leakage; `fits` the area and power budgets given. With [memory] kind set and an
// area budget, the cells hold the tile of the fewest passes (§4.4) that fits, or of the
// most passes where none does.
struct ChipFit {
  double area_mm2 = 0, storage_mm2 = 0, leakage_w = 0;
  std::array<double, 2> outline_mm{};  // one die's short and long edge
  int passes = 1;
  bool fits = true;
};
// Whether an outline (short, long edge) fits within max_die_mm, either way round.
bool outline_fits(const std::array<double, 2>& outline, const ChipParams& c);
ChipFit chip_fit(const Plan& plan, const PhysicalParams& p, CellMode mode, bool complex_data);

// Delay (ps) of a line of n cells and length mm under model m, before technology scaling
// of its gate terms (which `physical_model` applies): the closed forms of doc/physical.md §2.
double line_delay_ps(BusModel m, std::uint64_t n, double mm, const TimingParams& t,
                     double delay_factor);

}  // namespace triada
