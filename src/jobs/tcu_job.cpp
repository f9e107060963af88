#include "jobs/tcu_job.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <utility>

#include "config/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "counters/progress.hpp"
#include "geometry/memory_model.hpp"
#include "io/output_files.hpp"
#include "jobs/job_entry.hpp"
#include "jobs/memory_report.hpp"
#include "jobs/on_rank0.hpp"
#include "jobs/provenance.hpp"
#include "jobs/tcu_runs.hpp"
#include "mesh/cancel.hpp"
#include "mesh/mpi.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_io_bound.hpp"
#include "mxu/tensor_unit.hpp"
#include "report/report.hpp"

namespace triada {

namespace {

std::string num(double v) {
  std::ostringstream os;
  if (std::abs(v) >= 1e15 || (v != 0 && std::abs(v) < 1e-3))
    os << std::setprecision(4) << std::scientific << v;
  else if (v == std::floor(v))
    os << static_cast<long long>(v);
  else
    os << std::setprecision(6) << v;
  return os.str();
}

// The error a run reports against its algorithm's reference (fp64, long double or exact):
// the first of the details' error figures, in this order; a relative figure (or an exact
// zero) becomes `max_rel_error`. Algorithms checked by exact equality (integers, graphs)
// report no figure: verified means error 0, otherwise the error is unknown (null).
nlohmann::json precision_of(const TcuRun& run, CellMode mode) {
  static const struct {
    const char* key;
    bool relative;
    const char* meaning;
  } kFigures[] = {
      {"max_rel_error", true, "max |y - ref| / max |ref|"},
      {"relative_error", true, "||x - x_ref||inf / ||x_ref||inf"},
      {"max_scaled_error", true, "max |y - ref| / sum_h |a_h| |x|^h"},
      {"max_abs_error", false, "max |C - C_ref| (absolute)"},
  };
  nlohmann::json p = {{"cell_mode", to_string(mode)},
                      {"substeps", substeps(mode)},
                      {"reference", run.reference},
                      {"max_rel_error", nullptr},
                      {"error_source", nullptr}};
  const nlohmann::json& d = run.details;
  for (const auto& f : kFigures) {
    if (!d.is_object() || !d.contains(f.key) || !d[f.key].is_number()) continue;
    const double v = d[f.key].get<double>();
    p["error_source"] = std::string("details.") + f.key + ": " + f.meaning;
    p["error"] = v;
    if (f.relative || v == 0.0) p["max_rel_error"] = v;
    return p;
  }
  if (run.verified) {
    p["error_source"] = "exact equality with the reference";
    p["error"] = 0.0;
    p["max_rel_error"] = 0.0;
  }
  return p;
}

// "1.2e-07" or "n/a" for a null.
std::string sci(const nlohmann::json& v) {
  if (!v.is_number()) return "n/a";
  std::ostringstream os;
  os << std::setprecision(3) << std::scientific << v.get<double>();
  return os.str();
}

// Atomic like every output (io/output_files.hpp): probed before the run, written beside
// the target (if any), renamed onto it at the end of the job. It records the run's
// provenance (jobs/provenance.hpp); returns the report as written.
nlohmann::json stage_report(TextOutput& file, nlohmann::json report, const Provenance& prov) {
  report["provenance"] = to_json(prov);
  file.stage(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return report;
}

// The report target, checked before any work: not an existing file without --force, not
// the input file.
TextOutput report_file(const TcuConfig& cfg) {
  if (cfg.report.empty()) return {};
  if (cfg.arrays.empty())
    check_distinct({{cfg.input, "--input", false}, {cfg.report, "--report", true}});
  return TextOutput(cfg.report, cfg.force);
}

}  // namespace

TcuProblem tcu_problem(const TcuConfig& cfg, std::int64_t size, const std::string& input) {
  TcuProblem p;
  p.size = size;
  p.seed = cfg.seed;
  p.input = input;
  p.size_name = "--size";
  p.input_name = "--input";
  p.product = cfg.product;
  p.sweeps = cfg.sweeps;
  p.kernel = cfg.kernel;
  p.points = cfg.points;
  p.option_prefix = "--";
  return p;
}

double tcu_theorem_n(const nlohmann::json& details, std::int64_t size) {
  if (details.is_object() && details.contains("theorem_n") && details["theorem_n"].is_number())
    return details["theorem_n"].get<double>();
  return static_cast<double>(size);
}

double fit_loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0, k = 0;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) continue;
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx, sy += ly, sxx += lx * lx, sxy += lx * ly, k += 1;
  }
  const double den = k * sxx - sx * sx;
  if (k < 2 || !(std::abs(den) > 1e-12)) return std::nan("");
  return (k * sxy - sx * sy) / den;
}

namespace {

// The memory side's counters and its configuration, for a report.
nlohmann::json memory_json(const MemorySide& memory, std::uint64_t cycles) {
  nlohmann::json j = memory_counters_json(memory.cost(), cycles);
  j.update(memory_config_json(memory.params(), memory.side()));
  return j;
}

nlohmann::json io_bound_json(const std::string& algo, std::int64_t size, std::int64_t m) {
  const IoLowerBound b = tcu_io_lower_bound(algo, static_cast<double>(size), m);
  return {{"value", b.value ? nlohmann::json(*b.value) : nlohmann::json(nullptr)},
          {"M", 3 * m},
          {"B", 1},
          {"formula", b.formula},
          {"source", b.source},
          {"reason", b.value ? nlohmann::json(nullptr) : nlohmann::json(b.reason)}};
}

}  // namespace

nlohmann::json run_tcu_once(const TcuAlgorithm& algo, const TcuProblem& problem, std::int64_t m,
                            std::int64_t latency, bool weak, CellMode cell_mode,
                            const MxuMemoryParams& memory_params, MxuExecutor executor,
                            TcuMatrixProduct* product) {
  TensorUnit unit(m, latency, weak, Mode::esop, cell_mode, executor);
  MemorySide memory(memory_params, unit.side());  // one work unit: the run, cold
  unit.set_memory(&memory);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string what =
      problem.input.empty() ? "--size " + std::to_string(problem.size) + " --m " + std::to_string(m)
                            : problem.input;
  TcuRun run = out_of_memory_is_input_error(what, [&] { return algo.run(unit, problem); });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const TcuCost& c = unit.cost();
  std::int64_t size = problem.size;
  if (run.details.is_object() && run.details.contains("size") && run.details["size"].is_number())
    size = run.details["size"].get<std::int64_t>();
  const double n = tcu_theorem_n(run.details, size);
  const double bound =
      run.bound ? *run.bound : algo.bound(n, static_cast<double>(m), static_cast<double>(latency));
  const double total = static_cast<double>(c.model_time());
  nlohmann::json j;
  j["schema"] = "triada-tcu-report/1";
  j["algo"] = algo.name;
  j["theorem"] = algo.theorem;
  j["size"] = size;
  j["size_meaning"] = algo.size_meaning;
  j["n"] = n;
  j["m"] = m;
  j["latency"] = latency;
  j["weak"] = weak;
  j["executor"] = to_string(executor);
  j["seed"] = problem.seed;
  j["input"] = problem.input;
  j["verified"] = run.verified;
  j["reference"] = run.reference;
  j["details"] = run.details;
  j["tcu"] = {
      {"calls", c.calls},
      {"rows", c.rows},
      {"model_time", {{"total", c.model_time()}, {"tensor", c.tensor_time}, {"cpu", c.cpu_time}}},
      {"bound", bound},
      {"bound_formula", run.bound ? run.bound_formula : std::string(algo.bound_formula())},
      {"ratio", bound > 0 ? total / bound : std::nan("")},
      {"exponent_theorem", run.growth_exponent.value_or(algo.growth_exponent())},
      {"cell_steps", c.cell_steps},
      {"macs", c.macs},
      {"macs_dense", c.macs_dense},
      {"cell_mode", to_string(cell_mode)},
      {"substeps", substeps(cell_mode)},
      {"cycles", c.cycles}};
  j["precision"] = precision_of(run, cell_mode);
  j["memory"] = memory_json(memory, c.cycles);
  j["io_lower_bound"] = io_bound_json(algo.name, size, m);
  j["wall_seconds"] = wall;
  if (product && !run.product.empty()) *product = {size, std::move(run.product), c};
  return j;
}

std::vector<std::int64_t> tcu_default_sizes(const std::string& algo, std::int64_t m) {
  const auto s = static_cast<std::int64_t>(std::llround(std::sqrt(static_cast<double>(m))));
  if (algo == "matmul") return {32, 64, 128, 256, 512};
  if (algo == "strassen") return {32, 64, 128, 256, 512};
  if (algo == "spmm") return {256, 512, 1024, 2048};
  if (algo == "ge") return {63, 127, 255, 511, 1023};
  // Larger units need larger graphs before the n^3 term dominates; m = 4 is the slowest.
  if (algo == "tclosure")
    return m <= 4 ? std::vector<std::int64_t>{32, 64, 128, 256, 512}
                  : std::vector<std::int64_t>{64, 128, 256, 512, 1024};
  if (algo == "apsd")
    return m <= 4 ? std::vector<std::int64_t>{32, 64, 128, 256}
                  : std::vector<std::int64_t>{32, 64, 128, 256, 512};
  if (algo == "dft") {  // powers of sqrt(m) up to 2^16, at most the 6 largest
    std::vector<std::int64_t> v;
    if (s >= 2)
      for (std::int64_t n = s; n <= (1 << 16); n *= s) v.push_back(n);
    if (v.size() > 6) v.erase(v.begin(), v.end() - 6);
    return v;
  }
  if (algo == "stencil") return {32, 64, 128, 256};
  if (algo == "intmul" || algo == "karatsuba") return {1000, 4000, 16000, 64000};
  if (algo == "polyeval") return {256, 512, 1024, 2048, 4096};
  return {16, 32, 64, 128};
}

std::vector<std::int64_t> tcu_default_ms(const std::string& algo) {
  (void)algo;  // every algorithm takes 4, 16, 64 and 256 (dft and stencil need m >= 4)
  return {4, 16, 64, 256};
}

namespace {

void print_single(const nlohmann::json& r, std::ostream& out) {
  const auto& t = r["tcu"];
  const double macs = t["macs"].get<double>(), dense = t["macs_dense"].get<double>();
  out << "triada-tcu: " << r["algo"].get<std::string>() << " (" << r["theorem"].get<std::string>()
      << "), size " << r["size"].get<std::int64_t>() << " (" << r["size_meaning"].get<std::string>()
      << "), n = " << num(r["n"].get<double>()) << ", m = " << r["m"].get<std::int64_t>()
      << ", l = " << r["latency"].get<std::int64_t>()
      << (r["weak"].get<bool>() ? ", weak TCU model" : ", TCU model") << "\n";
  out << "  calls       " << t["calls"].get<std::uint64_t>() << " (rows streamed "
      << t["rows"].get<std::uint64_t>() << ")\n";
  out << "  model time  " << t["model_time"]["total"].get<std::uint64_t>() << " = tensor "
      << t["model_time"]["tensor"].get<std::uint64_t>() << " + cpu "
      << t["model_time"]["cpu"].get<std::uint64_t>() << "\n";
  out << "  bound       " << num(t["bound"].get<double>()) << "  ["
      << t["bound_formula"].get<std::string>() << "]\n";
  out << "  ratio       " << fixed(t["ratio"].get<double>(), 3) << " (model time / bound)\n";
  out << "  cell steps  " << t["cell_steps"].get<std::uint64_t>() << "\n";
  out << "  cells       " << t["cell_mode"].get<std::string>() << ", " << t["substeps"].get<int>()
      << " sub-step(s) per step, " << t["cycles"].get<std::uint64_t>() << " cycles\n";
  out << "  MACs        " << t["macs"].get<std::uint64_t>() << " of "
      << t["macs_dense"].get<std::uint64_t>() << " dense"
      << (dense > 0 ? " (" + fixed(100.0 * macs / dense, 1) + "%)" : "") << "\n";
  const auto& mem = r["memory"];
  out << "  memory      DRAM " << mib(mem["dram_read_bytes"].get<double>()) << " MiB read, "
      << mib(mem["dram_write_bytes"].get<double>()) << " MiB written ("
      << mem["word_bits"].get<int>() << "-bit words); SRAM "
      << mem["sram_reads"].get<std::uint64_t>() << " words read, "
      << mem["sram_writes"].get<std::uint64_t>() << " written; right tiles "
      << mem["tile_loads"].get<std::uint64_t>() << " loaded, "
      << mem["tile_hits"].get<std::uint64_t>() << " reused; stall "
      << mem["stall_cycles"].get<std::uint64_t>() << " cycles ("
      << fixed(100.0 * mem["stall_fraction"].get<double>(), 1) << "%)\n";
  const auto& io = r["io_lower_bound"];
  if (io["value"].is_number())
    out << "  I/O bound   " << num(io["value"].get<double>())
        << " words at M = 3m = " << io["M"].get<std::int64_t>() << ", B = 1  ["
        << io["formula"].get<std::string>() << "] (Theorem 12: Omega of it bounds weak-TCU time)\n";
  else
    out << "  I/O bound   n/a (" << io["reason"].get<std::string>() << ")\n";
  std::string facts;
  for (const auto& [k, v] : r["details"].items())
    if (v.is_primitive() && k != "input")
      facts +=
          (facts.empty() ? "" : ", ") + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  if (!facts.empty()) out << "  details     " << facts << "\n";
  const auto& p = r["precision"];
  const std::string mode = p["cell_mode"].get<std::string>();
  if (mode != "fp64")  // fp64 runs keep their summary: the check line says it all
    out << "  error       " << sci(p.contains("error") ? p["error"] : nlohmann::json(nullptr))
        << (p["error_source"].is_string() ? " (" + p["error_source"].get<std::string>() + ")"
                                          : std::string(" (the algorithm reports no error figure)"))
        << "\n";
  if (r["verified"].get<bool>())
    out << "  verified    yes (" << r["reference"].get<std::string>() << ")\n";
  else if (mode != "fp64")
    out << "  verified    not verified (cell mode " << mode
        << " computes in lower precision; check: " << r["reference"].get<std::string>() << ")\n";
  else
    out << "  verified    NO (" << r["reference"].get<std::string>() << ")\n";
}

}  // namespace

namespace {

// One point of a sweep: a unit size and a problem size.
struct SweepPoint {
  std::int64_t m = 0, size = 0;
};

// The problem sizes of a sweep at unit size m: --sizes, else the algorithm's series.
std::vector<std::int64_t> sweep_sizes(const TcuConfig& cfg, std::int64_t m) {
  return cfg.sizes.empty() ? tcu_default_sizes(cfg.algo, m) : cfg.sizes;
}

// The sweep's points in report order: unit sizes outer, problem sizes inner.
std::vector<SweepPoint> sweep_points(const TcuConfig& cfg, const std::vector<std::int64_t>& ms) {
  std::vector<SweepPoint> points;
  for (const std::int64_t m : ms)
    for (const std::int64_t size : sweep_sizes(cfg, m)) points.push_back({m, size});
  return points;
}

// The rank that runs each point: the points by decreasing problem size (then increasing m,
// the slower unit), dealt round-robin, so the largest ones spread over the ranks.
std::vector<int> sweep_owners(const std::vector<SweepPoint>& points, int ranks) {
  std::vector<size_t> order(points.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return points[a].size != points[b].size ? points[a].size > points[b].size
                                            : points[a].m < points[b].m;
  });
  std::vector<int> owner(points.size());
  for (size_t k = 0; k < order.size(); ++k) owner[order[k]] = static_cast<int>(k) % ranks;
  return owner;
}

// Every point's report object, on rank 0 (empty elsewhere): each rank runs its points, rank
// 0 gathers them. An error is the one of the first failing point in report order, thrown
// by every rank, as a serial run would meet it first.
std::vector<nlohmann::json> run_sweep_points(const TcuConfig& cfg, const TcuAlgorithm& algo,
                                             const std::vector<SweepPoint>& points, MPI_Comm comm) {
  const int rank = mpi::rank(comm);
  const std::vector<int> owner = sweep_owners(points, mpi::size(comm));
  nlohmann::json mine = nlohmann::json::object();
  std::exception_ptr failure;
  long long first_failure = std::numeric_limits<long long>::max();
  // Rank 0's progress: its own points done, of its share.
  Progress progress("triada-tcu", cfg.progress, rank == 0);
  const auto n_mine = static_cast<std::size_t>(std::count(owner.begin(), owner.end(), rank));
  std::size_t done = 0;
  for (size_t k = 0; k < points.size() && !failure && !cancel::requested(); ++k) {
    if (owner[k] != rank) continue;
    try {
      const TcuProblem p = tcu_problem(cfg, points[k].size, "");
      mine[std::to_string(k)] = run_tcu_once(algo, p, points[k].m, cfg.latency, cfg.weak,
                                             cfg.cell_mode, cfg.memory, cfg.executor);
    } catch (...) {
      failure = std::current_exception();
      first_failure = static_cast<long long>(k);
    }
    progress.update(static_cast<double>(++done) / static_cast<double>(n_mine), [&] {
      return "sweep: point " + std::to_string(done) + "/" + std::to_string(n_mine) +
             " of rank 0 (m " + std::to_string(points[k].m) + ", size " +
             std::to_string(points[k].size) + ")";
    });
  }
  progress.finish();
  mpi::sleepy_barrier(comm);
  const long long first = mpi::min_of(comm, first_failure);
  mpi::collectively(comm, [&] {
    if (failure && first == first_failure) std::rethrow_exception(failure);
  });
  std::vector<nlohmann::json> results(rank == 0 ? points.size() : 0);
  for (const std::string& part : mpi::gather_strings(comm, mine.dump(), 0)) {
    nlohmann::json theirs = nlohmann::json::parse(part);
    for (auto& [k, r] : theirs.items()) results[static_cast<size_t>(std::stoull(k))] = std::move(r);
  }
  return results;
}

void print_sweep_header(const TcuConfig& cfg, const TcuAlgorithm& algo, const std::string& formula,
                        std::ostream& out) {
  out << "triada-tcu sweep: " << algo.name << " (" << algo.theorem << "), l = " << cfg.latency
      << (cfg.weak ? ", weak TCU model" : ", TCU model") << ", bound " << formula << ", cells "
      << to_string(cfg.cell_mode) << "\n";
  out << std::setw(5) << "m" << std::setw(8) << "size" << std::setw(12) << "n" << std::setw(10)
      << "calls" << std::setw(14) << "model time" << std::setw(14) << "tensor" << std::setw(13)
      << "cpu" << std::setw(14) << "bound" << std::setw(8) << "ratio" << std::setw(9) << "verified"
      << std::setw(8) << "wall s"
      << "\n";
}

// A run's product, its cost and its bound (report key `products`).
nlohmann::json product_summary(const nlohmann::json& r) {
  const auto& t = r["tcu"];
  return {{"product", r["details"]["product"]},
          {"calls", t["calls"]},
          {"model_time", t["model_time"]},
          {"bound", t["bound"]},
          {"ratio", t["ratio"]},
          {"verified", r["verified"]}};
}

// --product both: the same problem with the classical product on a fresh unit; `r` (the
// fast run) gets `products`, both runs' summaries. Returns whether the classical run verified.
bool run_other_product(const TcuConfig& cfg, const TcuAlgorithm& algo, nlohmann::json& r) {
  TcuProblem classical = tcu_problem(cfg, cfg.size, cfg.input);
  classical.product = TcuProduct::classical;
  const nlohmann::json c = run_tcu_once(algo, classical, cfg.m, cfg.latency, cfg.weak,
                                        cfg.cell_mode, cfg.memory, cfg.executor);
  r["products"] = nlohmann::json::array({product_summary(r), product_summary(c)});
  return c["verified"].get<bool>();
}

// The product lines of spmm and apsd: each run product's model time, bound and ratio
// (--product both), else the theorem's bound under each product.
void print_products(const nlohmann::json& r, std::ostream& out) {
  const auto& d = r["details"];
  if (!d.is_object() || !d.contains("bounds")) return;
  if (r.contains("products")) {
    for (const auto& p : r["products"])
      out << "  product     " << std::left << std::setw(10) << p["product"].get<std::string>()
          << std::right << "model time " << p["model_time"]["total"].get<std::uint64_t>()
          << ", bound " << num(p["bound"].get<double>()) << ", ratio "
          << fixed(p["ratio"].get<double>(), 3)
          << (p["verified"].get<bool>() ? "" : ", NOT verified") << "\n";
    return;
  }
  out << "  product     " << d["product"].get<std::string>() << " (the theorem's bound: fast "
      << num(d["bounds"]["fast"].get<double>()) << ", classical "
      << num(d["bounds"]["classical"].get<double>()) << "; --product both runs each)\n";
}

// --sweep: a size series for each unit size, its table, the fitted growth exponents and the
// report (rank 0, also in `written`). Returns the exit code (on rank 0; 0 elsewhere).
int run_sweep(const TcuConfig& cfg, const TcuAlgorithm& algo, TextOutput& report_out,
              const Provenance& prov, MPI_Comm comm, std::ostream& out, nlohmann::json& written) {
  std::vector<std::int64_t> ms = cfg.ms;
  if (ms.empty()) ms = cfg.m > 0 ? std::vector<std::int64_t>{cfg.m} : tcu_default_ms(cfg.algo);
  nlohmann::json rows = nlohmann::json::array(), fits = nlohmann::json::array();
  bool all_ok = true;
  const bool lower = cfg.cell_mode != CellMode::fp64;
  const std::vector<SweepPoint> points = sweep_points(cfg, ms);
  const std::vector<nlohmann::json> results = run_sweep_points(cfg, algo, points, comm);
  // A sweep being stopped lacks points: it ends here.
  cancel::agree(comm);
  if (mpi::rank(comm) != 0) return 0;  // rank 0 reports; the code is broadcast after
  // The theorem's expression as the runs state it (their parameters may change it).
  const auto& first = results.front()["tcu"];
  const std::string formula = first["bound_formula"].get<std::string>();
  const double exponent = first["exponent_theorem"].get<double>();
  print_sweep_header(cfg, algo, formula, out);
  size_t next = 0;
  for (const std::int64_t m : ms) {
    std::vector<double> ns, times, bounds;
    for (const std::int64_t size : sweep_sizes(cfg, m)) {
      const nlohmann::json& r = results[next++];
      const auto& t = r["tcu"];
      nlohmann::json row = {{"m", m},
                            {"size", r["size"]},
                            {"n", r["n"]},
                            {"latency", cfg.latency},
                            {"calls", t["calls"]},
                            {"model_time", t["model_time"]},
                            {"bound", t["bound"]},
                            {"ratio", t["ratio"]},
                            {"cell_steps", t["cell_steps"]},
                            {"macs", t["macs"]},
                            {"macs_dense", t["macs_dense"]},
                            {"cycles", t["cycles"]},
                            {"memory", r["memory"]},
                            {"io_lower_bound", r["io_lower_bound"]["value"]},
                            {"max_rel_error", r["precision"]["max_rel_error"]},
                            {"verified", r["verified"]},
                            {"wall_seconds", r["wall_seconds"]}};
      all_ok = all_ok && r["verified"].get<bool>();
      ns.push_back(r["n"].get<double>());
      times.push_back(t["model_time"]["total"].get<double>());
      bounds.push_back(t["bound"].get<double>());
      out << std::setw(5) << m << std::setw(8) << size << std::setw(12) << num(ns.back())
          << std::setw(10) << t["calls"].get<std::uint64_t>() << std::setw(14)
          << t["model_time"]["total"].get<std::uint64_t>() << std::setw(14)
          << t["model_time"]["tensor"].get<std::uint64_t>() << std::setw(13)
          << t["model_time"]["cpu"].get<std::uint64_t>() << std::setw(14) << num(bounds.back())
          << std::setw(8) << fixed(t["ratio"].get<double>(), 3) << std::setw(9)
          << (r["verified"].get<bool>() ? "yes"
              : lower                   ? "no*"
                                        : "NO")
          << std::setw(8) << fixed(r["wall_seconds"].get<double>(), 2) << "\n";
      rows.push_back(row);
    }
    const double fitted = fit_loglog_slope(ns, times), fitted_bound = fit_loglog_slope(ns, bounds);
    fits.push_back({{"m", m},
                    {"fitted_exponent", std::isfinite(fitted) ? nlohmann::json(fitted) : nullptr},
                    {"bound_fitted_exponent",
                     std::isfinite(fitted_bound) ? nlohmann::json(fitted_bound) : nullptr},
                    {"theorem_exponent", exponent}});
  }
  if (lower && !all_ok)
    out << "no*: not verified (cell mode " << to_string(cfg.cell_mode)
        << " computes in lower precision; max_rel_error in the report's rows)\n";
  out << "growth exponent of the model time in n (least squares on log-log), theorem "
      << fixed(exponent, 3) << ":\n";
  for (const auto& f : fits) {
    const auto show = [](const nlohmann::json& v) {
      return v.is_number() ? fixed(v.get<double>(), 3) : std::string("n/a");
    };
    out << "  m = " << std::setw(4) << f["m"].get<std::int64_t>() << ": fitted exponent "
        << show(f["fitted_exponent"])
        << "  (the bound over the same sizes: " << show(f["bound_fitted_exponent"]) << "; theorem "
        << fixed(exponent, 3) << ")\n";
  }
  nlohmann::json report = {{"schema", "triada-tcu-report/1"},
                           {"algo", algo.name},
                           {"theorem", algo.theorem},
                           {"size_meaning", algo.size_meaning},
                           {"latency", cfg.latency},
                           {"weak", cfg.weak},
                           {"executor", to_string(cfg.executor)},
                           {"cell_mode", to_string(cfg.cell_mode)},
                           {"substeps", substeps(cfg.cell_mode)},
                           {"seed", cfg.seed},
                           {"bound_formula", formula},
                           {"exponent_theorem", exponent},
                           {"verified", all_ok},
                           {"sweep", rows},
                           {"fits", fits}};
  const auto& details = results.front()["details"];
  if (details.contains("product")) report["product"] = details["product"];
  written = stage_report(report_out, report, prov);
  return all_ok || lower ? 0 : 4;
}

}  // namespace

TcuJob::TcuJob(TcuConfig cfg) : cfg_(std::move(cfg)) {
  validate(cfg_);
}

TcuResult TcuJob::run(MPI_Comm comm, std::ostream& out) const {
  const JobEntry entry(comm, config_fields(cfg_), "TcuConfig");
  const TcuConfig& cfg = cfg_;
  std::optional<tcu_in::MemoryInput> arrays;  // the algorithms read cfg.input from them
  if (!cfg.arrays.empty()) arrays.emplace(cfg.input, cfg.arrays);
  const TcuAlgorithm* algo = nullptr;
  TextOutput report_out;
  mpi::collectively(comm, [&] {
    algo = &find_tcu_algorithm(cfg.algo);
    if (mpi::rank(comm) == 0) report_out = report_file(cfg);
  });
  const Provenance prov = run_provenance(comm, "triada-tcu", cfg.command_line);
  TcuResult result;
  nlohmann::json report;  // rank 0's
  if (cfg.sweep) {
    result.code = run_sweep(cfg, *algo, report_out, prov, comm, out, report);
  } else {  // one run: its calls depend on each other, rank 0 runs it alone
    on_rank0(comm, [&] {
      TcuMatrixProduct product;
      nlohmann::json r =
          run_tcu_once(*algo, tcu_problem(cfg, cfg.size, cfg.input), cfg.m, cfg.latency, cfg.weak,
                       cfg.cell_mode, cfg.memory, cfg.executor, arrays ? &product : nullptr);
      bool ok = r["verified"].get<bool>();
      if (cfg.both_products) ok = run_other_product(cfg, *algo, r) && ok;
      print_single(r, out);
      print_products(r, out);
      report = stage_report(report_out, r, prov);
      if (!product.values.empty()) result.product = std::move(product);
      result.code = ok || cfg.cell_mode != CellMode::fp64 ? 0 : 4;
    });
  }
  mpi::bcast(comm, std::span<int>(&result.code, 1), 0);
  // Rank 0's report is published unless the run is being stopped.
  cancel::last_stop(comm);
  mpi::collectively(comm, [&] { report_out.publish(); });
  // Every rank's report is rank 0's as written (a NaN figure read back as null).
  const std::string text =
      mpi::rank(comm) == 0 ? report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)
                           : std::string();
  result.report = nlohmann::json::parse(mpi::bcast_string(comm, text, 0));
  return result;
}

}  // namespace triada
