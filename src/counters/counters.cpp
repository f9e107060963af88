#include "counters/counters.hpp"

#include <algorithm>

#include "core/checked.hpp"

namespace triada {

std::uint64_t RunCounters::total_steps() const {
  std::uint64_t s = 0;
  for (const auto& st : stages) s += st.steps;
  return s;
}

std::uint64_t RunCounters::total_cycles() const {
  std::uint64_t s = 0;
  for (const auto& st : stages) s += st.cycles;
  return s;
}

std::uint64_t RunCounters::total(Counter c) const {
  std::uint64_t s = 0;
  for (const auto& st : stages) s += st[c];
  return s;
}

std::uint64_t RunCounters::by_bus(Counter c, Bus b, const Plan& plan) const {
  std::uint64_t s = 0;
  for (size_t i = 0; i < stages.size(); ++i) {
    const StagePlan& sp = plan.stages[i];
    const BusRole role = counter_info(c).bus;
    if (role == BusRole::none) continue;
    if ((role == BusRole::x ? sp.x_bus() : sp.y_bus()) == b) s += stages[i][c];
  }
  return s;
}

MpiTraffic RunCounters::mpi_bus(Bus b, const Plan& plan) const {
  MpiTraffic t;
  for (size_t i = 0; i < mpi_stages.size() && i < plan.stages.size(); ++i) {
    if (plan.stages[i].x_bus() == b) t.add(mpi_stages[i].x.messages, mpi_stages[i].x.bytes);
    if (plan.stages[i].y_bus() == b) t.add(mpi_stages[i].y.messages, mpi_stages[i].y.bytes);
  }
  return t;
}

MpiTraffic RunCounters::mpi_total() const {
  MpiTraffic t = mpi_control;
  for (const auto& m : mpi_stages) {
    t.add(m.x.messages, m.x.bytes);
    t.add(m.y.messages, m.y.bytes);
  }
  return t;
}

std::vector<StageTotals> dense_counters(const Plan& plan, int substeps) {
  std::vector<StageTotals> out;
  for (const StagePlan& s : plan.stages) {
    using u64 = std::uint64_t;
    const u64 n = static_cast<u64>(s.n()), k = static_cast<u64>(s.k()),
              lines = static_cast<u64>(s.lines());
    // Checked: a report must never show a wrapped count.
    const std::string what = "dense counters of the stage along axis " + std::to_string(s.axis);
    auto mul = [&](u64 a, u64 b) { return checked_mul(a, b, what); };
    StageTotals t;
    t.axis = s.axis;
    t.steps = n;
    // Dense keeps each physical cell busy with its whole block (first blocks are largest).
    u64 busiest = 1;
    for (int d = 0; d < 3; ++d)
      busiest = mul(busiest, static_cast<u64>(std::min(plan.fold[d], s.out_shape[d])));
    t.cycles = mul(mul(n, busiest), static_cast<u64>(substeps));
    t.n[static_cast<int>(Counter::x_bus_sends)] = mul(n, std::max(n, k));
    t.n[static_cast<int>(Counter::y_bus_sends)] = mul(n, lines);
    t.n[static_cast<int>(Counter::y_bus_receives)] = mul(lines, mul(n, k) - std::min(n, k));
    t.n[static_cast<int>(Counter::waits)] = 0;
    t.n[static_cast<int>(Counter::macs)] = mul(mul(n, k), lines);
    out.push_back(t);
  }
  return out;
}

std::uint64_t macs_dense(const Plan& plan) {
  std::uint64_t s = 0;
  for (const auto& t : dense_counters(plan)) s += t[Counter::macs];
  return s;
}

RunCounters dense_run_counters(const Plan& plan, int substeps) {
  RunCounters rc;
  rc.stages = dense_counters(plan, substeps);
  rc.substeps = substeps;
  for (size_t s = 0; s < rc.stages.size(); ++s) {
    const StagePlan& sp = plan.stages[s];
    const auto n = static_cast<std::uint64_t>(sp.n()), k = static_cast<std::uint64_t>(sp.k()),
               lines = static_cast<std::uint64_t>(sp.lines());
    const std::uint64_t busiest = rc.stages[s].cycles / n / static_cast<std::uint64_t>(substeps);
    // Steps t < K_a hold a pivot among their K_a cells, which receives nothing; later ones not.
    for (const bool pivot_inside : {true, false}) {
      StepRecord r;
      r.stage = static_cast<int>(s);
      r.pivot = pivot_inside ? 0 : static_cast<index_t>(std::min(n, k));
      r.repeat = pivot_inside ? std::min(n, k) : n - std::min(n, k);
      if (r.repeat == 0) continue;
      r[Counter::x_bus_sends] = std::max(n, k);
      r[Counter::y_bus_sends] = lines;
      r[Counter::macs] = k * lines;  // no overflow: the stage's total was checked
      r[Counter::y_bus_receives] = lines * (k - (pivot_inside ? 1 : 0));
      r.busiest = busiest;
      rc.steps.push_back(r);
    }
  }
  return rc;
}

EnergyBreakdown energy_of(const std::vector<StageTotals>& stages, const EnergyModel& e,
                          std::uint64_t cells) {
  EnergyBreakdown b;
  std::uint64_t cycles = 0;
  for (const auto& s : stages) {
    for (int c = 0; c < kCounters; ++c) b.pj[c] += e.pj[c] * double(s.n[c]);
    cycles += s.cycles;
  }
  b.static_ = e.static_pj_per_cell_step * double(cells) * double(cycles);
  return b;
}

}  // namespace triada
