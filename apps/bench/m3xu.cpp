// --m3xu: the M3XU paper's comparison (Ha et al., Sec. II-B, VI-A, VI-B; Table III) on the
// planar MXU. One FP32 GEMM, C (n x n) = A B with binary32 inputs, runs on an S x S unit
// with its memory side (mxu/memory_side.hpp) for each design: the FP32-MXU (cell mode
// fp32, 32-bit words), M3XU (m3xu-fp32, 32-bit words), and the software schemes on the
// FP16 MXU, each a sequence of GEMMs on split operands (3xTF32: tf32 passes in 32-bit
// containers; 4xTF32; EEHC's 3xBF16: bf16 passes in 16-bit words); an fp16 GEMM gives the
// FP16 MXU's own rate. The unit constants (cycle, area, sub-step energy) are the mesh
// config's mac_ps_, mac_um2_ and mac_pj_ keys of each mode (Table III for fp32 and M3XU).
//
// Equal memory bandwidth: DRAM bytes per second are those that keep the fp16 GEMM's
// heaviest call from stalling, the same for every design (converted to each design's
// cycles). Two budgets: equal count (each design replaces one FP16 MXU with that
// bandwidth; the paper's Sec. II-B: an FP32-MXU then runs at about half its peak) and
// equal area (a design's bandwidth scales with its area, so the budget holds area /
// a_fp16 FP16 MXUs' bandwidth). Energy is power x time, as the paper's Fig. 5: every
// cycle of the run, stalls included, costs the unit's S^2 sub-step energies.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "apps/bench/bench.hpp"
#include "config/options.hpp"
#include "conv/conv.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada::bench {

namespace {

// One GEMM pass: C (+)= A' B' with A', B' the parts `a`, `b` of A and B (whole or a split half).
enum class Part { whole, hi, lo };
struct Pass {
  Part a, b;
};
struct Design {
  std::string name;  // as the table prints it
  CellMode mode;     // the unit's cell mode in every pass (its sub-step energy)
  CellMode unit;     // the unit whose cycle and area the design has
  std::uint64_t word_bits;
  float (*narrow)(float);  // the software split's rounding (hi = narrow(x), lo = narrow(x - hi))
  std::vector<Pass> passes;
  bool fp32 = true;  // an FP32 GEMM (false: the FP16 MXU's own fp16 rate)
};

std::vector<Design> designs() {
  const std::vector<Pass> three = {
      {Part::lo, Part::hi}, {Part::hi, Part::lo}, {Part::hi, Part::hi}};
  std::vector<Pass> four = three;
  four.insert(four.begin(), Pass{Part::lo, Part::lo});
  const std::vector<Pass> one = {{Part::whole, Part::whole}};
  // The software schemes run on the FP16 MXU (the paper's baseline unit takes FP16, BF16
  // and TF32 alike, Sec. II-A): its cycle and area, each pass's own energy.
  const CellMode f16 = CellMode::fp16;
  return {{"FP16 MXU, fp16 GEMM", f16, f16, 16, nullptr, one, false},
          {"FP32-MXU (fp32)", CellMode::fp32, CellMode::fp32, 32, nullptr, one},
          {"M3XU (m3xu-fp32)", CellMode::m3xu_fp32, CellMode::m3xu_fp32, 32, nullptr, one},
          {"3xTF32 on the FP16 MXU", CellMode::tf32, f16, 32, round_tf32, three},
          {"4xTF32 on the FP16 MXU", CellMode::tf32, f16, 32, round_tf32, four},
          {"3xBF16 (EEHC) on the FP16 MXU", CellMode::bf16, f16, 16, round_bf16, three}};
}

struct Budget {
  std::uint64_t compute = 0, stall = 0;
  double seconds = 0, gmacs_per_mm2 = 0, pj_per_mac = 0;
};
struct DesignRow {
  Design d;
  double cycle_ps = 0, area_um2 = 0, substep_pj = 0, max_rel_error = 0;
  Budget count, area;
};

std::vector<double> part_of(const std::vector<double>& x, Part p, float (*narrow)(float)) {
  std::vector<double> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const auto f = static_cast<float>(x[i]);
    const float hi = narrow ? narrow(f) : f;
    out[i] = p == Part::whole ? f : p == Part::hi ? hi : narrow(f - hi);
  }
  return out;
}

// Bytes per fp16 cycle that keep the heaviest call of the fp16 GEMM from stalling: an
// accumulating call of n rows reads n s left words, n s partial sums and an s x s right
// tile and writes n s results, 16-bit words, in n cycles.
Decimal fp16_bandwidth(index_t n, index_t s) {
  const auto words = static_cast<std::uint64_t>(3 * n * s + s * s);
  return {2 * words, static_cast<std::uint64_t>(n), ""};
}

struct RunParams {
  index_t n, s;
  double fp16_ps, fp16_um2;
};

// The design's GEMM on one unit fed with the fp16 GEMM's bandwidth (bytes per second) times
// `scale`.
Budget run_budget(const Design& d, const RunParams& p, const DesignRow& row, double scale,
                  const std::vector<double>& A, const std::vector<double>& B,
                  std::vector<double>& C) {
  MxuMemoryParams mp;
  mp.word_bits = d.word_bits;
  mp.clock_ghz = {1, 1, "1"};  // transfer cycles in the design's own cycles
  const Decimal bw = fp16_bandwidth(p.n, p.s);
  // bytes per design cycle = bw x (cycle / fp16 cycle) x scale, kept rational (fs, um^2)
  const auto t_fs = static_cast<std::uint64_t>(std::llround(row.cycle_ps * 1000));
  const auto c_fs = static_cast<std::uint64_t>(std::llround(p.fp16_ps * 1000));
  const auto sc = static_cast<std::uint64_t>(std::llround(scale * 1000));
  mp.dram_gbps = {bw.num * t_fs * sc, bw.den * c_fs * 1000, ""};
  MemorySide mem(mp, p.s);
  TensorUnit u(p.s * p.s, 0, false, Mode::dense, d.mode);
  u.set_memory(&mem);
  C.assign(static_cast<size_t>(p.n * p.n), 0.0);
  for (size_t q = 0; q < d.passes.size(); ++q) {
    const std::vector<double> a = part_of(A, d.passes[q].a, d.narrow);
    const std::vector<double> b = part_of(B, d.passes[q].b, d.narrow);
    for (index_t j = 0; j < p.n; j += p.s)  // a column block of C, depth chunks inner
      for (index_t k = 0; k < p.n; k += p.s)
        u.multiply(p.n, a.data() + k, p.n, b.data() + k * p.n + j, p.n, C.data() + j, p.n,
                   q > 0 || k > 0);
  }
  Budget r;
  r.compute = u.cost().cycles;
  r.stall = mem.cost().stall_cycles;
  const double cycles = double(r.compute + r.stall), macs = double(p.n) * double(p.n) * double(p.n);
  const double cells = double(p.s * p.s);
  r.seconds = cycles * row.cycle_ps * 1e-12;
  r.gmacs_per_mm2 = macs / r.seconds * 1e-9 / (cells * row.area_um2 * 1e-6);
  r.pj_per_mac = cycles * cells * row.substep_pj / macs;
  return r;
}

DesignRow run_design(const Design& d, const RunParams& p, const MeshConfig& mesh,
                     const std::vector<double>& A, const std::vector<double>& B,
                     const std::vector<double>& ref) {
  DesignRow row;
  row.d = d;
  const auto unit = static_cast<size_t>(d.unit);
  row.cycle_ps = mesh.physical.timing.mac_ps[unit];
  row.area_um2 = mesh.physical.area.mac_um2[unit];
  row.substep_pj = mesh.mode_mac_pj[static_cast<size_t>(d.mode)];
  std::vector<double> C;
  row.count = run_budget(d, p, row, 1.0, A, B, C);
  row.area = run_budget(d, p, row, row.area_um2 / p.fp16_um2, A, B, C);
  row.max_rel_error = max_rel_diff(C, ref);
  return row;
}

void print_m3xu(const std::vector<DesignRow>& rows, const RunParams& p) {
  std::printf("\n%-30s %5s %6s %6s %6s | %-29s | %-29s | %9s\n", "design", "cyc x", "area x",
              "pJ/ss", "ss/MAC", "equal count: stall  GMAC/s/mm2  pJ/MAC",
              "equal area: stall  GMAC/s/mm2  pJ/MAC", "max err");
  const double macs = double(p.n) * double(p.n) * double(p.n),
               calls_cycles = macs / double(p.s * p.s);
  for (const DesignRow& r : rows) {
    const auto pct = [](const Budget& b) {
      return 100.0 * double(b.stall) / double(b.compute + b.stall);
    };
    std::printf(
        "%-30s %5.2f %6.2f %6.2f %6.1f | %5.1f%% %10.3f %8.2f    | %5.1f%% %10.3f %8.2f    | "
        "%9.2e\n",
        r.d.name.c_str(), r.cycle_ps / p.fp16_ps, r.area_um2 / p.fp16_um2, r.substep_pj,
        double(r.count.compute) / calls_cycles, pct(r.count), r.count.gmacs_per_mm2,
        r.count.pj_per_mac, pct(r.area), r.area.gmacs_per_mm2, r.area.pj_per_mac, r.max_rel_error);
  }
}

// M3XU against the FP32-MXU and 3xTF32: energy per FP32 MAC (1 - ratio = "x% lower") and
// throughput per area (ratio), in both budgets.
json comparisons(const std::vector<DesignRow>& rows) {
  const auto find = [&](CellMode m, std::size_t passes) -> const DesignRow& {
    for (const DesignRow& r : rows)
      if (r.d.mode == m && r.d.passes.size() == passes) return r;
    return rows.front();
  };
  const DesignRow &m3 = find(CellMode::m3xu_fp32, 1), &fp32 = find(CellMode::fp32, 1),
                  &x3 = find(CellMode::tf32, 3);
  json j = json::object();
  for (const auto& [name, other] :
       {std::pair<const char*, const DesignRow*>{"fp32_mxu", &fp32}, {"3xtf32", &x3}}) {
    json c = json::object();
    for (const auto& [budget, a, b] :
         {std::tuple{"equal_count", m3.count, other->count}, {"equal_area", m3.area, other->area}})
      c[budget] = {{"energy_per_mac_lower_by", 1 - a.pj_per_mac / b.pj_per_mac},
                   {"throughput_per_area_ratio", a.gmacs_per_mm2 / b.gmacs_per_mm2}};
    j[name] = c;
  }
  return j;
}

void print_comparisons(const json& c) {
  std::printf("\nM3XU (m3xu-fp32) against:\n");
  for (const auto& [name, v] : c.items())
    for (const auto& [budget, x] : v.items())
      std::printf(
          "  %-9s %-12s energy per FP32 MAC %5.1f%% lower, FP32 throughput per area "
          "x %.2f\n",
          name.c_str(), budget.c_str(), 100 * x["energy_per_mac_lower_by"].get<double>(),
          x["throughput_per_area_ratio"].get<double>());
  std::printf(
      "the paper (Sec. VI-B, Fig. 5): energy 61%% lower than the FP32-MXU and 27%% lower than "
      "the most efficient software scheme (pipelined M3XU), 71%% and 45%% (not pipelined)\n");
}

json budget_json(const Budget& b) {
  return {{"compute_cycles", b.compute},
          {"stall_cycles", b.stall},
          {"seconds", b.seconds},
          {"gmacs_per_s_per_mm2", b.gmacs_per_mm2},
          {"pj_per_mac", b.pj_per_mac}};
}

json m3xu_json(const BenchConfig& cfg, const RunParams& p, const std::vector<DesignRow>& rows,
               const json& comp) {
  json j;
  j["schema"] = "triada-bench-m3xu/1";
  j["date"] = today();
  j["config"] = {{"n", p.n},
                 {"side", p.s},
                 {"seed", cfg.seed},
                 {"mesh", cfg.mesh.empty() ? json(nullptr) : json(cfg.mesh)},
                 {"quick", cfg.quick}};
  j["definition"] =
      "an FP32 GEMM n x n x n (binary32 inputs uniform in [-1, 1)) on one S x S unit with its "
      "memory side; equal bandwidth: the bytes per second that keep the fp16 GEMM from "
      "stalling; equal_count: that bandwidth per unit; equal_area: scaled by the unit's area "
      "over the fp16 unit's; cycles = compute (TcuCost::cycles) + stall (MemorySide); energy "
      "= cycles x S^2 x the mode's sub-step energy (power x time); area = S^2 MAC units of the "
      "design's unit (mac_um2); max_rel_error against the binary64 product of the same "
      "binary32 inputs";
  json jr = json::array();
  for (const DesignRow& r : rows)
    jr.push_back({{"design", r.d.name},
                  {"cell_mode", to_string(r.d.mode)},
                  {"passes", r.d.passes.size()},
                  {"word_bits", r.d.word_bits},
                  {"fp32", r.d.fp32},
                  {"cycle_ps", r.cycle_ps},
                  {"area_um2", r.area_um2},
                  {"substep_pj", r.substep_pj},
                  {"equal_count", budget_json(r.count)},
                  {"equal_area", budget_json(r.area)},
                  {"max_rel_error", r.max_rel_error}});
  j["rows"] = jr;
  j["m3xu_against"] = comp;
  return j;
}

}  // namespace

void run_m3xu(const BenchConfig& cfg) {
  const MeshConfig mesh = parse_mesh_file(cfg.mesh);
  RunParams p{cfg.quick ? 32 : 128, cfg.quick ? 4 : 16, 0, 0};
  if (!cfg.m3xu_size_default) p.n = cfg.sizes.front()[0];
  if (p.n % p.s != 0 || p.n < p.s)
    throw config_error("--sizes: the --m3xu GEMM side must be a multiple of " +
                       std::to_string(p.s) + ", got " + std::to_string(p.n));
  p.fp16_ps = mesh.physical.timing.mac_ps[static_cast<size_t>(CellMode::fp16)];
  p.fp16_um2 = mesh.physical.area.mac_um2[static_cast<size_t>(CellMode::fp16)];
  std::cout << "triada-bench --m3xu: an FP32 GEMM " << p.n << "^3 on a " << p.s << " x " << p.s
            << " unit, each design at equal memory bandwidth; constants from "
            << (cfg.mesh.empty() ? std::string("the built-in defaults (meshcfg/default.ini)")
                                 : cfg.mesh)
            << "\n"
            << std::flush;
  const auto count = static_cast<std::uint64_t>(p.n * p.n);
  std::vector<double> A = random_tensor(count, cfg.seed, 4), B = random_tensor(count, cfg.seed, 5);
  for (double& x : A) x = static_cast<float>(x);
  for (double& x : B) x = static_cast<float>(x);
  std::vector<double> ref(static_cast<size_t>(count), 0.0);
  for (index_t i = 0; i < p.n; ++i)
    for (index_t t = 0; t < p.n; ++t)
      for (index_t j = 0; j < p.n; ++j) ref[i * p.n + j] += A[i * p.n + t] * B[t * p.n + j];
  std::vector<DesignRow> rows;
  for (const Design& d : designs()) rows.push_back(run_design(d, p, mesh, A, B, ref));
  print_m3xu(rows, p);
  const json comp = comparisons(rows);
  print_comparisons(comp);
  write_json(cfg, m3xu_json(cfg, p, rows, comp));
}

}  // namespace triada::bench
