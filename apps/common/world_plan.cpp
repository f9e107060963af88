#include "apps/common/world_plan.hpp"

#include "mesh/mpi.hpp"

namespace triada {

Plan plan_for_world(MPI_Comm world, PlanRequest req) {
  Plan plan;
  mpi::collectively(world, [&] {
    req.world_size = mpi::size(world);
    if (!req.grid)
      req.balanced_dims = mpi::dims_create(brick_rank_count(req.world_size, req.actuators));
    plan = make_plan(req);
  });
  return plan;
}

}  // namespace triada
