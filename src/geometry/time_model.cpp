#include "geometry/time_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"

namespace triada {

double MachineModel::mac_rate(bool left, int busy) const {
  const double alone = left ? left_rate_alone : right_rate_alone;
  const double all = left ? left_rate_all : right_rate_all;
  if (cores_per_node <= 1) return all;
  const double f = std::clamp(double(busy - 1) / double(cores_per_node - 1), 0.0, 1.0);
  return alone + (all - alone) * f;
}

double model_total(const std::vector<StageModel>& stages) {
  double t = 0;
  for (const StageModel& s : stages) t += s.total();
  return t;
}

namespace {

// The busiest brick is brick 0: block splits give the first blocks the extra cell.
struct StageFacts {
  index_t steps = 0;     // N_axis: the stage's steps in dense mode
  index_t w_planes = 0;  // brick 0's W planes along the axis
  index_t v_planes = 0;  // its pivot planes
  index_t lines = 0;     // its lines (the other two extents of V)
  index_t le2 = 0;       // its extent along the lines' second axis
  index_t width = 0;     // max(N, K): the actuator's vector
  int line_size = 1;     // bricks along the axis
  bool line_on_node = true;
};

StageFacts stage_facts(const Plan& plan, const StagePlan& sp, int ranks_per_node) {
  const int a = sp.axis - 1;
  const Brick cells = plan.brick_cells(0);
  const ext3 v = cells.intersect(whole(sp.in_shape)).extents();
  const ext3 w = cells.intersect(whole(sp.out_shape)).extents();
  StageFacts f;
  f.steps = sp.n();
  f.v_planes = v[a];
  f.w_planes = w[a];
  f.lines = 1;
  for (int d = 0; d < 3; ++d)
    if (d != a) f.lines *= v[d];
  f.le2 = v[a == 2 ? 1 : 2];
  f.width = std::max(sp.n(), sp.k());
  f.line_size = plan.ranks.grid[a];
  // Brick 0's line: coordinates (c, 0, 0) along the axis; consecutive ranks share a node.
  std::array<int, 3> c{0, 0, 0};
  for (int r = 0; r < f.line_size; ++r) {
    c[a] = r;
    if (plan.brick_rank(c) / std::max(1, ranks_per_node) != 0) f.line_on_node = false;
  }
  return f;
}

// The actuator's stream: its host builds the messages of each grid coordinate along the
// axis once (16 bytes a header, 24 an entry; dense: every cell's coefficient, the width in
// all), then brick 0 receives its share. With dedicated actuator ranks a stage's stream is
// built while the bricks work on the previous stage.
double stream_seconds(const Plan& plan, const StageFacts& f, const MachineModel& m,
                      bool first_stage) {
  const double all = double(f.steps) * (16.0 * f.line_size + 24.0 * double(f.width));
  const double mine = double(f.steps) * (16.0 + 24.0 * double(f.w_planes));
  const bool built_ahead = plan.ranks.dedicated_actuators && !first_stage;
  const double build = built_ahead ? 0.0 : all / m.stream_bytes_per_s;
  const double alpha = f.line_on_node ? m.node_alpha_s : m.net_alpha_s;
  const double beta = f.line_on_node ? m.node_beta_s_per_byte : m.net_beta_s_per_byte;
  return build + alpha + mine * beta;
}

// Columns of a chunk of pivot panels (kernels/packing.hpp, panel_chunk with 16 columns a
// panel): the shared packing waits on the line's flags once a chunk.
index_t chunk_columns(index_t steps) {
  const index_t s = std::max<index_t>(steps, 1);
  return std::max<index_t>(16, (index_t{1} << 18) / (8 * s) / 16 * 16);
}

double planes_seconds(const StagePlan& sp, const StageFacts& f, const MachineModel& m,
                      std::size_t elem, ModelTransport transport) {
  if (f.line_size == 1) return 0.0;
  const double plane_bytes = double(f.lines) * double(elem);
  const bool shared = transport != ModelTransport::broadcast && f.line_on_node;
  if (shared) {
    if (sp.axis == 3)  // V copied into the line's window once, one fence
      return double(f.v_planes) * plane_bytes / m.copy_bytes_per_s + m.fence_s;
    // Each member packs its own planes chunk by chunk, then waits on the others' flags.
    const index_t slabs = sp.axis == 2 ? f.lines / std::max<index_t>(f.le2, 1) : 1;
    const index_t cols = sp.axis == 2 ? f.le2 : f.lines;
    const index_t chunks = slabs * ((cols + chunk_columns(f.steps) - 1) / chunk_columns(f.steps));
    return double(chunks) * m.handshake_s;
  }
  // Broadcast: every plane it does not hold reaches brick 0 down a binomial tree.
  const double alpha = f.line_on_node ? m.node_alpha_s : m.net_alpha_s;
  const double beta = f.line_on_node ? m.node_beta_s_per_byte : m.net_beta_s_per_byte;
  const double hops = std::ceil(std::log2(double(f.line_size)));
  const double others = double(std::max<index_t>(0, f.steps - f.v_planes));
  const double pack = double(f.v_planes) * plane_bytes / m.copy_bytes_per_s;
  return pack + others * hops * (alpha + plane_bytes * beta);
}

}  // namespace

std::vector<StageModel> model_stages(const Plan& plan, const MachineModel& m,
                                     std::size_t element_bytes, ModelTransport transport,
                                     int ranks_per_node) {
  std::vector<StageModel> out;
  const int busy = std::min(plan.ranks.n_bricks, std::max(1, ranks_per_node));
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    const StagePlan& sp = plan.stages[s];
    const StageFacts f = stage_facts(plan, sp, ranks_per_node);
    StageModel st;
    st.axis = sp.axis;
    st.stream = stream_seconds(plan, f, m, s == 0);
    const double macs = double(f.steps) * double(f.w_planes) * double(f.lines);
    st.compute = macs / m.mac_rate(sp.axis == 3, busy);
    st.planes = planes_seconds(sp, f, m, element_bytes, transport);
    out.push_back(st);
  }
  return out;
}

std::vector<GridChoice> rank_grids(PlanRequest req, const MachineModel& m,
                                   std::size_t element_bytes, ModelTransport transport,
                                   int ranks_per_node) {
  const int bricks = brick_rank_count(req.world_size, req.actuators);
  PlanRequest automatic = req;  // the balanced grid as make_plan lays it on the axes
  automatic.grid.reset();
  const std::array<int, 3> balanced = make_plan(automatic).ranks.grid;
  std::vector<GridChoice> out;
  for (int p1 = 1; p1 <= bricks; ++p1)
    for (int p2 = 1; p1 * p2 <= bricks; ++p2) {
      if (bricks % (p1 * p2) != 0) continue;
      req.grid = std::array<int, 3>{p1, p2, bricks / (p1 * p2)};
      Plan plan;
      try {
        plan = make_plan(req);
      } catch (const config_error&) {
        continue;  // more ranks than cells along an axis
      }
      GridChoice g;
      g.grid = *req.grid;
      g.stages = model_stages(plan, m, element_bytes, transport, ranks_per_node);
      g.total = model_total(g.stages);
      out.push_back(g);
    }
  // Fastest first; among equals the balanced grid, then the others in their order.
  std::stable_sort(out.begin(), out.end(), [&](const GridChoice& x, const GridChoice& y) {
    if (x.total != y.total) return x.total < y.total;
    return x.grid == balanced && y.grid != balanced;
  });
  return out;
}

}  // namespace triada
