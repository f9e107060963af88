#pragma once
// Whether a run's rank layout is poor, and which world sizes give a good one for the same
// problem (doc/design.md §8.10; doc/transform.md, "A plan before the run"). Plain data from the
// plan, no MPI: the balanced factors of a brick rank count come from the caller (MPI_Dims_create).
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "geometry/plan.hpp"

namespace triada {

// A brick may be this many times longer than it is wide (or as elongated as the mesh
// itself, if that is more) before the layout counts as poor.
inline constexpr double kMaxBrickAspect = 2.0;

struct LayoutVerdict {
  bool poor = false;
  bool one_brick = false;   // one brick rank holds every cell while the others only stream
  double brick_aspect = 1;  // longest / shortest extent of brick 0 (the largest brick)
  double mesh_aspect = 1;   // the same of the (virtual) mesh
  ext3 brick{};             // brick 0's extents in cells
};

// Poor: more than one rank, but a single brick rank (every other rank an actuator); or a
// brick more elongated than max(kMaxBrickAspect, the mesh's own aspect), which is what a
// brick rank count with a large prime factor gives (5 -> a 5x1x1 slab grid), unless the
// time model chose that grid as the fastest (RankLayout::grid_modelled).
LayoutVerdict judge_layout(const Plan& plan);

// A world size and the automatic brick grid it gives.
struct LayoutChoice {
  int world_size = 1;
  int n_bricks = 1;
  std::array<int, 3> grid{1, 1, 1};
};

// The balanced factors of n brick ranks, as mpi::dims_create gives them.
using BalancedDims = std::function<std::array<int, 3>(int n_bricks)>;

// Up to `count` world sizes nearest to req.world_size (other than it; ascending) whose
// automatic grid for req's problem is not poor, with at least two brick ranks and the same
// actuator placement (3 dedicated actuator ranks under `automatic`: B + 3 ranks).
std::vector<LayoutChoice> good_layouts_near(PlanRequest req, const BalancedDims& dims,
                                            int count = 3);

// "-np 7 (2x2x1 grid), -np 9 (3x2x1 grid)" (empty: "none nearby").
std::string format_choices(const std::vector<LayoutChoice>& choices);

// One line (no program prefix, no newline): why the layout of `plan` is poor and which
// world sizes would do better.
std::string layout_warning(const Plan& plan, const LayoutVerdict& v,
                           const std::vector<LayoutChoice>& choices);

}  // namespace triada
