#pragma once
// The band (doc/physical.md §4.6): where a constant of the chip model is uncertain it has an
// optimistic and a pessimistic value beside the nominal one, each with its source. The model
// run at the two corners, every uncertain constant at its optimistic (or pessimistic) value
// at once, brackets the nominal result: physical.range = [optimistic, nominal, pessimistic].
// The corners change time and energy constants only, so the die (the mesh, its area and
// outline) is the nominal one.
#include <array>
#include <vector>

#include "counters/counters.hpp"
#include "geometry/plan.hpp"
#include "physical/physical_model.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

enum class Corner { optimistic, pessimistic };

// One uncertain constant: its corners as the report states them (a factor of the nominal
// value, or the value itself where `absolute`), and where each comes from.
struct BandConstant {
  const char* name;
  double optimistic, pessimistic;
  bool absolute;
  const char* source;
};
const std::vector<BandConstant>& band_constants();

// The parameters and per-event energies of a run at a corner.
void at_corner(Corner c, CellMode mode, PhysicalParams& p, EnergyModel& em);

// PhysicalRange of the run; `nominal` is the model's result for (p, em).
PhysicalRange physical_range(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                             const EnergyModel& em, CellMode mode, bool complex_data, bool initial,
                             const PhysicalResult& nominal);

// The model's result with its range where the run prices a chip or its memory: what the
// programs report.
PhysicalResult with_range(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                          const EnergyModel& em, CellMode mode, bool complex_data,
                          bool initial = false);

}  // namespace triada
