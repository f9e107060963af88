// triada-bench: the fused and reference executors against OpenBLAS dgemm and FFTW on this
// machine (bench.hpp). The OpenBLAS measurement re-executes this program as a child
// (--openblas-child, no MPI), dispatched here before MPI starts.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <sstream>

#include "apps/bench/bench.hpp"
#include "apps/common/run_main.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "geometry/memory_model.hpp"
#include "jobs/provenance.hpp"
#include "jobs/world_plan.hpp"
#include "kernels/isa.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"

namespace triada {
namespace bench {
namespace {

// The timing run's state, shared by its steps.
struct TimingRun {
  TimingRun(const BenchConfig& c, MPI_Comm w) : cfg(c), world(w) {}
  const BenchConfig& cfg;
  MPI_Comm world;
  int rank = 0, size = 1, n_bricks = 1;
  int total_rows = 0, done = 0;
  size_t smallest = 0;  // index of the smallest shape: the OpenBLAS cross-check runs there
  std::string load_start;
  std::vector<Row> rows;
  std::vector<std::pair<ext3, double>> memory_floor;  // rank 0: memcpy of each shape
  std::string blas_corename, blas_config;
  std::array<int, 3> first_grid{1, 1, 1};
  std::string verification = "not run";
  double verification_diff = std::numeric_limits<double>::quiet_NaN();

  bool has(const std::string& v) const {
    return std::find(cfg.variants.begin(), cfg.variants.end(), v) != cfg.variants.end();
  }
  void progress(const Row& r) {
    ++done;
    if (!prints_progress(cfg, rank)) return;
    std::fprintf(stderr, "triada-bench [%d/%d] %s %s %s: %.6f s, %.3f GMAC/s\n", done, total_rows,
                 shape_str(r.shape).c_str(), r.sparsity.c_str(), r.variant.c_str(), r.seconds,
                 r.gmacs_per_s());
  }
};

// Rows to run (for the progress counter) and the smallest shape.
void count_rows(TimingRun& t) {
  const BenchConfig& cfg = t.cfg;
  for (const ext3& s : cfg.sizes) {
    for (const auto& v : cfg.variants) t.total_rows += v != "fused" && v != "reference";
    t.total_rows +=
        static_cast<int>(cfg.sparsities.size()) *
        ((t.has("fused") ? 1 : 0) + (t.has("reference") && elements(s) <= cfg.reference_max));
  }
  for (size_t i = 1; i < cfg.sizes.size(); ++i)
    if (elements(cfg.sizes[i]) < elements(cfg.sizes[t.smallest])) t.smallest = i;
}

void print_intro(const TimingRun& t) {
  const BenchConfig& cfg = t.cfg;
  std::cout << "triada-bench: " << t.size << " rank" << (t.size > 1 ? "s" : "") << " ("
            << t.n_bricks << " brick rank" << (t.n_bricks > 1 ? "s" : "") << ", actuators "
            << (cfg.actuators == ActuatorPlacement::colocated ? "colocated" : "auto") << "), "
            << to_string(cfg.transform) << " norm=ortho, stage order 312, ESOP on, best of "
            << cfg.reps << "\n"
            << "  times are the simulation only: after input generation, before any output; "
               "baselines on rank 0, one thread;\n"
               "  registers and baseline buffers are allocated and touched before timing\n"
            << std::flush;
}

// The plan of one shape, after the up-front memory check: the engine's prediction, and on
// rank 0 the baselines' buffers (FFTW: the input and two complex arrays, 40 bytes an
// element).
Plan shape_plan(const TimingRun& t, const ext3& shape) {
  PlanRequest req;
  req.in_shape = shape;
  req.out_shape = shape;
  req.stage_order = {3, 1, 2};
  req.actuators = t.cfg.actuators;
  const Plan plan = plan_for_world(t.world, req);
  const std::string what = "--sizes " + shape_str(shape);
  std::uint64_t need = 0;
  mpi::collectively(t.world, [&] {
    need = predict_memory(plan, t.rank, {}, what).node_share();
    if (t.rank == 0)
      need = checked_add(need, checked_mul(checked_product<std::uint64_t>(shape, what), 40u, what),
                         what);
  });
  require_node_memory(t.world, need, what);
  return plan;
}

// Rank 0's baselines of one shape (memory floor, OpenBLAS, FFTW), dense input.
void baseline_rows(TimingRun& t, const ext3& shape, std::vector<Row>& base) {
  const BenchConfig& cfg = t.cfg;
  const auto baseline_row = [&](const std::string& variant, double seconds) {
    Row r;
    r.shape = shape;
    r.sparsity = "dense";
    r.variant = variant;
    r.seconds = seconds;
    r.macs = r.macs_dense = dense_macs(shape);
    base.push_back(r);
    t.progress(r);
  };
  // The memory floor of one stage: one read and one write of the tensor.
  t.memory_floor.emplace_back(shape, memory_floor_seconds(shape, cfg.reps));
  if (t.has("openblas")) {
    const OpenblasResult ob = spawn_openblas_child(shape, cfg.reps, cfg.transform, cfg.seed);
    t.blas_corename = ob.corename;
    t.blas_config = ob.config;
    baseline_row("openblas", ob.seconds);
  }
  bool any_fftw = false;
  for (const auto& v : cfg.variants) any_fftw |= v.starts_with("fftw-");
  if (any_fftw) {
    std::vector<double> x;
    generate_brick(input_spec(shape, "dense", cfg.seed), whole(shape), x);
    for (const auto& v : cfg.variants)
      if (v.starts_with("fftw-")) baseline_row(v, time_fftw(v, shape, x, cfg.reps));
  }
}

// Baselines: rank 0 alone, one thread. The other ranks wait asleep (not spinning in a
// collective) so that the baseline has its core and the memory system to itself; a failure
// on rank 0 is then agreed by every rank.
void run_baselines(TimingRun& t, const ext3& shape) {
  std::vector<Row> base;
  std::exception_ptr baseline_failure;
  if (t.rank == 0) try {
      baseline_rows(t, shape, base);
    } catch (...) {
      baseline_failure = std::current_exception();
    }
  mpi::sleepy_barrier(t.world);
  mpi::collectively(t.world, [&] {
    if (baseline_failure) std::rethrow_exception(baseline_failure);
  });
  if (t.rank != 0)
    for (const auto& v : t.cfg.variants) t.done += v != "fused" && v != "reference";
  t.rows.insert(t.rows.end(), base.begin(), base.end());
}

// Sanity check (not the test oracle): fused equals the OpenBLAS product on the smallest
// shape's first input pattern.
void verify_against_openblas(TimingRun& t, const ext3& shape, const std::string& sp,
                             const GenSpec& spec, const std::array<CoeffMatrix, 3>& coeffs,
                             const EngineTiming& timing) {
  const std::vector<double> y = gather_on_root(t.world, shape, timing.out_box, timing.out);
  mpi::collectively(t.world, [&] {
    if (t.rank != 0) return;
    std::vector<double> x;
    generate_brick(spec, whole(shape), x);
    ThreeModeProduct p(shape, coeffs);
    p.run(x);
    t.verification_diff = max_rel_diff(y, p.result());
    t.verification = t.verification_diff <= 1e-10 ? "verified" : "MISMATCH";
    if (t.verification_diff > 1e-10)
      throw error("fused and OpenBLAS results differ on " + shape_str(shape) + " " + sp +
                  ": max relative difference " + fmt("%.3g", t.verification_diff));
  });
}

// The fused and reference rows of one shape, every input pattern.
void run_engine_rows(TimingRun& t, size_t si, const Plan& plan, const Topology& topo,
                     const std::array<CoeffMatrix, 3>& coeffs) {
  const BenchConfig& cfg = t.cfg;
  const ext3& shape = cfg.sizes[si];
  const std::uint64_t mdense = macs_dense(plan);
  std::vector<int> axes;
  for (const auto& st : plan.stages) axes.push_back(st.axis);
  for (size_t pi = 0; pi < cfg.sparsities.size(); ++pi) {
    const std::string& sp = cfg.sparsities[pi];
    const GenSpec spec = input_spec(shape, sp, cfg.seed);
    std::vector<double> in;
    index_t local_nnz = 0;
    if (topo.is_brick()) local_nnz = generate_brick(spec, topo.cells().intersect(whole(shape)), in);
    const index_t nnz = mpi::sum_of(t.world, std::int64_t{local_nnz});
    for (const Executor ex : {Executor::fused, Executor::reference}) {
      if (!t.has(to_string(ex))) continue;
      if (ex == Executor::reference && elements(shape) > cfg.reference_max) continue;
      EngineTiming timing = time_engine(topo, coeffs, ex, in, cfg.reps);
      Row r;
      r.shape = shape;
      r.sparsity = sp;
      r.variant = to_string(ex);
      r.ranks = t.size;
      r.brick_ranks = t.n_bricks;
      r.grid = plan.ranks.grid;
      r.seconds = timing.seconds;
      r.macs = timing.counters.total(Counter::macs);
      r.macs_dense = mdense;
      r.steps = timing.counters.total_steps();
      r.input_nonzeros = static_cast<std::uint64_t>(nnz);
      r.stage_seconds = timing.stage_seconds;
      r.stage_axes = axes;
      t.rows.push_back(r);
      t.progress(r);
      if (si == t.smallest && pi == 0 && ex == Executor::fused && t.has("openblas"))
        verify_against_openblas(t, shape, sp, spec, coeffs, timing);
    }
  }
}

// Report: machine, notes, table (rank 0).
void print_report(const TimingRun& t, const std::string& inherited_core,
                  const std::string& load_end) {
  const BenchConfig& cfg = t.cfg;
  std::cout << "machine: " << host_name() << ", " << cpu_model() << ", "
            << sysconf(_SC_NPROCESSORS_ONLN) << " cores; MPI world " << t.size << ", brick grid "
            << t.first_grid[0] << "x" << t.first_grid[1] << "x" << t.first_grid[2]
            << "; load average " << t.load_start << " at start, " << load_end << " at end\n"
            << "kernels: " << kernels::isa_summary() << "\n";
  if (t.has("openblas")) {
    std::cout << "OpenBLAS kernel: " << t.blas_corename
              << " (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE unset for this measurement; this "
                 "environment has OPENBLAS_CORETYPE="
              << env_or("OPENBLAS_CORETYPE", "(unset)")
              << ", OPENBLAS_L2_SIZE=" << env_or("OPENBLAS_L2_SIZE", "(unset)")
              << ", which would give " << inherited_core << ")\n";
    std::cout << "OpenBLAS vs fused on " << shape_str(cfg.sizes[t.smallest]) << " "
              << cfg.sparsities.front() << ": max relative difference "
              << fmt("%.2e", t.verification_diff) << " -> " << t.verification << "\n";
  }
  std::cout << "FFTW: " << fftw_version_string() << ", FFTW_MEASURE planning not timed\n"
            << "GMAC/s = useful MACs / s / 1e9 (one MAC = one multiply-add = 2 flops, so GFLOP/s "
               "= 2 x GMAC/s; fused/reference: "
               "executed MACs, baselines: the dense 3-mode product's MACs N1N2N3(N1+N2+N3));\n"
            << "xOpenBLAS, x" << fftw_variant_for(cfg.transform)
            << " = baseline seconds / row seconds, same shape (> 1: faster than the baseline)\n\n";
  print_table(std::cout, t.rows, cfg.transform);
  std::cout << "\nmemory floor of one stage (rank 0 copies the tensor once: one read, one write):";
  for (const auto& [fs, fsec] : t.memory_floor)
    std::cout << " " << shape_str(fs) << " " << fmt("%.6f", fsec) << " s;";
  std::cout << "\n";
}

// The fixed notes of the JSON file: how to read its numbers.
json report_notes() {
  return {
      "times are the simulation only: after input generation, before any output",
      "seconds: best of reps; fused/reference: max over ranks of run_engine's wall time after "
      "a barrier; stage_seconds: world rank 0's time to the end of each stage, in stage order",
      "fused/reference: each brick's second register is allocated and touched once before the "
      "reps, as the openblas buffers are, so page faults of first touch are not timed",
      "memory_floor: rank 0's best memcpy of the whole tensor into a touched buffer (one read "
      "and one write), a lower bound for any stage that reads V and writes W on one core",
      "gmacs_per_s = useful MACs / seconds / 1e9, one MAC = one multiply-add = 2 flops (GFLOP/s "
      "= 2 x gmacs_per_s); fused/reference: "
      "counters.macs (MACs executed under ESOP); openblas and fftw rows: the dense 3-mode "
      "product's MAC count N1 N2 N3 (N1+N2+N3) over their time, so ratios compare like with like",
      "openblas and fftw rows run on world rank 0 alone, one thread, on the dense input",
      "ratio_openblas, ratio_fftw: baseline seconds / row seconds of the same shape (> 1: faster "
      "than the baseline); ratio_fftw is to fftw of the transform the engine rows run",
      "openblas: cblas_dgemm 3-mode product (stage 3, 1, 2) in a child process without "
      "OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (machine.openblas_corename is its kernel)",
      "fftw-dft: complex 3D DFT of the real input; fftw-dct: REDFT10 (DCT-II); fftw-dht: "
      "separable 3D DHT; FFTW_MEASURE planning not timed",
  };
}

// The JSON file of a timing run (rank 0).
json report_json(const TimingRun& t, const std::string& inherited_core,
                 const std::string& load_end) {
  const BenchConfig& cfg = t.cfg;
  json j;
  j["schema"] = "triada-bench/1";
  j["date"] = today();
  j["machine"] = {
      {"hostname", host_name()},
      {"cpu_model", cpu_model()},
      {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
      {"loadavg_start", t.load_start},
      {"loadavg_end", load_end},
      {"openblas_corename", t.has("openblas") ? json(t.blas_corename) : json(nullptr)},
      {"openblas_config", t.has("openblas") ? json(t.blas_config) : json(nullptr)},
      {"openblas_corename_with_inherited_env", inherited_core},
      {"env_OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "")},
      {"env_OPENBLAS_L2_SIZE", env_or("OPENBLAS_L2_SIZE", "")},
      {"fftw_version", std::string(fftw_version_string())},
      {"compiler", __VERSION__},
      {"kernels", kernels_json()},
      {"mpi_world_size", t.size},
      {"brick_ranks", t.n_bricks},
      {"brick_grid", {t.first_grid[0], t.first_grid[1], t.first_grid[2]}},
      {"actuators", cfg.actuators == ActuatorPlacement::colocated ? "colocated" : "auto"},
  };
  j["memory_floor"] = json::array();
  for (const auto& [fs, fsec] : t.memory_floor)
    j["memory_floor"].push_back({{"shape", {fs[0], fs[1], fs[2]}}, {"seconds", fsec}});
  j["config"] = {{"transform", to_string(cfg.transform)},
                 {"norm", "ortho"},
                 {"stage_order", {3, 1, 2}},
                 {"esop", true},
                 {"reps", cfg.reps},
                 {"reference_max", cfg.reference_max},
                 {"seed", cfg.seed},
                 {"quick", cfg.quick}};
  j["verification"] = {
      {"shape", {cfg.sizes[t.smallest][0], cfg.sizes[t.smallest][1], cfg.sizes[t.smallest][2]}},
      {"sparsity", cfg.sparsities.front()},
      {"max_rel_diff", nullable(t.verification_diff)},
      {"result", t.verification}};
  j["notes"] = report_notes();
  json jr = json::array();
  for (const Row& r : t.rows) jr.push_back(row_json(r));
  j["rows"] = jr;
  return j;
}

void run_shapes(TimingRun& t) {
  for (size_t si = 0; si < t.cfg.sizes.size(); ++si) {
    const ext3& shape = t.cfg.sizes[si];
    const Plan plan = shape_plan(t, shape);
    if (si == 0) t.first_grid = plan.ranks.grid;
    const Topology topo(plan, t.world, sizeof(double));
    const std::array<CoeffMatrix, 3> coeffs = coefficients(t.cfg.transform, shape);
    run_baselines(t, shape);
    run_engine_rows(t, si, plan, topo, coeffs);
  }
}

}  // namespace
}  // namespace bench

int run_bench(int argc, char** argv) {
  using namespace bench;
  const MPI_Comm world = MPI_COMM_WORLD;
  const int rank = mpi::rank(world), size = mpi::size(world);
  set_openblas_threads(1);  // this process only verifies; the child measures

  std::optional<BenchConfig> parsed;
  std::ostringstream help;
  mpi::collectively(world, [&] { parsed = parse_bench_options(argc, argv, help, size); });
  if (!parsed) {
    if (rank == 0) std::cout << help.str();
    return 0;
  }
  parsed->provenance = run_provenance(world, "triada-bench", parsed->command_line);
  const BenchConfig& cfg = *parsed;
  mpi::collectively(world, [&] {
    if (rank == 0) prepare_json_path(cfg.json, cfg.force);
  });
  if (cfg.accuracy) return run_accuracy(cfg, world);
  if (cfg.mxu) return on_rank0(world, [&] { run_mxu(cfg); });
  if (cfg.m3xu) return on_rank0(world, [&] { run_m3xu(cfg); });
  if (cfg.calibrate) return run_calibrate(cfg, world);
  TimingRun t(cfg, world);
  t.rank = rank;
  t.size = size;
  t.load_start = load_average();  // other work on the machine skews timings
  t.n_bricks = brick_rank_count(size, cfg.actuators);
  count_rows(t);
  if (rank == 0) print_intro(t);
  run_shapes(t);

  // Report on rank 0, agreed so that a failure (e.g. the JSON not written) ends every rank.
  mpi::collectively(world, [&] {
    if (rank != 0) return;
    fill_ratios(t.rows, cfg.transform);
    const std::string inherited_core = openblas_corename();
    const std::string load_end = load_average();
    print_report(t, inherited_core, load_end);
    write_json(cfg, report_json(t, inherited_core, load_end));
  });
  return 0;
}

}  // namespace triada

int main(int argc, char** argv) {
  if (triada::is_openblas_child(argc, argv)) return triada::run_openblas_child(argc, argv);
  return triada::run_main("triada-bench", argc, argv, triada::run_bench);
}
