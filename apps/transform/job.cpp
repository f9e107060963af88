#include "apps/transform/job.hpp"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "apps/common/option_error.hpp"
#include "apps/common/world_plan.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/memory.hpp"
#include "counters/progress.hpp"
#include "engine/engine.hpp"
#include "geometry/memory_model.hpp"
#include "io/output_files.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"
#include "mesh/topology.hpp"
#include "report/report.hpp"

namespace triada {

namespace {

// What rank 0 learns from the files before anything runs; broadcast to every rank.
struct ProblemFacts {
  ext3 in_shape{};
  ext3 out_shape{};
  int input_complex = 0;
  int coeffs_complex = 0;
  int initial_complex = 0;  // --initial's Y0 (its shape is out_shape)
};

// "dft,dct,wht": the transform of each axis.
std::string transform_list(const TransformConfig& cfg) {
  std::string kinds;
  for (int a = 0; a < 3; ++a) kinds += (a ? "," : "") + to_string(cfg.kinds[a]);
  return kinds;
}

std::string axis_name(const TransformConfig& cfg, int axis) {
  return "axis " + std::to_string(axis) + " of " + cfg.input.str();
}

// The matrix streamed along `axis` (called on the rank hosting that actuator, and by
// rank 0 during validation).
CoeffMatrix coefficients_for(const TransformConfig& cfg, int axis, index_t n) {
  const TransformKind kind = cfg.kinds[axis - 1];
  if (kind != TransformKind::gemt)
    return make_coefficients(kind, n, cfg.norm, cfg.inverse, axis_name(cfg, axis));
  const std::string dset = "/C" + std::to_string(axis);
  CoeffMatrix c = read_matrix(cfg.coeffs, dset);
  const std::string what = cfg.coeffs + ":" + dset;
  if (c.rows != n)
    throw input_error(what + ": has " + std::to_string(c.rows) + " rows, but " +
                      axis_name(cfg, axis) + " has " + std::to_string(n) + " elements");
  // Coefficients must be finite: the executors skip zero pivots, exact only when
  // 0 * c == 0 (an Inf or NaN coefficient would make ESOP and dense disagree).
  for (index_t i = 0; i < c.rows; ++i)
    for (index_t k = 0; k < c.cols; ++k)
      if (!std::isfinite(c(i, k).real()) || !std::isfinite(c(i, k).imag()))
        throw input_error(what + ": coefficient (" + std::to_string(i) + ", " + std::to_string(k) +
                          ") is not finite");
  if (cfg.inverse) c = invert(c, what);
  return c;
}

// The report and trace files, probed by rank 0 before any work and published together
// with the output at the end (io/output_files.hpp).
struct TextOutputs {
  TextOutput report;
  TextOutput trace;
};

// Every output can be written and none is the same file as an input or another output.
TextOutputs check_outputs(const TransformConfig& cfg) {
  std::vector<RunFile> files = {
      {cfg.input.file, "--input", false, true},
      {cfg.coeffs, "--coeffs", false, true},
      {cfg.mesh.file, "--mesh", false, false},
      {cfg.output.file, "--output", true, true},
      {cfg.report, "--report", true, false},
      {cfg.trace, "--trace", true, false},
      // Not marked HDF5: Y0 may not even share a file with the output it seeds.
      {cfg.initial.file, "--initial", false, false}};
  check_distinct(files);
  check_output_writable(cfg.output, cfg.force);
  TextOutputs t;
  if (!cfg.report.empty()) t.report = TextOutput(cfg.report, cfg.force);
  if (!cfg.trace.empty()) t.trace = TextOutput(cfg.trace, cfg.force);
  return t;
}

// An output dataset in the input's own file must not be the input itself.
void check_not_input(const TransformConfig& cfg, const TensorInfo& info) {
  const std::string out = output_dataset_path(cfg.output);
  std::error_code ec;
  if (out == info.dataset && std::filesystem::equivalent(cfg.input.file, cfg.output.file, ec))
    throw input_error(cfg.output.str() + ": --output is the input dataset " + cfg.input.file + ":" +
                      info.dataset);
}

// --initial: Y0 must be a tensor of the output's shape, complex only if the output is.
TensorInfo check_initial(const TransformConfig& cfg, ProblemFacts& f) {
  const TensorInfo y0 = inspect_tensor(cfg.initial);
  const std::string name = cfg.initial.file + ":" + y0.dataset;
  if (y0.shape != f.out_shape)
    throw input_error(name + ": --initial has shape " + to_string(y0.shape) +
                      ", but the output has shape " + to_string(f.out_shape));
  if (y0.is_complex && !f.input_complex && !f.coeffs_complex)
    throw input_error(name + ": --initial is complex (" + y0.type_name +
                      "), but the output of this transform is real");
  f.initial_complex = y0.is_complex ? 1 : 0;
  return y0;
}

ProblemFacts validate(const TransformConfig& cfg, TensorInfo& info, TensorInfo& y0,
                      TextOutputs& texts) {
  ProblemFacts f;
  texts = check_outputs(cfg);
  info = inspect_tensor(cfg.input);
  check_not_input(cfg, info);
  f.in_shape = info.shape;
  f.input_complex = info.is_complex;
  for (int axis = 1; axis <= 3; ++axis) {
    const CoeffMatrix c = coefficients_for(cfg, axis, f.in_shape[axis - 1]);
    f.out_shape[axis - 1] = c.cols;
    f.coeffs_complex |= c.is_complex ? 1 : 0;
  }
  if (!cfg.initial.file.empty()) y0 = check_initial(cfg, f);
  return f;
}

// max |y - y_fp64|, sum |y - y_fp64| and max |y_fp64| over the world, y_fp64 an fp64 run of
// the same input.
template <class T>
std::array<double, 3> fp64_error(const Topology& topo, const EngineOptions& opt,
                                 std::vector<T> input, const std::vector<T>* initial,
                                 const std::vector<T>& out) {
  EngineOptions ref_opt = opt;
  ref_opt.cell_mode = CellMode::fp64;
  ref_opt.on_progress = nullptr;
  const EngineResult<T> ref = run_engine<T>(topo, ref_opt, std::move(input), nullptr, initial);
  std::array<double, 3> mine{0, 0, 0};
  for (size_t i = 0; i < ref.out.size(); ++i) {
    const double d = std::abs(out[i] - ref.out[i]);
    mine[0] = std::max(mine[0], d);
    mine[1] += d;
    mine[2] = std::max(mine[2], std::abs(ref.out[i]));
  }
  std::array<double, 3> mx{0, 0, 0}, err{0, 0, 0};
  mpi::allreduce<double>(topo.world(), mine, mx, mpi::Op::max);
  mpi::allreduce<double>(topo.world(), std::span<const double>(&mine[1], 1),
                         std::span<double>(&err[1], 1), mpi::Op::sum);
  err[0] = mx[0];
  err[2] = mx[2];
  return err;
}

// This brick's part of the output with its attributes, finished but not yet published.
template <class T>
void write_output(const TransformConfig& cfg, const TensorInfo& info, const TensorInfo& y0,
                  const Plan& plan, const Topology& topo, const EngineResult<T>& res,
                  std::optional<TensorWriter>& writer) {
  const RunCounters& rc = res.counters;
  TensorWriter& w =
      writer.emplace(topo.bricks(), cfg.output, plan.out_shape, is_complex_v<T>, cfg.force);
  w.write_brick(res.out_box, res.out);
  w.set_attribute("transform", transform_list(cfg));
  w.set_attribute("norm", to_string(cfg.norm));
  w.set_attribute("direction", cfg.inverse ? "inverse" : "forward");
  w.set_attribute("stage_order", to_string(plan.stage_order));
  w.set_attribute("esop", cfg.mesh.mode == Mode::esop ? "on" : "off");
  w.set_attribute("cell_mode", to_string(cfg.mesh.cell_mode));
  w.set_attribute("input", cfg.input.file + ":" + info.dataset);
  if (!cfg.initial.file.empty()) w.set_attribute("initial", cfg.initial.file + ":" + y0.dataset);
  w.set_attribute("mesh", std::vector<index_t>(plan.mesh.begin(), plan.mesh.end()));
  w.set_attribute("brick_ranks",
                  std::vector<index_t>(plan.ranks.grid.begin(), plan.ranks.grid.end()));
  std::vector<index_t> steps;
  for (const auto& s : rc.stages) steps.push_back(static_cast<index_t>(s.steps));
  w.set_attribute("steps_per_stage", steps);
  w.set_attribute("steps", std::vector<index_t>{static_cast<index_t>(rc.total_steps())});
  w.finish();
}

// The report's problem, precision and memory figures (report/report.hpp).
template <class T>
ReportContext report_context(const TransformConfig& cfg, const TensorInfo& info,
                             const TensorInfo& y0, const Plan& plan, const MemoryModelOptions& mem,
                             const EngineOptions& opt, const std::array<double, 3>& err,
                             const std::vector<std::int64_t>& mem_all) {
  ReportContext ctx;
  ctx.app = "triada-transform";
  const std::string kinds = transform_list(cfg);
  ctx.problem = {{"input", cfg.input.file + ":" + info.dataset},
                 {"input_type", info.type_name},
                 {"output", cfg.output.str()},
                 {"transform", kinds},
                 {"direction", cfg.inverse ? "inverse" : "forward"},
                 {"norm", to_string(cfg.norm)},
                 {"element", is_complex_v<T> ? "complex128" : "float64"},
                 {"shuffle_seed", cfg.shuffle_seed}};
  if (!cfg.coeffs.empty()) ctx.problem["coeffs"] = cfg.coeffs;
  // The affine form's Y0 (null: none, Y = X x1 C1 x2 C2 x3 C3).
  ctx.problem["initial"] = cfg.initial.file.empty()
                               ? nlohmann::json(nullptr)
                               : nlohmann::json(cfg.initial.file + ":" + y0.dataset);
  if (!cfg.initial.file.empty()) ctx.problem["initial_type"] = y0.type_name;
  ctx.mesh_config = cfg.mesh.file;
  ctx.executor = to_string(opt.executor);
  ctx.precision = {{"cell_mode", to_string(cfg.mesh.cell_mode)},
                   {"substeps", substeps(cfg.mesh.cell_mode, is_complex_v<T>)},
                   {"mac_pj", cfg.mesh.energy_for(is_complex_v<T>).mac_pj()}};
  if (cfg.check) {
    const double n = static_cast<double>(plan.out_shape[0] * plan.out_shape[1] * plan.out_shape[2]);
    const double scale = err[2] > 0 ? err[2] : 1.0;
    ctx.precision["check"] = {
        {"reference", "fp64 run of the same input"},
        {"max_rel_error", err[0] / scale},
        {"mean_rel_error", err[1] / n / scale},
        {"definition", "|y - y_fp64| / max|y_fp64|, max and mean over elements"}};
  }
  for (int r = 0; r < plan.ranks.world_size; ++r) {
    ctx.peak_rss_bytes.push_back(mem_all[3 * r]);
    ctx.baseline_rss_bytes.push_back(mem_all[3 * r + 1]);
    ctx.brick_tensor_bytes.push_back(mem_all[3 * r + 2]);
    const MemoryPrediction p = predict_memory(plan, r, mem, cfg.input.str());
    ctx.predicted_peak_bytes.push_back(p.run);
    ctx.predicted_window_bytes.push_back(p.window_mapped);
  }
  return ctx;
}

template <class T>
void run_typed(const TransformConfig& cfg, const TensorInfo& info, const TensorInfo& y0info,
               const Plan& plan, const MemoryModelOptions& mem, TextOutputs& texts, MPI_Comm world,
               std::ostream& out, std::chrono::steady_clock::time_point t0) {
  Topology topo(plan, world, sizeof(T));
  const long baseline_rss = current_rss_bytes();
  std::vector<T> in;
  const Brick in_box = topo.cells().intersect(whole(plan.in_shape));
  const Brick out_box = topo.cells().intersect(whole(plan.out_shape));
  reserve_huge(in, static_cast<std::size_t>(in_box.count()));
  mpi::collectively(topo.world(), [&] {
    if (topo.is_brick()) read_brick(topo.bricks(), cfg.input.file, info, in_box, in);
  });
  // --initial: each brick reads its part of Y0, the last stage's W box, by hyperslab.
  std::vector<T> y0;
  const std::vector<T>* initial = cfg.initial.file.empty() ? nullptr : &y0;
  if (initial)
    mpi::collectively(topo.world(), [&] {
      if (topo.is_brick()) read_brick(topo.bricks(), cfg.initial.file, y0info, out_box, y0);
    });

  EngineOptions opt;
  opt.executor = for_option("--executor", [&] { return parse_executor(cfg.executor); });
  opt.mode = cfg.mesh.mode;
  opt.cell_mode = cfg.mesh.cell_mode;
  opt.shuffle_seed = cfg.shuffle_seed;
  opt.coefficients = [&](int axis) { return coefficients_for(cfg, axis, plan.in_shape[axis - 1]); };
  Progress progress(!cfg.quiet && topo.world_rank() == 0, static_cast<int>(plan.stages.size()));
  if (topo.world_rank() == 0)
    opt.on_progress = [&](int s, std::uint64_t done, std::uint64_t total) {
      progress.update(s, plan.stages[s].axis, done, total);
    };
  // --check keeps the input to rerun it in fp64 afterwards.
  std::vector<T> check_input;
  if (cfg.check) check_input = in;
  const auto ts = std::chrono::steady_clock::now();
  EngineResult<T> res = run_engine<T>(topo, opt, std::move(in), nullptr, initial);
  progress.finish();
  // Peak memory per rank against what its brick's registers need.
  const std::array<std::int64_t, 3> mem_mine{
      peak_rss_bytes(), baseline_rss,
      static_cast<std::int64_t>(std::max(in_box.count(), out_box.count()) *
                                static_cast<index_t>(sizeof(T)))};
  // On rank 0 only, the one that reports.
  const std::vector<std::int64_t> mem_all = mpi::gather<std::int64_t>(topo.world(), mem_mine, 0);
  const double sim_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();

  const RunCounters& rc = res.counters;
  // Error of the output against an fp64 run of the same input (relative to max |fp64|).
  std::array<double, 3> err{0, 0, 0};  // max |d|, sum |d|, max |ref|
  if (cfg.check) err = fp64_error(topo, opt, std::move(check_input), initial, res.out);
  // Every output is finished (written, checked, on disk) before any is published.
  std::optional<TensorWriter> writer;
  mpi::collectively(topo.world(), [&] {
    if (topo.is_brick()) write_output(cfg, info, y0info, plan, topo, res, writer);
  });

  std::string summary;  // rank 0's, printed once everything is published
  mpi::collectively(topo.world(), [&] {
    if (topo.world_rank() != 0) return;
    ReportContext ctx = report_context<T>(cfg, info, y0info, plan, mem, opt, err, mem_all);
    ctx.esop = cfg.mesh.mode == Mode::esop;
    ctx.energy = cfg.mesh.energy_for(is_complex_v<T>);
    ctx.physical = physical_model(plan, rc, cfg.mesh.physical, ctx.energy, cfg.mesh.cell_mode,
                                  is_complex_v<T>);
    ctx.physical_params = cfg.mesh.physical;
    ctx.sim_seconds = sim_seconds;
    ctx.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto report = make_report(plan, rc, ctx);
    // A dataset name from a file may hold bytes that are not UTF-8: shown as U+FFFD.
    texts.report.stage(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    texts.trace.stage(trace_csv(plan, rc, &*ctx.physical));
    summary = summary_text(plan, rc, ctx);
  });
  mpi::collectively(topo.world(), [&] {
    if (writer) writer->publish();
    texts.report.publish();
    texts.trace.publish();
  });
  if (!cfg.quiet) out << summary << std::flush;
}

// What the memory model needs to know about this run (geometry/memory_model.hpp).
MemoryModelOptions memory_options(const TransformConfig& cfg, bool complex_run, bool one_node) {
  MemoryModelOptions m;
  m.element_bytes = complex_run ? sizeof(cplx) : sizeof(double);
  m.cell_bytes = complex_run ? sizeof(Cell<cplx>) : sizeof(Cell<double>);
  m.reference =
      for_option("--executor", [&] { return parse_executor(cfg.executor); }) == Executor::reference;
  m.check = cfg.check;
  for (TransformKind k : cfg.kinds)
    if (k == TransformKind::gemt && cfg.inverse) m.coeff_copies = 3;  // Gauss-Jordan: c, a, inv
  m.one_node = one_node;
  m.binary64_kernels = cfg.mesh.cell_mode == CellMode::fp64;  // other modes read planes in place
  m.initial = !cfg.initial.file.empty();
  return m;
}

}  // namespace

void run_transform_job(const TransformConfig& cfg, MPI_Comm world, std::ostream& out) {
  const auto t0 = std::chrono::steady_clock::now();
  const int rank = mpi::rank(world);

  // 1. Rank 0 checks every input before any rank does work; all ranks agree on the verdict.
  ProblemFacts facts;
  TensorInfo info, y0info;
  TextOutputs texts;  // rank 0's
  mpi::collectively(world, [&] {
    if (rank == 0) facts = validate(cfg, info, y0info, texts);
  });
  mpi::bcast_bytes(world, std::span<ProblemFacts>(&facts, 1), 0);
  info.dataset = mpi::bcast_string(world, info.dataset, 0);
  info.type_name = mpi::bcast_string(world, info.type_name, 0);
  info.shape = facts.in_shape;
  info.is_complex = facts.input_complex != 0;
  y0info.dataset = mpi::bcast_string(world, y0info.dataset, 0);
  y0info.type_name = mpi::bcast_string(world, y0info.type_name, 0);
  y0info.shape = facts.out_shape;
  y0info.is_complex = facts.initial_complex != 0;

  // 2. Plan (plain data, identical on every rank).
  PlanRequest req;
  req.in_shape = facts.in_shape;
  req.out_shape = facts.out_shape;
  req.mesh = cfg.mesh.cells;
  req.stage_order = cfg.stage_order;
  req.grid = cfg.mesh.grid;
  req.actuators = cfg.mesh.actuators;
  const Plan plan = plan_for_world(world, req);

  // 3. Memory: a node that cannot hold its ranks' predicted peak refuses the run before
  // anything is allocated; an allocation that fails anyway is an input error too.
  const bool complex_run = facts.input_complex || facts.coeffs_complex;
  const bool one_node = on_one_node(world);
  const std::string what =
      cfg.input.file + ":" + info.dataset + ": shape " + to_string(plan.in_shape);
  MemoryModelOptions mem;
  MemoryPrediction need;
  mpi::collectively(world, [&] {
    mem = memory_options(cfg, complex_run, one_node);
    need = predict_memory(plan, rank, mem, what);
  });
  require_node_memory(world, need.node_share(), what);
  require_node_shared_memory(world, need.window_own, what);

  // 4. Run in the element type the data needs.
  out_of_memory_is_input_error(what, [&] {
    if (complex_run)
      run_typed<cplx>(cfg, info, y0info, plan, mem, texts, world, out, t0);
    else
      run_typed<double>(cfg, info, y0info, plan, mem, texts, world, out, t0);
  });
}

}  // namespace triada
