#pragma once
// One check per TcuCost field, so a failure names the counter that differs (the executors,
// chains and work-unit splits promise exactly equal counters).
#include "mxu/tensor_unit.hpp"
#include "support/catch.hpp"

namespace triada {

inline void check_same_cost(const TcuCost& a, const TcuCost& b) {
  CHECK(a.calls == b.calls);
  CHECK(a.tensor_time == b.tensor_time);
  CHECK(a.cpu_time == b.cpu_time);
  CHECK(a.rows == b.rows);
  CHECK(a.cell_steps == b.cell_steps);
  CHECK(a.macs == b.macs);
  CHECK(a.macs_dense == b.macs_dense);
  CHECK(a.cycles == b.cycles);
}

}  // namespace triada
