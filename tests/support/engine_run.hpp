#pragma once
// Test harness: runs the engine on a communicator from a whole tensor that every rank
// holds (tests only; the apps never do this) and gathers the whole result on every rank.
#include <mpi.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "engine/engine.hpp"
#include "geometry/plan.hpp"
#include "jobs/world_plan.hpp"
#include "mesh/topology.hpp"

namespace triada::test {

template <class T>
T from_cplx(const cplx& v) {
  if constexpr (is_complex_v<T>)
    return v;
  else
    return v.real();
}
template <class T>
std::vector<T> convert(const std::vector<cplx>& v) {
  std::vector<T> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = from_cplx<T>(v[i]);
  return out;
}
template <class T>
std::vector<cplx> to_cplx(const std::vector<T>& v) {
  return std::vector<cplx>(v.begin(), v.end());
}

struct RunSpec {
  std::array<CoeffMatrix, 3> c;  // C1, C2, C3
  Mode mode = Mode::esop;
  Executor executor = Executor::fused;
  CellMode cell_mode = CellMode::fp64;
  PivotTransport transport = PivotTransport::automatic;
  std::size_t batch_bytes = 0;  // automatic
  std::array<int, 3> order{3, 1, 2};
  std::uint64_t shuffle = 0;
  ActuatorPlacement placement = ActuatorPlacement::automatic;
  std::optional<std::array<int, 3>> grid;
  std::optional<ext3> mesh;
};

template <class T>
struct GlobalRun {
  std::vector<T> y;
  RunCounters rc;
  Plan plan;
};

inline Plan plan_for(MPI_Comm comm, const ext3& shape, const RunSpec& spec) {
  PlanRequest req;
  req.in_shape = shape;
  for (int a = 0; a < 3; ++a) req.out_shape[a] = spec.c[a].cols;
  req.mesh = spec.mesh;
  req.stage_order = spec.order;
  req.grid = spec.grid;
  req.actuators = spec.placement;
  return plan_for_world(comm, req);  // the programs' builder: world size, balanced grid
}

// The part of a whole tensor of `shape` (C order) inside `box`, in the box's C order.
template <class T>
std::vector<T> brick_of(const std::vector<T>& x, const ext3& shape, const Brick& box) {
  std::vector<T> in(static_cast<size_t>(box.count()));
  for (index_t i = box.lo[0]; i < box.hi[0]; ++i)
    for (index_t j = box.lo[1]; j < box.hi[1]; ++j)
      for (index_t l = box.lo[2]; l < box.hi[2]; ++l)
        in[box.local_offset(i, j, l)] = x[(i * shape[1] + j) * shape[2] + l];
  return in;
}

// y0 (optional): the affine form's initial output, a whole tensor of the output's shape.
template <class T>
GlobalRun<T> run_global(MPI_Comm comm, const std::vector<T>& x, const ext3& shape,
                        const RunSpec& spec, const std::vector<T>* y0 = nullptr) {
  GlobalRun<T> g;
  g.plan = plan_for(comm, shape, spec);
  Topology topo(g.plan, comm, sizeof(T));
  std::vector<T> in = brick_of(x, shape, topo.cells().intersect(whole(shape)));
  std::vector<T> y0_brick;
  if (y0)
    y0_brick = brick_of(*y0, g.plan.out_shape, topo.cells().intersect(whole(g.plan.out_shape)));
  EngineOptions opt;
  opt.mode = spec.mode;
  opt.executor = spec.executor;
  opt.cell_mode = spec.cell_mode;
  opt.pivot_transport = spec.transport;
  opt.plane_batch_bytes = spec.batch_bytes;
  opt.shuffle_seed = spec.shuffle;
  opt.coefficients = [&](int axis) { return spec.c[axis - 1]; };
  EngineResult<T> res = run_engine<T>(topo, opt, std::move(in), nullptr, y0 ? &y0_brick : nullptr);
  g.rc = res.counters;

  // Gather (box, values) of every rank; boxes are disjoint, so copying keeps every bit.
  std::vector<std::byte> mine(6 * sizeof(index_t) + res.out.size() * sizeof(T));
  std::memcpy(mine.data(), res.out_box.lo.data(), 3 * sizeof(index_t));
  std::memcpy(mine.data() + 3 * sizeof(index_t), res.out_box.hi.data(), 3 * sizeof(index_t));
  if (!res.out.empty())
    std::memcpy(mine.data() + 6 * sizeof(index_t), res.out.data(), res.out.size() * sizeof(T));
  int size = 1;
  MPI_Comm_size(comm, &size);
  int n = static_cast<int>(mine.size());
  std::vector<int> counts(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<std::byte> all(static_cast<size_t>(total));
  MPI_Allgatherv(mine.data(), n, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE,
                 comm);
  const ext3 out_shape = g.plan.out_shape;
  g.y.assign(static_cast<size_t>(out_shape[0] * out_shape[1] * out_shape[2]), T{});
  std::vector<char> seen(g.y.size(), 0);
  for (int r = 0; r < size; ++r) {
    Brick b;
    const std::byte* p = all.data() + displs[r];
    std::memcpy(b.lo.data(), p, 3 * sizeof(index_t));
    std::memcpy(b.hi.data(), p + 3 * sizeof(index_t), 3 * sizeof(index_t));
    const std::byte* vals = p + 6 * sizeof(index_t);
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (index_t l = b.lo[2]; l < b.hi[2]; ++l) {
          const size_t gi = static_cast<size_t>((i * out_shape[1] + j) * out_shape[2] + l);
          std::memcpy(&g.y[gi], vals + b.local_offset(i, j, l) * sizeof(T), sizeof(T));
          ++seen[gi];
        }
  }
  for (char s : seen)
    if (s != 1) throw std::logic_error("output bricks do not tile the output exactly once");
  return g;
}

// Bitwise equality of two tensors (distinguishes -0 from +0 and compares NaN payloads).
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

}  // namespace triada::test
