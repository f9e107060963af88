#include "jobs/world_plan.hpp"

#include "mesh/mpi.hpp"

namespace triada {

Plan plan_for_world(MPI_Comm world, PlanRequest req, int world_size) {
  Plan plan;
  mpi::collectively(world, [&] {
    req.world_size = world_size > 0 ? world_size : mpi::size(world);
    if (!req.grid)
      req.balanced_dims = mpi::dims_create(brick_rank_count(req.world_size, req.actuators));
    plan = make_plan(req);
  });
  return plan;
}

namespace {
// The model's fastest grid if it beats the balanced one by kModelMargin and by
// kModelSeconds, else {0, 0, 0}: the model's error is larger than small differences, and
// on small problems the fixed costs it leaves out dominate (doc/scaling.md "Scaling out").
constexpr double kModelMargin = 0.10;
constexpr double kModelSeconds = 0.01;
std::array<int, 3> modelled_grid(const PlanRequest& req, const GridModel& model, int per_node) {
  const std::vector<GridChoice> choices =
      rank_grids(req, model.machine, model.element_bytes, model.transport, per_node);
  const std::array<int, 3> balanced = make_plan(req).ranks.grid;
  for (const GridChoice& c : choices)
    if (c.grid == balanced && choices.front().total < (1 - kModelMargin) * c.total &&
        choices.front().total < c.total - kModelSeconds)
      return choices.front().grid;
  return {0, 0, 0};
}
}  // namespace

int ranks_per_node(MPI_Comm world) {
  int n = mpi::Comm::borrow(world).split_shared(0).size();
  mpi::bcast(world, std::span<int>(&n, 1), 0);
  return n;
}

int model_ranks_per_node(const MachineModel& m, MPI_Comm world) {
  return m.ranks_per_node > 0 ? m.ranks_per_node : ranks_per_node(world);
}

Plan plan_for_world(MPI_Comm world, PlanRequest req, const GridModel& model, int world_size) {
  if (req.grid) return plan_for_world(world, req, world_size);
  const int per_node = model_ranks_per_node(model.machine, world);
  std::array<int, 3> grid{0, 0, 0};
  mpi::collectively(world, [&] {
    req.world_size = world_size > 0 ? world_size : mpi::size(world);
    req.balanced_dims = mpi::dims_create(brick_rank_count(req.world_size, req.actuators));
    if (mpi::rank(world) != 0) return;
    grid = modelled_grid(req, model, per_node);
  });
  mpi::bcast(world, std::span<int>(grid), 0);
  if (grid[0] > 0) {  // else the balanced grid (with make_plan's error, if any)
    req.grid = grid;
    req.grid_modelled = true;
  }
  return plan_for_world(world, req, world_size);
}

}  // namespace triada
