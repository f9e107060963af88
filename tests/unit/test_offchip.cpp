// Off-chip memory (doc/physical.md §4.4): the bytes of every pass against a count of every
// tile written here, the end-to-end time from the passes, an infinite bandwidth giving the
// compute's numbers back exactly, the sizer tiling what does not fit, and bad [memory] keys.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "config/options.hpp"
#include "counters/counters.hpp"
#include "physical/chip.hpp"
#include "physical/physical_model.hpp"
#include "report/physical_json.hpp"
#include "support/catch.hpp"
#include "support/key_errors.hpp"

using namespace triada;

namespace {

ChipProblem problem(ext3 n, ext3 k, std::array<int, 3> order = {3, 1, 2}) {
  ChipProblem q;
  q.in_shape = n;
  q.out_shape = k;
  q.stage_order = order;
  q.energy = EnergyModel{};
  return q;
}

PhysicalResult run_on(const ChipProblem& q, const ext3& mesh, const PhysicalParams& p) {
  const Plan plan = chip_plan(q, mesh);
  return physical_model(plan, dense_run_counters(plan, 1), p, q.energy, q.mode, q.complex_data,
                        q.initial);
}

PhysicalParams hbm(double gbps, Overlap o = Overlap::none) {
  PhysicalParams p;
  p.technology.node_nm = 7;
  p.memory.kind = MemoryKind::hbm3;
  p.memory.gbps = gbps;
  p.memory.pj_per_bit = 2;
  p.memory.overlap = o;
  p.memory.efficiency = 1;  // the peak and the device's energy alone (tested on their own)
  p.memory.host_pj_per_bit = 0;
  return p;
}

// The test's count: each pass runs the tiles of the tensor as it stands, each tile whole
// along the pass's stage axes and one mesh extent (or what is left) along the others; a
// tile reads its elements and writes them transformed; the pass reads its stages' C_s once,
// or each tile reads the C_s of more than `actuator_words` elements again.
struct Count {
  double read = 0, written = 0;  // elements, coefficients included in read
  std::uint64_t block = 0;       // the largest tile's virtual cells per cell
};
Count count(const ChipProblem& q, const ext3& P, int passes, double actuator_words = 1e300) {
  std::vector<std::vector<int>> groups;  // axes, in stage order
  const auto& o = q.stage_order;
  if (passes == 1) groups = {{o[0], o[1], o[2]}};
  if (passes == 2) groups = {{o[0], o[1]}, {o[2]}};
  if (passes == 3) groups = {{o[0]}, {o[1]}, {o[2]}};
  ext3 shape = q.in_shape;
  Count c;
  for (const std::vector<int>& axes : groups) {
    const auto whole = [&](int d) { return std::count(axes.begin(), axes.end(), d + 1) > 0; };
    ext3 step{};
    for (int d = 0; d < 3; ++d) step[d] = whole(d) ? shape[d] : P[d];
    for (index_t a = 0; a < shape[0]; a += step[0])
      for (index_t b = 0; b < shape[1]; b += step[1])
        for (index_t e = 0; e < shape[2]; e += step[2]) {
          const ext3 at{a, b, e};
          double in = 1, out = 1;
          std::uint64_t held = 1;
          for (int d = 0; d < 3; ++d) {
            const index_t ext = std::min(step[d], shape[d] - at[d]);
            in *= double(ext);
            out *= double(whole(d) ? q.out_shape[d] : ext);
            const index_t v = whole(d) ? std::max(q.in_shape[d], q.out_shape[d]) : ext;
            held *= std::uint64_t((v + P[d] - 1) / P[d]);
          }
          c.read += in;
          c.written += out;
          c.block = std::max(c.block, held);
          for (int axis : axes) {  // streamed anew for this tile
            const double cs = double(q.in_shape[axis - 1]) * double(q.out_shape[axis - 1]);
            if (cs > actuator_words) c.read += cs;
          }
        }
    for (int axis : axes) {
      const double cs = double(q.in_shape[axis - 1]) * double(q.out_shape[axis - 1]);
      if (cs <= actuator_words) c.read += cs;
      shape[axis - 1] = q.out_shape[axis - 1];
    }
  }
  return c;
}

}  // namespace

TEST_CASE("each pass's bytes and tile: the closed forms against a count of every tile",
          "[offchip]") {
  for (const auto& order : {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{1, 2, 3}})
    for (const auto& [n, k] :
         std::vector<std::pair<ext3, ext3>>{{{6, 5, 4}, {6, 5, 4}}, {{7, 3, 5}, {2, 6, 4}}})
      for (const ext3& P : {ext3{1, 1, 1}, ext3{2, 2, 2}, ext3{3, 1, 4}, ext3{7, 6, 5}})
        for (int passes = 1; passes <= 3; ++passes) {
          const ChipProblem q = problem(n, k, order);
          const Plan plan = chip_plan(q, P);
          CAPTURE(order, n, k, P, passes);
          const Count want = count(q, P, passes);
          double read = 0, written = 0;
          for (const PassTraffic& t : pass_traffic(plan, passes, 64, false)) {
            read += t.bytes_read;
            written += t.bytes_written;
          }
          CHECK(read == want.read * 8);
          CHECK(written == want.written * 8);
          CHECK(held_block(plan, passes, Overlap::none) == want.block);
          CHECK(held_block(plan, passes, Overlap::double_buffer) ==
                (passes == 1 ? want.block : 2 * want.block));
          // actuators of 12, 20 or 30 words of 64 bits: a larger C_s streams tile by tile
          for (double words : {12.0, 20.0, 30.0}) {
            double streamed = 0;
            for (const PassTraffic& t : pass_traffic(plan, passes, 64, false, words * 8))
              streamed += t.bytes_read;
            CHECK(streamed == count(q, P, passes, words).read * 8);
          }
          // Y0 is read once more, in the last pass
          double with_y0 = 0;
          for (const PassTraffic& t : pass_traffic(plan, passes, 128, true))
            with_y0 += t.bytes_read;
          CHECK(with_y0 == (want.read + double(k[0] * k[1] * k[2])) * 16);
        }
}

// One pass's time under doc/physical.md §4.5, written from the doc with its own clocks:
// step j of the first stage waits for plane j of the tile; the store follows the last step.
double own_one_pass(double coef_s, double load_s, double c1, double rest, double store_s,
                    double steps, bool overlap) {
  if (!overlap) return coef_s + load_s + c1 + rest + store_s;
  double t = 0;
  for (double j = 0; j < steps; ++j)  // plane j in at (j + 1) l / n; the step takes c1 / n
    t = std::max(t, (j + 1) * load_s / steps) + c1 / steps;
  return coef_s + t + rest + store_s;
}

TEST_CASE("the end-to-end time: the first stage streams its planes, the store is exposed",
          "[offchip]") {
  ChipProblem q = problem({8, 6, 5}, {8, 6, 5});
  for (Overlap o : {Overlap::none, Overlap::double_buffer})
    for (double gbps : {1e-3, 1.0, 1e3}) {
      PhysicalParams p = hbm(gbps, o);
      const PhysicalResult r = run_on(q, {4, 3, 5}, p);
      REQUIRE(r.memory);
      const OffChipResult& m = *r.memory;
      CAPTURE(o == Overlap::none, gbps);
      CHECK(m.passes == 1);  // no area budget: the tensor stays on chip
      const Count c = count(q, {4, 3, 5}, 1);
      CHECK(m.bytes_read == c.read * 8);
      CHECK(m.bytes_written == c.written * 8);
      CHECK(m.memory_seconds == Approx((c.read + c.written) * 8 / (gbps * 1e9)));
      double compute = 0;
      for (const StagePhysical& st : r.stages) compute += st.seconds;
      CHECK(m.compute_seconds == compute);
      const double bw = gbps * 1e9;
      const double coef = (8.0 * 8 + 6 * 6 + 5 * 5) * 8, tensor = 8.0 * 6 * 5 * 8;
      const double c1 = r.stages[0].seconds;
      const double want =
          own_one_pass(coef / bw, tensor / bw, c1, compute - c1, tensor / bw,
                       double(q.in_shape[static_cast<size_t>(q.stage_order[0] - 1)]),
                       o == Overlap::double_buffer);
      CHECK(r.seconds == Approx(want).epsilon(1e-12));
      CHECK(r.seconds >= compute + tensor / bw);  // no W is final before the last step
      CHECK(r.seconds > std::max(compute, m.memory_seconds));
      CHECK(r.energy.off_chip == Approx((c.read + c.written) * 8 * 8 * 2e-12));
      const double macs = double(dense_run_counters(chip_plan(q, {4, 3, 5})).total(Counter::macs));
      CHECK(m.flops_per_byte == Approx(2 * macs / ((c.read + c.written) * 8)));
      CHECK(m.ridge_flops_per_byte == Approx(2 * macs / compute / (gbps * 1e9)));
      CHECK(m.memory_bound == (m.flops_per_byte < m.ridge_flops_per_byte));
      const nlohmann::json j = physical_json(r, p, chip_plan(q, {4, 3, 5}));
      CHECK(j["seconds"] == r.seconds);
      CHECK(j["compute_seconds"] == compute);
      CHECK(j["bound"] == (m.memory_bound ? "memory" : "compute"));
      CHECK(j["memory"]["passes"] == 1);
      CHECK(j["energy_j"]["breakdown"]["off_chip"] == r.energy.off_chip);
    }
}

TEST_CASE("an infinite bandwidth gives the compute's numbers back", "[offchip]") {
  const ChipProblem q = problem({8, 6, 5}, {4, 6, 7});
  for (const ext3& mesh : {ext3{8, 6, 7}, ext3{3, 2, 4}}) {
    const PhysicalResult bare = run_on(q, mesh, PhysicalParams{});
    PhysicalParams p = hbm(1e12, Overlap::double_buffer);
    p.technology.node_nm = 45;
    p.memory.pj_per_bit = 0;
    const PhysicalResult r = run_on(q, mesh, p);
    // the load and store are exposed now (§4.5), but take ~1e-21 s at this bandwidth
    CHECK(r.seconds == Approx(bare.seconds).epsilon(1e-9));
    CHECK(r.seconds > bare.seconds);
    CHECK(r.memory->compute_seconds == bare.seconds);
    CHECK(r.energy.total() == Approx(bare.energy.total()).epsilon(1e-9));
    CHECK(r.power_w == Approx(bare.power_w).epsilon(1e-9));
    CHECK_FALSE(r.memory->memory_bound);
    p.memory.overlap = Overlap::none;  // the memory's seconds then add, vanishingly
    CHECK(run_on(q, mesh, p).seconds == Approx(bare.seconds).epsilon(1e-9));
  }
}

TEST_CASE("kind none: the physical section as before, whatever the other [memory] keys",
          "[offchip]") {
  const ChipProblem q = problem({8, 6, 4}, {8, 6, 4});
  const Plan plan = chip_plan(q, {3, 2, 2});
  const RunCounters rc = dense_run_counters(plan, 1);
  PhysicalParams bare, other;
  other.memory.gbps = 5;
  other.memory.pj_per_bit = 7;
  other.memory.overlap = Overlap::double_buffer;
  for (bool chip : {false, true}) {
    if (chip) bare.chip.area_mm2 = other.chip.area_mm2 = 1e6;
    const PhysicalResult r = physical_model(plan, rc, other, q.energy, q.mode, false, true);
    CHECK_FALSE(r.memory);
    CHECK(physical_json(r, bare, plan) ==
          physical_json(physical_model(plan, rc, bare, q.energy, q.mode, false), bare, plan));
  }
}

TEST_CASE("the sizer tiles what does not fit: the brute-force search's mesh and passes",
          "[offchip]") {
  const ChipProblem q = problem({6, 5, 4}, {6, 5, 4});
  PhysicalParams p = hbm(10);
  p.chip.register_words = 8;
  p.chip.area_mm2 = 1e9;
  const double full = run_on(q, {6, 5, 4}, p).area.total();
  for (Overlap o : {Overlap::none, Overlap::double_buffer})
    for (double share : {0.003, 0.01, 0.03, 0.1, 0.3, 1.0}) {
      p.memory.overlap = o;
      p.chip.area_mm2 = full * share;
      CAPTURE(share, o == Overlap::none);
      std::optional<ext3> best;
      double best_s = 0;
      for (index_t a = 1; a <= 6; ++a)
        for (index_t b = 1; b <= 5; ++b)
          for (index_t c = 1; c <= 4; ++c) {
            const ext3 m{a, b, c};
            if (c > p.chip.max_tiers) continue;  // stacked: one die a tier
            if (!chip_fit(chip_plan(q, m), p, q.mode, false).fits) continue;
            const double t = run_on(q, m, p).seconds;
            const double cells = double(a * b * c);
            if (!best || t < best_s ||
                (t == best_s && cells < double((*best)[0] * (*best)[1] * (*best)[2]))) {
              best = m;
              best_s = t;
            }
          }
      if (!best) {
        CHECK_THROWS_WITH(size_chip(q, p), Catch::Contains("tiled off chip"));
        continue;
      }
      const ext3 sized = size_chip(q, p);
      CHECK(sized == *best);
      const PhysicalResult r = run_on(q, sized, p);
      CHECK(r.area.total() <= *p.chip.area_mm2);
      const int passes = r.memory->passes;
      CHECK(r.chip->storage.words ==
            2 * count(q, sized, passes).block * (o == Overlap::none || passes == 1 ? 1 : 2));
      // fewer passes would not fit this mesh
      if (passes > 1) {
        PhysicalParams none = p;
        none.memory.kind = MemoryKind::none;
        CHECK_FALSE(chip_fit(chip_plan(q, sized), none, q.mode, false).fits);
      }
    }
}

TEST_CASE("with [memory], a problem too large for the die is sized, in passes", "[offchip]") {
  const ChipProblem q = problem({48, 40, 32}, {48, 40, 32});
  PhysicalParams p = hbm(100);
  p.chip.area_mm2 = 0.3;
  PhysicalParams none = p;
  none.memory.kind = MemoryKind::none;
  CHECK_THROWS_WITH(size_chip(q, none), Catch::Contains("set [memory] kind to tile it off chip"));
  const ext3 mesh = size_chip(q, p);
  const PhysicalResult r = run_on(q, mesh, p);
  CHECK(r.memory->passes > 1);
  CHECK(r.area.total() <= 0.3);
  const Count c = count(q, mesh, r.memory->passes);
  CHECK(r.memory->bytes_read == c.read * 8);
  CHECK(r.memory->bytes_written == c.written * 8);
}

TEST_CASE("the power cap holds end to end", "[offchip]") {
  const ChipProblem q = problem({12, 10, 8}, {12, 10, 8});
  for (Overlap o : {Overlap::none, Overlap::double_buffer})
    for (double watts : {1e-3, 0.05, 1.0}) {
      PhysicalParams p = hbm(50, o);
      p.chip.power_w = watts;
      const PhysicalResult r = run_on(q, {6, 5, 4}, p);
      CAPTURE(watts, o == Overlap::none);
      if (!r.chip->power_fits) continue;
      CHECK(r.power_w <= watts);
      CHECK(r.seconds >= r.memory->compute_seconds);
    }
}

TEST_CASE("bad [memory] keys give one clear line", "[offchip][options]") {
  const auto fails = test::refuses_key;
  fails("memory.kind", "hbm9", "--memory.kind");
  fails("memory.kind", "hbm9", "hbm3 | hbm2e | ddr5");
  fails("memory.gbps", "-1", "--memory.gbps");
  fails("memory.gbps", "nan", "--memory.gbps");
  fails("memory.gbps", "0", "--memory.gbps");
  fails("memory.pj_per_bit", "-0.5", "--memory.pj_per_bit");
  fails("memory.pj_per_bit", "nan", "--memory.pj_per_bit");
  fails("memory.overlap", "triple", "--memory.overlap");
  const MeshConfig ok = mesh_config("", {{"memory.kind", "ddr5"}, {"memory.gbps", "100"}});
  CHECK(ok.physical.memory.kind == MemoryKind::ddr5);
  CHECK(ok.physical.memory.bandwidth_gbps() == 100);
  CHECK(ok.physical.memory.energy_pj_per_bit() == memory_kind_figures(MemoryKind::ddr5).pj_per_bit);
}

TEST_CASE("the memory's achieved share of its peak and the host's energy per bit", "[offchip]") {
  const ChipProblem q = problem({8, 6, 5}, {8, 6, 5});
  PhysicalParams p = hbm(10, Overlap::none);
  const PhysicalResult peak = run_on(q, {4, 3, 5}, p);
  p.memory.efficiency = 0.5;
  p.memory.host_pj_per_bit = 3;
  const PhysicalResult r = run_on(q, {4, 3, 5}, p);
  const double bytes = r.memory->bytes_read + r.memory->bytes_written;
  CHECK(r.memory->memory_seconds == Approx(bytes / (10e9 * 0.5)));
  CHECK(r.memory->memory_seconds == Approx(2 * peak.memory->memory_seconds));
  CHECK(r.energy.off_chip == Approx(bytes * 8 * (2 + 3) * 1e-12));
  const nlohmann::json j = physical_json(r, p, chip_plan(q, {4, 3, 5}));
  CHECK(j["memory"]["achieved_gbps"] == 5.0);
  CHECK(j["roofline"]["bytes_per_s"] == 5e9);
}
