#include "physical/chip.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace triada {

namespace {

Plan plan_on(const ext3& in, const ext3& out, const std::array<int, 3>& order, const ext3& mesh) {
  PlanRequest r;
  r.in_shape = in;
  r.out_shape = out;
  r.stage_order = order;
  r.mesh = mesh;
  r.world_size = 1;
  r.balanced_dims = {1, 1, 1};
  return make_plan(r);
}

ext3 virtual_of(const ChipProblem& q) {
  ext3 v{};
  for (int d = 0; d < 3; ++d) v[d] = std::max(q.in_shape[d], q.out_shape[d]);
  return v;
}

// A stacked die has P3 tiers: at most chip.max_tiers. A planar one is one die.
bool tiers_fit(const ext3& mesh, const PhysicalParams& p) {
  return p.area.layout != Layout::stacked || mesh[2] <= p.chip.max_tiers;
}

std::string mm2(double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g mm^2", a);
  return buf;
}

std::string outline(const std::array<double, 2>& o) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g x %.4g mm", o[0], o[1]);
  return buf;
}

std::string max_die(const PhysicalParams& p) {
  return "chip.max_die_mm = " + outline(p.chip.max_die_mm) + " (a reticle)";
}

std::string watts(double w) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g W", w);
  return buf;
}

// No mesh fits: what the storage alone needs (the full mesh holds the fewest words), or
// that the leakage alone exceeds the power budget.
[[noreturn]] void refuse(const ChipProblem& q, const PhysicalParams& p) {
  const ChipFit full = chip_fit(chip_plan(q, virtual_of(q)), p, q.mode, q.complex_data);
  const ChipFit one = chip_fit(chip_plan(q, {1, 1, 1}), p, q.mode, q.complex_data);
  const std::string what = "chip: no mesh of " + to_string(virtual_of(q)) + " or fewer cells";
  if (!outline_fits(one.outline_mm, p.chip))
    throw config_error(what + " fits one die of " + max_die(p) + ": even one cell's die is " +
                       outline(one.outline_mm) +
                       " (more dies, linked in a package, are not modelled)");
  if (p.chip.area_mm2 && one.area_mm2 > *p.chip.area_mm2)
    throw config_error(what + " fits chip.area_mm2 = " + mm2(*p.chip.area_mm2) +
                       ": the storage alone (cells' V and W, actuator memories) needs " +
                       mm2(std::min(full.storage_mm2, one.storage_mm2)) + " and the overhead " +
                       mm2(*p.chip.area_mm2 * p.chip.overhead_fraction) +
                       (p.memory.modelled()
                            ? " (tiled off chip: the cells hold one line of each stage)"
                            : " (set [memory] kind to tile it off chip)"));
  throw config_error(what + " fits chip.power_w = " + watts(p.chip.power_w.value_or(0)) +
                     " and chip.area_mm2: the leakage of the smallest that fits the area is " +
                     watts(one.leakage_w));
}

}  // namespace

std::vector<index_t> chip_axis_sizes(index_t v) {
  std::vector<index_t> sizes;
  for (index_t P = 1; P <= v; ++P) {
    const index_t f = (v + P - 1) / P;
    if ((v + f - 1) / f == P) sizes.push_back(P);
  }
  return sizes;
}

Plan chip_plan(const ChipProblem& q, const ext3& mesh) {
  return plan_on(q.in_shape, q.out_shape, q.stage_order, mesh);
}

double chip_seconds(const ChipProblem& q, const ext3& mesh, const PhysicalParams& p) {
  const Plan plan = chip_plan(q, mesh);
  const RunCounters rc = dense_run_counters(plan, substeps(q.mode, q.complex_data));
  return physical_model(plan, rc, p, q.energy, q.mode, q.complex_data, q.initial).seconds;
}

ext3 size_chip(const ChipProblem& q, const PhysicalParams& p) {
  const ext3 v = virtual_of(q);
  const auto s1 = chip_axis_sizes(v[0]), s2 = chip_axis_sizes(v[1]), s3 = chip_axis_sizes(v[2]);
  std::optional<ext3> best;
  double best_s = 0, best_cells = 0;
  for (index_t a : s1)
    for (index_t b : s2)
      for (index_t c : s3) {
        const ext3 m{a, b, c};
        if (!tiers_fit(m, p)) break;  // s3 ascends
        if (!chip_fit(chip_plan(q, m), p, q.mode, q.complex_data).fits) continue;
        const double t = chip_seconds(q, m, p), cells = double(a) * double(b) * double(c);
        if (!best || t < best_s || (t == best_s && cells < best_cells)) {
          best = m;
          best_s = t;
          best_cells = cells;
        }
      }
  if (!best) refuse(q, p);
  return *best;
}

std::optional<ext3> chip_mesh(const ChipProblem& q, const PhysicalParams& p,
                              const std::optional<ext3>& cells) {
  if (!p.chip.modelled()) return cells;
  if (p.chip.area_mm2 && !p.chip.mesh) return size_chip(q, p);
  const std::optional<ext3> mesh = p.chip.mesh ? p.chip.mesh : cells;
  const ChipFit f = chip_fit(chip_plan(q, mesh.value_or(virtual_of(q))), p, q.mode, q.complex_data);
  const std::string name = p.chip.mesh ? "chip.mesh " + to_string(*mesh) : "the mesh";
  if (!tiers_fit(mesh.value_or(virtual_of(q)), p))
    throw config_error(name + " stacks " + std::to_string(mesh.value_or(virtual_of(q))[2]) +
                       " tiers, over chip.max_tiers = " + std::to_string(p.chip.max_tiers) +
                       " (area.layout = planar puts the mesh on one die)");
  if (p.chip.area_mm2 && f.area_mm2 > *p.chip.area_mm2)
    throw config_error(name + " needs " + mm2(f.area_mm2) +
                       ", over chip.area_mm2 = " + mm2(*p.chip.area_mm2));
  if (!outline_fits(f.outline_mm, p.chip))
    throw config_error(name + " needs a die of " + outline(f.outline_mm) + ", beyond " +
                       max_die(p) + ": it would take more than one die, which is not modelled");
  if (p.chip.power_w && f.leakage_w >= *p.chip.power_w)
    throw config_error(name + " leaks " + watts(f.leakage_w) +
                       ", not under chip.power_w = " + watts(*p.chip.power_w) + " at any clock");
  return mesh;
}

std::string chip_bound(const Plan& plan, const PhysicalParams& p, CellMode mode,
                       bool complex_data) {
  if (p.chip.mesh) return "given (chip.mesh)";
  if (!p.chip.area_mm2) return "no area budget: the mesh priced";
  if (!plan.folded()) return "full mesh: the problem fits unfolded";
  bool capped = false;           // one fold less along axis 3 stacks too many tiers
  for (int d = 0; d < 3; ++d) {  // the next size along each axis: one fold less
    if (plan.fold[d] == 1) continue;
    ext3 m = plan.mesh;
    const index_t f = plan.fold[d] - 1;
    m[d] = (plan.virtual_cells[d] + f - 1) / f;
    if (!tiers_fit(m, p)) {
      capped = true;
      continue;
    }
    const Plan larger = plan_on(plan.in_shape, plan.out_shape, plan.stage_order, m);
    if (chip_fit(larger, p, mode, complex_data).fits)
      return "time: a larger mesh fits but is not modelled faster";
  }
  const std::string what = p.chip.power_w ? "area, outline or power" : "area or outline";
  return what + (capped ? " and chip.max_tiers" : "") + ": no larger mesh fits";
}

}  // namespace triada
