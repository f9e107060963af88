// --accuracy: every cell mode against fp64 on a DFT, a DCT and a GEMM (doc/precision.md).
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "apps/bench/bench.hpp"
#include "config/options.hpp"
#include "counters/counters.hpp"
#include "engine/engine.hpp"
#include "jobs/world_plan.hpp"
#include "mesh/mpi.hpp"

namespace triada::bench {

namespace {

CellMode cell_mode_at(int i) {
  return kCellModeTable[static_cast<size_t>(i)].mode;
}

// A mode that exists only for complex data (a real run would use its real part).
bool complex_only(CellMode m) {
  return m == CellMode::m3xu_fp32c;
}

// The mesh config with the cell mode `mode`, as triada-transform reads it for
// --cell-mode MODE [--mesh FILE]: built-in defaults (= meshcfg/default.ini) unless a file
// is given; its energy_for() gives the MAC energy on real or complex data.
MeshConfig mesh_for(CellMode mode, const std::string& mesh_file) {
  return parse_mesh_file(mesh_file, mode);
}

struct AccuracyCell {  // one (workload, cell mode)
  bool applicable = true;
  double max_rel = std::numeric_limits<double>::quiet_NaN();
  double mean_rel = std::numeric_limits<double>::quiet_NaN();
  std::uint64_t steps = 0, cycles = 0, macs = 0;
  double energy_mac_pj = 0, energy_total_pj = 0;
};

struct AccuracyWorkload {
  std::string name;         // dft, dct, gemm
  std::string description;  // one line
  bool complex = false;     // element type of the run
  std::array<int, 3> stage_order{3, 1, 2};
  std::array<CoeffMatrix, 3> coeffs;
  std::vector<AccuracyCell> cells;  // per mode, in enum order
};

CoeffMatrix identity_matrix(index_t n) {
  CoeffMatrix c;
  c.rows = c.cols = n;
  c.data.assign(static_cast<size_t>(n * n), cplx{0.0, 0.0});
  for (index_t i = 0; i < n; ++i) c(i, i) = cplx{1.0, 0.0};
  return c;
}

// N x K, entries uniform in [-1, 1) from the counter-based generator (stream 7001).
CoeffMatrix random_matrix(index_t n, index_t k, std::uint64_t seed) {
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.data.resize(static_cast<size_t>(n * k));
  for (index_t i = 0; i < n * k; ++i)
    c.data[static_cast<size_t>(i)] = {
        2.0 * unit_interval(counter_hash(seed, 7001, static_cast<std::uint64_t>(i))) - 1.0, 0.0};
  return c;
}

double magnitude(double v) {
  return std::abs(v);
}
double magnitude(const cplx& v) {
  return std::abs(v);
}

// Runs `w` in every cell mode on the same input; errors against the fp64 run, reduced over
// the world (counters: complete on world rank 0).
template <class T>
void run_accuracy_workload(MPI_Comm world, const BenchConfig& cfg, const ext3& shape,
                           const std::vector<MeshConfig>& meshes, AccuracyWorkload& w) {
  PlanRequest req;
  req.in_shape = shape;
  req.out_shape = {w.coeffs[0].cols, w.coeffs[1].cols, w.coeffs[2].cols};
  req.stage_order = w.stage_order;
  req.actuators = cfg.actuators;
  const std::optional<Plan> plan = plan_for_world(world, req);
  const Topology topo(*plan, world);
  const std::uint64_t cells =
      static_cast<std::uint64_t>(plan->mesh[0] * plan->mesh[1] * plan->mesh[2]);
  std::vector<T> in;
  if (topo.is_brick()) {
    GenSpec spec = input_spec(shape, "dense", cfg.seed);
    generate_brick(spec, topo.cells().intersect(whole(shape)), in);
  }
  const double n_out = static_cast<double>(elements(plan->out_shape));
  std::vector<T> ref;  // this rank's fp64 output
  w.cells.assign(kCellModes, AccuracyCell{});
  for (int mi = 0; mi < kCellModes; ++mi) {
    const CellMode mode = cell_mode_at(mi);
    AccuracyCell& cell = w.cells[static_cast<size_t>(mi)];
    if (!is_complex_v<T> && complex_only(mode)) {
      cell.applicable = false;
      continue;
    }
    EngineOptions opt;
    opt.executor = Executor::fused;
    opt.mode = Mode::esop;
    opt.cell_mode = mode;
    opt.coefficients = [&](int axis) { return w.coeffs[static_cast<size_t>(axis - 1)]; };
    EngineResult<T> res = run_engine<T>(topo, opt, in);
    if (mode == CellMode::fp64) ref = res.out;
    // max |d|, max |ref| and a non-finite flag (MPI_MAX), sum |d| (MPI_SUM).
    std::array<double, 3> mine{0, 0, 0}, mx{0, 0, 0};
    double sum = 0, total = 0;
    for (size_t i = 0; i < res.out.size() && i < ref.size(); ++i) {
      const double d = magnitude(res.out[i] - ref[i]);
      if (!std::isfinite(d))
        mine[2] = 1;
      else
        mine[0] = std::max(mine[0], d), sum += d;
      mine[1] = std::max(mine[1], magnitude(ref[i]));
    }
    mpi::allreduce<double>(world, mine, mx, mpi::Op::max);
    total = mpi::sum_of(world, sum);
    const double scale = mx[1] > 0 ? mx[1] : 1.0;
    cell.max_rel = mx[2] > 0 ? std::numeric_limits<double>::infinity() : mx[0] / scale;
    cell.mean_rel = mx[2] > 0 ? std::numeric_limits<double>::infinity() : total / n_out / scale;
    cell.steps = res.counters.total_steps();
    cell.cycles = res.counters.total_cycles();
    cell.macs = res.counters.total(Counter::macs);
    const EnergyBreakdown e = energy_of(
        res.counters.stages, meshes[static_cast<size_t>(mi)].energy_for(w.complex), cells);
    cell.energy_mac_pj = e[Counter::macs];
    cell.energy_total_pj = e.total();
  }
}

std::string order_str(const std::array<int, 3>& o) {
  return std::to_string(o[0]) + std::to_string(o[1]) + std::to_string(o[2]);
}

void print_accuracy_table(std::ostream& os, const ext3& shape,
                          const std::vector<AccuracyWorkload>& ws) {
  const auto sci = [](double v) { return std::isfinite(v) ? fmt("%.2e", v) : std::string("inf"); };
  os << "\naccuracy on " << shape_str(shape)
     << ": error = |y - y_fp64| / max|y_fp64| (max and mean over elements), same inputs "
        "(uniform [-1, 1)), fused executor, ESOP on\n";
  for (const AccuracyWorkload& w : ws)
    os << "  " << w.name << ": " << w.description << ", stage order " << order_str(w.stage_order)
       << ", " << w.cells[0].macs << " MACs, " << w.cells[0].cycles << " fp64 cycles\n";
  char buf[512];
  std::string head1 = "                     ", head2 = "mode           s r;c ";
  for (const AccuracyWorkload& w : ws) {
    std::snprintf(buf, sizeof buf, "| %-45s", w.name.c_str());
    head1 += buf;
    std::snprintf(buf, sizeof buf, "| %9s %9s %8s %6s %8s ", "max err", "mean err", "cycles",
                  "x fp64", "MAC uJ");
    head2 += buf;
  }
  os << head1 << "\n" << head2 << "\n";
  for (int mi = 0; mi < kCellModes; ++mi) {
    const CellMode mode = cell_mode_at(mi);
    std::snprintf(buf, sizeof buf, "%-14s %2d;%-2d ", to_string(mode).c_str(), substeps(mode),
                  substeps(mode, true));
    std::string line = buf;
    for (const AccuracyWorkload& w : ws) {
      const AccuracyCell& c = w.cells[static_cast<size_t>(mi)];
      if (!c.applicable) {
        std::snprintf(buf, sizeof buf, "| %-45s", "n/a (complex-only mode, real data)");
      } else {
        const double ratio = w.cells[0].cycles ? static_cast<double>(c.cycles) /
                                                     static_cast<double>(w.cells[0].cycles)
                                               : 0.0;
        std::snprintf(buf, sizeof buf, "| %9s %9s %8llu %6.2f %8.3f ", sci(c.max_rel).c_str(),
                      sci(c.mean_rel).c_str(), static_cast<unsigned long long>(c.cycles), ratio,
                      c.energy_mac_pj * 1e-6);
      }
      line += buf;
    }
    os << line << "\n";
  }
}

json accuracy_row(const ext3& shape, int mi, const std::vector<AccuracyWorkload>& ws,
                  const MeshConfig& mesh) {
  const CellMode mode = cell_mode_at(mi);
  json row = {{"shape", {shape[0], shape[1], shape[2]}},
              {"cell_mode", to_string(mode)},
              {"substeps", substeps(mode)},
              {"substep_pj", mesh.mode_mac_pj[static_cast<size_t>(mi)]}};
  json per = json::object();
  for (const AccuracyWorkload& w : ws) {
    const AccuracyCell& c = w.cells[static_cast<size_t>(mi)];
    const AccuracyCell& f = w.cells[0];
    json j = {{"applicable", c.applicable},
              {"element", w.complex ? "complex" : "real"},
              {"substeps", substeps(mode, w.complex)},
              {"mac_pj", mesh.energy_for(w.complex).mac_pj()}};
    if (!c.applicable) {
      j["max_rel_error"] = nullptr;
      j["mean_rel_error"] = nullptr;
      j["note"] =
          "m3xu-fp32c is a complex-only mode: not run on real data (a real run would "
          "use its real part, one exact product per MAC, at 4 sub-steps)";
    } else {
      j["max_rel_error"] = c.max_rel;
      j["mean_rel_error"] = c.mean_rel;
      j["steps"] = c.steps;
      j["cycles"] = c.cycles;
      j["cycles_fp64"] = f.cycles;
      j["cycles_ratio"] =
          f.cycles ? static_cast<double>(c.cycles) / static_cast<double>(f.cycles) : 0.0;
      j["macs"] = c.macs;
      j["energy_mac_pj"] = c.energy_mac_pj;
      j["energy_total_pj"] = c.energy_total_pj;
      j["energy_total_ratio"] = f.energy_total_pj > 0 ? c.energy_total_pj / f.energy_total_pj : 0.0;
    }
    per[w.name] = j;
  }
  row["workloads"] = per;
  return row;
}

// The three workloads on `shape`: their names, descriptions and matrices.
std::vector<AccuracyWorkload> accuracy_workloads(const ext3& shape, std::uint64_t seed) {
  std::vector<AccuracyWorkload> ws(3);
  ws[0].name = "dft";
  ws[0].description = "complex 3D DFT (norm ortho) of a complex input";
  ws[0].complex = true;
  ws[1].name = "dct";
  ws[1].description = "real 3D DCT-II (norm ortho)";
  ws[2].name = "gemm";
  ws[2].description = "GEMM as gemt: C1 random N1 x N1 in [-1, 1), C2 = C3 = I";
  ws[2].stage_order = {3, 2, 1};  // the identity stages first: the last stage is the GEMM
  for (int a = 0; a < 3; ++a) {
    const std::string what = "triada-bench --accuracy axis " + std::to_string(a + 1);
    ws[0].coeffs[static_cast<size_t>(a)] =
        make_coefficients(TransformKind::dft, shape[a], Norm::ortho, false, what);
    ws[1].coeffs[static_cast<size_t>(a)] =
        make_coefficients(TransformKind::dct, shape[a], Norm::ortho, false, what);
    ws[2].coeffs[static_cast<size_t>(a)] =
        a == 0 ? random_matrix(shape[0], shape[0], seed) : identity_matrix(shape[a]);
  }
  return ws;
}

// The --accuracy JSON file (rank 0).
void write_accuracy_json(const BenchConfig& cfg, int size, const json& workloads,
                         const json& rows) {
  json j;
  j["schema"] = "triada-bench-accuracy/1";
  j["date"] = today();
  j["machine"] = {{"hostname", host_name()},
                  {"cpu_model", cpu_model()},
                  {"mpi_world_size", size},
                  {"brick_ranks", brick_rank_count(size, cfg.actuators)}};
  j["config"] = {{"seed", cfg.seed},
                 {"inputs",
                  "uniform in [-1, 1) from the counter-based generator (complex: "
                  "real and imaginary parts independent)"},
                 {"executor", "fused"},
                 {"esop", true},
                 {"norm", "ortho"},
                 {"mesh", cfg.mesh.empty() ? json(nullptr) : json(cfg.mesh)},
                 {"quick", cfg.quick}};
  j["workloads"] = workloads;
  j["definition"] =
      "max_rel_error = max |y - y_fp64| / max |y_fp64|, mean_rel_error = mean |y - y_fp64| / "
      "max |y_fp64| (complex: modulus), y_fp64 the fp64 run of the same input and matrices; "
      "cycles = time steps x the mode's sub-steps (real or complex data); mac_pj = the "
      "mode's substep_pj x those sub-steps; energy_mac_pj = MACs x mac_pj; "
      "energy_total_pj: the whole energy model (buses, waits, static) with that mac_pj";
  j["accuracy"] = rows;
  write_json(cfg, j);
}

}  // namespace

int run_accuracy(const BenchConfig& cfg, MPI_Comm world) {
  const int rank = mpi::rank(world), size = mpi::size(world);
  std::vector<MeshConfig> meshes;
  mpi::collectively(world, [&] {
    for (int mi = 0; mi < kCellModes; ++mi) meshes.push_back(mesh_for(cell_mode_at(mi), cfg.mesh));
  });
  if (rank == 0)
    std::cout << "triada-bench --accuracy: " << size << " rank" << (size > 1 ? "s" : "")
              << ", every cell mode against fp64 on the same inputs; MAC energies from "
              << (cfg.mesh.empty() ? std::string("the built-in defaults (meshcfg/default.ini)")
                                   : cfg.mesh)
              << "\n"
              << std::flush;
  json rows = json::array(), workloads = json::array();
  for (const ext3& shape : cfg.sizes) {
    std::vector<AccuracyWorkload> ws = accuracy_workloads(shape, cfg.seed);
    for (AccuracyWorkload& w : ws) {
      if (w.complex)
        run_accuracy_workload<cplx>(world, cfg, shape, meshes, w);
      else
        run_accuracy_workload<double>(world, cfg, shape, meshes, w);
      if (prints_progress(cfg, rank))
        std::fprintf(stderr, "triada-bench --accuracy %s %s: done\n", shape_str(shape).c_str(),
                     w.name.c_str());
    }
    if (rank == 0) {
      print_accuracy_table(std::cout, shape, ws);
      for (int mi = 0; mi < kCellModes; ++mi)
        rows.push_back(accuracy_row(shape, mi, ws, meshes[static_cast<size_t>(mi)]));
      if (workloads.empty())
        for (const AccuracyWorkload& w : ws)
          workloads.push_back({{"name", w.name},
                               {"description", w.description},
                               {"element", w.complex ? "complex" : "real"},
                               {"stage_order", order_str(w.stage_order)}});
    }
  }
  mpi::collectively(world, [&] {
    if (rank == 0) write_accuracy_json(cfg, size, workloads, rows);
  });
  return 0;
}

}  // namespace triada::bench
