#pragma once
// The one place a program builds the plan for its MPI world.
#include <mpi.h>

#include "geometry/plan.hpp"

namespace triada {

// The plan of `req` for every rank of `world`: world_size filled in and, where req names no
// brick grid, the balanced grid of the brick ranks (MPI_Dims_create). Collective; an error
// of any rank (a mesh too small, a grid that does not fit) is thrown by every rank.
Plan plan_for_world(MPI_Comm world, PlanRequest req);

}  // namespace triada
