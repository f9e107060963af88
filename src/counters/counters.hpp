#pragma once
// Exact event counters (doc/design.md §3), declared once as a table (doc/design.md §10.5).
// Every counter is an exact 64-bit integer, summed over ranks.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "counters/time_split.hpp"
#include "geometry/plan.hpp"

namespace triada {

enum class Counter : int { x_bus_sends = 0, y_bus_sends, y_bus_receives, waits, macs, count_ };
inline constexpr int kCounters = static_cast<int>(Counter::count_);

// Which of a stage's two buses carries a counter's events (the report splits them by
// physical bus H/L/F); none: events inside the cells, reported as a total.
enum class BusRole { x, y, none };

// A term of the energy model (pJ): its [energy] key (also the report's energy_pj.model
// key), its key in energy_pj.*_breakdown, its built-in value as written (the value in
// meshcfg/default.ini; nullptr: per cell mode, see below) and its help line.
struct EnergyTerm {
  const char* key;
  const char* part;
  const char* default_pj;
  const char* help;
};

struct CounterInfo {
  Counter counter;
  const char* name;  // in the report, the trace CSV and doc/model.md "Counters"
  const char* unit;
  const char* description;  // written definition; doc/model.md "Counters" repeats it
  BusRole bus;
  EnergyTerm energy;  // energy of one event
};
// Every counter, declared once: the report, the trace CSV, the energy model and the
// [energy] keys are generated from this table. A MAC's energy depends on the cell mode:
// its keys, defaults and help are the cell modes' (kCellModeTable); mac_pj is fp64's.
inline constexpr std::array<CounterInfo, kCounters> kCounterTable{{
    {Counter::x_bus_sends,
     "x_bus_sends",
     "elements",
     "coefficient elements an actuator put on the X-bus (one per vector element)",
     BusRole::x,
     {"x_bus_send_pj", "x_bus", "6.4",
      "energy of one coefficient element multicast on an X-bus (pJ)"}},
    {Counter::y_bus_sends,
     "y_bus_sends",
     "cells",
     "pivot cells that drove their Y line",
     BusRole::y,
     {"y_bus_send_pj", "y_bus_send", "6.4", "energy of one pivot driving its Y line (pJ)"}},
    {Counter::y_bus_receives,
     "y_bus_receives",
     "cells",
     "non-pivot cells that took a value off their Y line and updated",
     BusRole::y,
     {"y_bus_receive_pj", "y_bus_receive", "0.5",
      "energy of one cell latching a value off its Y line (pJ)"}},
    {Counter::waits,
     "waits",
     "cells",
     "cells that got a coefficient but no value on their Y line (ESOP)",
     BusRole::y,
     {"wait_pj", "wait", "0.1", "energy of one cell waiting on an empty Y line (pJ)"}},
    {Counter::macs,
     "macs",
     "updates",
     "multiply-adds W += y * c done by cells",
     BusRole::none,
     {"mac_pj", "mac", nullptr, nullptr}},
}};
// Leakage: every physical cell, every cycle; not a counter.
inline constexpr EnergyTerm kStaticEnergy{
    "static_pj_per_cell_step", "static", "0.05",
    "static (leakage) energy of one cell for one time step (pJ)"};

// The table is indexed by the enum: row i describes Counter(i).
constexpr bool counter_table_in_order() {
  for (int i = 0; i < kCounters; ++i)
    if (static_cast<int>(kCounterTable[i].counter) != i) return false;
  return true;
}
static_assert(counter_table_in_order());

constexpr const CounterInfo& counter_info(Counter c) {
  return kCounterTable[static_cast<int>(c)];
}

using CounterArray = std::array<std::uint64_t, kCounters>;

// One time step: which stage, which row of C (the pivot position), and its events. A
// closed form describes `repeat` alike steps with one record (pivots pivot, pivot + 1, ...),
// so that a model of any size holds a few records a stage; a run records every step.
struct StepRecord {
  int stage = 0;      // index into plan.stages
  index_t pivot = 0;  // row t of C_axis, position of the tag
  std::uint64_t repeat = 1;
  CounterArray n{};  // the events of one of its steps
  // MACs of the busiest physical cell in this step (max over ranks, not summed): a folded
  // cell does its virtual cells' updates one after another, so the step lasts
  // cycles = max(1, busiest) cycles.
  std::uint64_t busiest = 0;
  std::uint64_t cycles() const { return busiest > 1 ? busiest : 1; }
  std::uint64_t& operator[](Counter c) { return n[static_cast<int>(c)]; }
  std::uint64_t operator[](Counter c) const { return n[static_cast<int>(c)]; }
};

// MPI traffic the simulation itself caused (not file I/O), logical point-to-point counts.
struct MpiTraffic {
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  void add(std::uint64_t msgs, std::uint64_t b) {
    messages += msgs;
    bytes += b;
  }
};

struct StageTotals {
  int axis = 0;
  std::uint64_t steps = 0;
  std::uint64_t cycles = 0;  // physical cycles: sum over steps of max(1, busiest)
  CounterArray n{};
  std::uint64_t operator[](Counter c) const { return n[static_cast<int>(c)]; }
};

// MPI traffic of one stage: actuator messages (X-bus) and pivot planes (Y-bus).
struct StageTraffic {
  MpiTraffic x;
  MpiTraffic y;
};

// Totals of a run (after reduction over ranks).
struct RunCounters {
  std::vector<StepRecord> steps;                                        // in execution order
  std::vector<StageTotals> stages;                                      // per stage, in stage order
  std::vector<StageTraffic> mpi_stages = std::vector<StageTraffic>(3);  // per stage
  MpiTraffic mpi_control;             // control tokens between actuators
  std::vector<double> stage_seconds;  // wall time of each stage (max over ranks); not exact
  // Where the brick ranks' time in each stage went (counters/time_split.hpp), and with
  // EngineOptions::record_batches every rank's pieces of each stage (on world rank 0).
  std::vector<StageTimeStats> stage_time;
  std::vector<BatchTime> batch_times;
  int substeps = 1;  // cell sub-steps per time step (precision mode)
  std::uint64_t total_steps() const;
  std::uint64_t total_cycles() const;
  std::uint64_t total(Counter c) const;
  // Events of c carried by bus b (the stage's X or Y bus, by c's role; no role: 0).
  std::uint64_t by_bus(Counter c, Bus b, const Plan& plan) const;
  MpiTraffic mpi_bus(Bus b, const Plan& plan) const;  // X and Y traffic carried for bus b
  MpiTraffic mpi_total() const;
};

// What dense mode does on this plan, in closed form (doc/design.md §3):
// steps N_a; x_bus_sends N_a * max(N_a, K_a); y_bus_sends N_a * lines;
// macs (= macs_dense) N_a * K_a * lines; y_bus_receives lines * (N_a K_a - min(N_a, K_a));
// waits 0; per stage, lines = product of the other two extents of V; cycles = steps times
// the largest block of a physical cell (folded meshes).
std::vector<StageTotals> dense_counters(const Plan& plan, int substeps = 1);
std::uint64_t macs_dense(const Plan& plan);
// A whole dense run as the engine would report it, without running it: the stage totals of
// dense_counters and its steps t (natural order) in at most two records a stage (memory
// and time independent of the sizes): max(N_a, K_a) X elements, `lines` Y sends,
// K_a x lines MACs, lines x (K_a - [t < K_a]) receives, the stage's busiest block: what
// dense mode (ESOP off) counts on any input.
RunCounters dense_run_counters(const Plan& plan, int substeps = 1);

// Energy model (pJ): per-event energies of each counter (kCounterTable's energy terms,
// from the mesh config's [energy] section) and the static term.
struct EnergyModel {
  std::array<double, kCounters> pj{};  // indexed by Counter
  double static_pj_per_cell_step = 0;
  double& operator[](Counter c) { return pj[static_cast<int>(c)]; }
  double operator[](Counter c) const { return pj[static_cast<int>(c)]; }
  double mac_pj() const { return (*this)[Counter::macs]; }
};
struct EnergyBreakdown {
  std::array<double, kCounters> pj{};  // events x energy, indexed by Counter
  double static_ = 0;
  double operator[](Counter c) const { return pj[static_cast<int>(c)]; }
  // MACs first, then the other counters in table order, then static: the order the
  // report's totals have always been summed in (floating-point sums depend on it).
  double total() const {
    double t = (*this)[Counter::macs];
    for (int c = 0; c < kCounters; ++c)
      if (c != static_cast<int>(Counter::macs)) t += pj[c];
    return t + static_;
  }
};
// cells = P1 * P2 * P3 (every physical cell leaks for every cycle; cycles = steps unfolded).
EnergyBreakdown energy_of(const std::vector<StageTotals>& stages, const EnergyModel& e,
                          std::uint64_t cells);

}  // namespace triada
