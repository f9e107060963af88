#pragma once
// The MPI traffic of a dense run (ESOP off), from the plan alone: what the engine's `mpi`
// counters report (doc/design.md §8.6), message for message and byte for byte. With ESOP
// on, the traffic depends on the data (zero rows and planes are not sent).
#include <cstddef>
#include <vector>

#include "counters/counters.hpp"
#include "geometry/plan.hpp"

namespace triada {

// How the executor moves pivot planes: fused (each owner's plane as one payload) or
// reference (each step's pivot values preceded by their count, on every line group).
enum class PivotMessages { planes, counted };

// Sets rc.mpi_stages (one per stage of the plan) and rc.mpi_control for elements of
// `element_bytes` (8 real, 16 complex).
void dense_mpi_traffic(const Plan& plan, std::size_t element_bytes, PivotMessages pivots,
                       RunCounters& rc);

}  // namespace triada
