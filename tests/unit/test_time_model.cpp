// The time model of a distributed run and the grid chooser (geometry/time_model.hpp), and
// the [machine] keys' calibration reader (config/machine_keys.hpp): closed forms written
// out here, the choice against a brute-force search.
#include <algorithm>
#include <cmath>
#include <set>

#include "config/machine_keys.hpp"
#include "core/error.hpp"
#include "geometry/time_model.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

PlanRequest request(ext3 shape, int world, std::array<int, 3> balanced,
                    ActuatorPlacement act = ActuatorPlacement::colocated) {
  PlanRequest r;
  r.in_shape = r.out_shape = shape;
  r.world_size = world;
  r.actuators = act;
  r.balanced_dims = balanced;
  return r;
}

// A machine with round numbers: every term of the model is then a short sum by hand.
MachineModel round_machine() {
  MachineModel m;
  m.cores_per_node = 4;
  m.left_rate_alone = 4e9;
  m.left_rate_all = 1e9;
  m.right_rate_alone = 8e9;
  m.right_rate_all = 2e9;
  m.copy_bytes_per_s = 1e9;
  m.stream_bytes_per_s = 0.5e9;
  m.fence_s = 1e-6;
  m.handshake_s = 0.25e-6;
  m.node_alpha_s = 1e-6;
  m.node_beta_s_per_byte = 1e-9;
  m.net_alpha_s = 1e-5;
  m.net_beta_s_per_byte = 1e-8;
  return m;
}

}  // namespace

TEST_CASE("the multiply-add rate falls linearly from alone to every core busy", "[time_model]") {
  const MachineModel m = round_machine();
  CHECK(m.mac_rate(true, 1) == 4e9);
  CHECK(m.mac_rate(true, 4) == 1e9);
  CHECK(m.mac_rate(true, 2) == 3e9);
  CHECK(m.mac_rate(false, 3) == 4e9);
  CHECK(m.mac_rate(false, 9) == 2e9);  // more ranks than cores: every core busy
}

TEST_CASE("one rank: kernels at the lone rate, the stream built and received, no planes",
          "[time_model]") {
  const MachineModel m = round_machine();
  const Plan plan = make_plan(request({8, 6, 4}, 1, {1, 1, 1}));
  const std::vector<StageModel> st = model_stages(plan, m, 8, ModelTransport::automatic, 1);
  REQUIRE(st.size() == 3);
  const double macs = 8.0 * 6 * 4;  // per step: every W plane times every line
  for (const StageModel& s : st) {
    const auto n = static_cast<double>(plan.in_shape[s.axis - 1]);
    CHECK(s.compute == Approx(n * macs / (s.axis == 3 ? 4e9 : 8e9)).epsilon(1e-12));
    CHECK(s.planes == 0);
    // 16 + 24 n bytes a step, built at 0.5 GB/s and received at 1 ns a byte after 1 us.
    const double bytes = n * (16 + 24 * n);
    CHECK(s.stream == Approx(bytes / 0.5e9 + 1e-6 + bytes * 1e-9).epsilon(1e-12));
  }
  CHECK(model_total(st) == Approx(st[0].total() + st[1].total() + st[2].total()));
}

TEST_CASE("a line on one node: axis 3 copies V into the window, axes 1 and 2 wait on flags",
          "[time_model]") {
  const MachineModel m = round_machine();
  // 2 x 2 x 1 bricks of 32^3: brick 0 holds 16 x 16 x 32 cells.
  const Plan plan = make_plan(request({32, 32, 32}, 4, {2, 2, 1}));
  REQUIRE(plan.ranks.grid == std::array<int, 3>{2, 2, 1});
  const std::vector<StageModel> st = model_stages(plan, m, 8, ModelTransport::automatic, 4);
  for (const StageModel& s : st) {
    if (s.axis == 3) CHECK(s.planes == 0);  // one brick along axis 3
    if (s.axis == 3) continue;
    // Axes 1 and 2: 512 lines of brick 0; chunks of 2^18 / (8 x 32 steps) = 1024 columns.
    const double chunks = s.axis == 1 ? 1 : 16;  // axis 2: a chunk per i1 slab of 32 columns
    CHECK(s.planes == Approx(chunks * 0.25e-6));
    // Four ranks on the node: the every-core rates.
    CHECK(s.compute == Approx(32.0 * 16 * 16 * 32 / 2e9));
  }
}

TEST_CASE("broadcast: every other plane down a binomial tree, the own ones packed",
          "[time_model]") {
  const MachineModel m = round_machine();
  const Plan plan = make_plan(request({12, 6, 6}, 3, {3, 1, 1}));
  REQUIRE(plan.ranks.grid == std::array<int, 3>{3, 1, 1});
  // One rank per node: the line along axis 1 crosses nodes (the network's constants).
  const std::vector<StageModel> st = model_stages(plan, m, 8, ModelTransport::automatic, 1);
  const StageModel& s1 = *std::find_if(st.begin(), st.end(), [](auto& s) { return s.axis == 1; });
  const double plane = 6.0 * 6 * 8;  // bytes of a pivot plane over brick 0's lines
  const double hops = 2;             // ceil(log2 3)
  CHECK(s1.planes == Approx(4 * plane / 1e9 + 8 * hops * (1e-5 + plane * 1e-8)).epsilon(1e-12));
  // The same line on one node, forced to broadcast: the node's constants.
  const std::vector<StageModel> b = model_stages(plan, m, 8, ModelTransport::broadcast, 3);
  const StageModel& b1 = *std::find_if(b.begin(), b.end(), [](auto& s) { return s.axis == 1; });
  CHECK(b1.planes == Approx(4 * plane / 1e9 + 8 * hops * (1e-6 + plane * 1e-9)).epsilon(1e-12));
}

TEST_CASE("dedicated actuators build a stage's stream while the bricks work on the previous",
          "[time_model]") {
  const MachineModel m = round_machine();
  const Plan plan = make_plan(request({8, 8, 8}, 5, {2, 1, 1}, ActuatorPlacement::automatic));
  REQUIRE(plan.ranks.dedicated_actuators);
  const std::vector<StageModel> st = model_stages(plan, m, 8, ModelTransport::automatic, 5);
  // Stage 3 (axis 2, one brick along it): 8 steps of 16 + 24 x 8 bytes to brick 0.
  REQUIRE(st[2].axis == 2);
  const double mine = 8 * (16 + 24.0 * 8);
  CHECK(st[2].stream == Approx(1e-6 + mine * 1e-9));
  CHECK(st[0].stream > st[2].stream);  // the first stage's stream is built first
}

TEST_CASE("the grid chooser ranks every factorisation, as a brute-force search does",
          "[time_model]") {
  const MachineModel m = round_machine();
  for (int bricks : {1, 2, 4, 6, 8, 12}) {
    const ext3 shape{24, 12, 8};
    PlanRequest req = request(shape, bricks, {bricks, 1, 1});
    const std::vector<GridChoice> got = rank_grids(req, m, 8, ModelTransport::automatic, 4);
    // Brute force: every p1 p2 p3 = bricks with p_d <= the mesh's extent.
    std::set<std::array<int, 3>> all;
    for (int p1 = 1; p1 <= bricks; ++p1)
      for (int p2 = 1; p2 <= bricks; ++p2)
        for (int p3 = 1; p3 <= bricks; ++p3)
          if (p1 * p2 * p3 == bricks && p1 <= shape[0] && p2 <= shape[1] && p3 <= shape[2])
            all.insert({p1, p2, p3});
    std::set<std::array<int, 3>> seen;
    for (const GridChoice& g : got) seen.insert(g.grid);
    CHECK(seen == all);
    double best = 1e300;
    std::array<int, 3> best_grid{};
    for (const std::array<int, 3>& g : all) {
      PlanRequest r = req;
      r.grid = g;
      const double t = model_total(model_stages(make_plan(r), m, 8, ModelTransport::automatic, 4));
      if (t < best) best = t, best_grid = g;
    }
    REQUIRE(!got.empty());
    CHECK(got.front().total == best);
    CHECK(model_total(got.front().stages) == got.front().total);
    for (size_t i = 1; i < got.size(); ++i) CHECK(got[i - 1].total <= got[i].total);
    (void)best_grid;
  }
}

TEST_CASE("a calibration's constants become the machine; a bad one is refused by name",
          "[time_model]") {
  nlohmann::json cal = nlohmann::json::parse(R"({
    "schema": "triada-calibration/1",
    "machine": {"cores": 16},
    "compute": {"shapes": [
      {"left_macs_per_s": {"median": 1e9}, "right_macs_per_s": {"median": 2e9}},
      {"left_macs_per_s": {"median": 3e9}, "right_macs_per_s": {"median": 4e9},
       "alone": {"left_macs_per_s": 5e9, "right_macs_per_s": 6e9}}]},
    "memory": {"all_ranks": {"bytes_per_s": {"median": 8e9}}},
    "sync": {"fence": {"seconds": 2e-6}, "flag_handshake": {"seconds": 3e-7}},
    "point_to_point": {"pairs": [
      {"same_node": false, "fit": {"alpha_s": 9e-6, "beta_s_per_byte": 9e-9}},
      {"same_node": true, "fit": {"alpha_s": 5e-7, "beta_s_per_byte": 1e-10}}]}
  })");
  const MachineModel m = machine_from_calibration(cal, "cal.json");
  CHECK(m.cores_per_node == 16);
  CHECK(m.left_rate_all == 3e9);  // the largest shape's
  CHECK(m.right_rate_all == 4e9);
  CHECK(m.left_rate_alone == 5e9);
  CHECK(m.right_rate_alone == 6e9);
  CHECK(m.copy_bytes_per_s == 4e9);  // read and written counted: half is copied
  CHECK(m.fence_s == 2e-6);
  CHECK(m.handshake_s == 3e-7);
  CHECK(m.node_alpha_s == 5e-7);
  CHECK(m.node_beta_s_per_byte == 1e-10);
  nlohmann::json bad = cal;
  bad["memory"]["all_ranks"]["bytes_per_s"]["median"] = -1;
  CHECK_THROWS_WITH(
      machine_from_calibration(bad, "cal.json"),
      Catch::Contains("cal.json") && Catch::Contains("memory.all_ranks.bytes_per_s.median"));
  bad = cal;
  bad["schema"] = "triada-report/1";
  CHECK_THROWS_AS(machine_from_calibration(bad, "cal.json"), config_error);
  // No two ranks on a node: no handshake measured, the built-in one stays.
  nlohmann::json lone = cal;
  lone["sync"]["flag_handshake"] = nullptr;
  CHECK(machine_from_calibration(lone, "cal.json").handshake_s == MachineModel{}.handshake_s);
}
