#pragma once
// How a run maps onto the mesh and the ranks (make_plan), and the time model's view of it.
#include "geometry/plan.hpp"
#include "geometry/time_model.hpp"
#include "jobs/world_plan.hpp"
