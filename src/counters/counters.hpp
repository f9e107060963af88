#pragma once
// Exact event counters (DESIGN.md §3), declared once as a table (STYLE.md #5).
// Every counter is an exact 64-bit integer, summed over ranks.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "geometry/plan.hpp"

namespace triada {

enum class Counter : int { x_bus_sends = 0, y_bus_sends, y_bus_receives, waits, macs, count_ };
inline constexpr int kCounters = static_cast<int>(Counter::count_);

struct CounterInfo {
  const char* name;
  const char* description;
  const char* unit;
};
// Written definitions; README "Counters" repeats them.
inline constexpr std::array<CounterInfo, kCounters> kCounterTable{{
    {"x_bus_sends", "coefficient elements an actuator put on the X-bus (one per vector element)",
     "elements"},
    {"y_bus_sends", "pivot cells that drove their Y line", "cells"},
    {"y_bus_receives", "non-pivot cells that took a value off their Y line and updated", "cells"},
    {"waits", "cells that got a coefficient but no value on their Y line (ESOP)", "cells"},
    {"macs", "multiply-adds W += y * c done by cells", "updates"},
}};

using CounterArray = std::array<std::uint64_t, kCounters>;

// One time step: which stage, which row of C (the pivot position), and its events.
struct StepRecord {
  int stage = 0;      // index into plan.stages
  index_t pivot = 0;  // row t of C_axis, position of the tag
  CounterArray n{};
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
  std::vector<StepRecord> steps;      // in execution order
  std::vector<StageTotals> stages;    // per stage, in stage order
  std::vector<StageTraffic> mpi_stages = std::vector<StageTraffic>(3);  // per stage
  MpiTraffic mpi_control;             // control tokens between actuators
  std::vector<double> stage_seconds;  // wall time of each stage (max over ranks); not exact
  int substeps = 1;                   // cell sub-steps per time step (precision mode)
  std::uint64_t total_steps() const;
  std::uint64_t total_cycles() const;
  std::uint64_t total(Counter c) const;
  std::uint64_t by_bus(Counter c, Bus b, const Plan& plan) const;  // bus of the counter's role
  MpiTraffic mpi_bus(Bus b, const Plan& plan) const;  // X and Y traffic carried for bus b
  MpiTraffic mpi_total() const;
};

// What dense mode does on this plan, in closed form (DESIGN.md §3):
// steps N_a; x_bus_sends N_a * max(N_a, K_a); y_bus_sends N_a * lines;
// macs (= macs_dense) N_a * K_a * lines; y_bus_receives lines * (N_a K_a - min(N_a, K_a));
// waits 0; per stage, lines = product of the other two extents of V; cycles = steps times
// the largest block of a physical cell (folded meshes).
std::vector<StageTotals> dense_counters(const Plan& plan, int substeps = 1);
std::uint64_t macs_dense(const Plan& plan);

// Energy model (pJ), per-event energies from the mesh config's [energy] section.
struct EnergyModel {
  double mac_pj = 0;
  double x_bus_send_pj = 0;
  double y_bus_send_pj = 0;
  double y_bus_receive_pj = 0;
  double wait_pj = 0;
  double static_pj_per_cell_step = 0;
};
struct EnergyBreakdown {
  double mac = 0, x_bus = 0, y_bus_send = 0, y_bus_receive = 0, wait = 0, static_ = 0;
  double total() const { return mac + x_bus + y_bus_send + y_bus_receive + wait + static_; }
};
// cells = P1 * P2 * P3 (every physical cell leaks for every cycle; cycles = steps unfolded).
EnergyBreakdown energy_of(const std::vector<StageTotals>& stages, const EnergyModel& e,
                          std::uint64_t cells);

}  // namespace triada
