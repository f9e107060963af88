#include "geometry/layout_quality.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace triada {

namespace {

double aspect(const ext3& e) {
  const auto [lo, hi] = std::minmax({e[0], e[1], e[2]});
  return lo > 0 ? static_cast<double>(hi) / static_cast<double>(lo) : 1.0;
}

std::string grid_text(const std::array<int, 3>& g) {
  return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

// The plan a world of `world` ranks would get (automatic grid); false if it cannot run.
bool plan_for(PlanRequest req, int world, const BalancedDims& dims, Plan& out) {
  req.world_size = world;
  req.grid.reset();
  req.balanced_dims = dims(brick_rank_count(world, req.actuators));
  try {
    out = make_plan(req);
  } catch (const config_error&) {  // more ranks along an axis than it has cells
    return false;
  }
  return true;
}

}  // namespace

LayoutVerdict judge_layout(const Plan& plan) {
  LayoutVerdict v;
  v.brick = plan.brick_cells(0).extents();  // block split: the first brick is the largest
  v.brick_aspect = aspect(v.brick);
  v.mesh_aspect = aspect(plan.virtual_cells);
  v.one_brick = plan.ranks.world_size > 1 && plan.ranks.n_bricks == 1;
  const double limit = std::max(kMaxBrickAspect, v.mesh_aspect);
  // An elongated grid the time model chose is its answer to the same question.
  v.poor = v.one_brick ||
           (plan.ranks.n_bricks > 1 && v.brick_aspect > limit && !plan.ranks.grid_modelled);
  return v;
}

std::vector<LayoutChoice> good_layouts_near(PlanRequest req, const BalancedDims& dims, int count) {
  const int here = req.world_size;
  const bool dedicated = req.actuators == ActuatorPlacement::automatic;
  const int first = dedicated ? 5 : 2;  // two brick ranks at least
  const int last = 2 * here + 8;
  std::vector<LayoutChoice> found;
  for (int w = first; w <= last; ++w) {
    Plan p;
    if (w == here || !plan_for(req, w, dims, p) || judge_layout(p).poor) continue;
    found.push_back({w, p.ranks.n_bricks, p.ranks.grid});
  }
  std::stable_sort(found.begin(), found.end(), [&](const LayoutChoice& a, const LayoutChoice& b) {
    return std::abs(a.world_size - here) < std::abs(b.world_size - here);
  });
  if (found.size() > static_cast<size_t>(count)) found.resize(static_cast<size_t>(count));
  std::sort(found.begin(), found.end(), [](const LayoutChoice& a, const LayoutChoice& b) {
    return a.world_size < b.world_size;
  });
  return found;
}

std::string format_choices(const std::vector<LayoutChoice>& choices) {
  if (choices.empty()) return "none nearby";
  std::string s;
  for (size_t i = 0; i < choices.size(); ++i)
    s += (i ? ", " : "") + std::string("-np ") + std::to_string(choices[i].world_size) + " (" +
         grid_text(choices[i].grid) + " grid)";
  return s;
}

std::string layout_warning(const Plan& plan, const LayoutVerdict& v,
                           const std::vector<LayoutChoice>& choices) {
  const RankLayout& L = plan.ranks;
  std::string why = std::to_string(L.world_size) + " ranks give ";
  if (v.one_brick) {
    why += "1 brick rank holding every cell (the others only stream coefficients)";
  } else {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.1f", v.brick_aspect);
    why += std::to_string(L.n_bricks) + " brick ranks in a " + grid_text(L.grid) +
           " grid, bricks of " + to_string(v.brick) + " cells (" + ratio +
           " times longer than wide)";
  }
  return "poor rank layout: " + why + "; for this " + to_string(plan.virtual_cells) + " mesh try " +
         format_choices(choices) +
         (L.dedicated_actuators ? " (B brick ranks + 3 actuator ranks)" : "");
}

}  // namespace triada
