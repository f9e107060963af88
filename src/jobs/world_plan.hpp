#pragma once
// The one place a program builds the plan for its MPI world.
#include <mpi.h>

#include "geometry/plan.hpp"
#include "geometry/time_model.hpp"

namespace triada {

// The plan of `req` for every rank of `world`: world_size filled in (world's size, or
// `world_size` if positive: a plan for another machine) and, where req names no brick grid,
// the balanced grid of the brick ranks (MPI_Dims_create). Collective; an error of any rank
// (a mesh too small, a grid that does not fit) is thrown by every rank.
Plan plan_for_world(MPI_Comm world, PlanRequest req, int world_size = 0);

// What the time model needs to choose a brick grid (geometry/time_model.hpp).
struct GridModel {
  MachineModel machine;
  std::size_t element_bytes = 8;
  ModelTransport transport = ModelTransport::automatic;
};
// The same, but where req names no brick grid, the grid the time model finds fastest for
// this world (its ranks per node from rank 0's node, every rank taking rank 0's choice).
Plan plan_for_world(MPI_Comm world, PlanRequest req, const GridModel& model, int world_size = 0);
// Ranks on rank 0's node (MPI_COMM_TYPE_SHARED), on every rank. Collective.
int ranks_per_node(MPI_Comm world);
// The ranks per node the model prices: the machine's setting, else ranks_per_node(world).
int model_ranks_per_node(const MachineModel& m, MPI_Comm world);

}  // namespace triada
