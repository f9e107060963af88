#include "jobs/transform_job.hpp"

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "config/options.hpp"
#include "core/checked.hpp"
#include "core/error.hpp"
#include "core/finite.hpp"
#include "core/memory.hpp"
#include "counters/progress.hpp"
#include "engine/engine.hpp"
#include "geometry/layout_quality.hpp"
#include "geometry/memory_model.hpp"
#include "io/output_files.hpp"
#include "io/xdmf.hpp"
#include "jobs/job_entry.hpp"
#include "jobs/memory_tensors.hpp"
#include "jobs/provenance.hpp"
#include "jobs/transform_activity.hpp"
#include "jobs/transform_run.hpp"
#include "jobs/world_plan.hpp"
#include "mesh/cancel.hpp"
#include "mesh/mpi.hpp"
#include "mesh/node_memory.hpp"
#include "mesh/topology.hpp"
#include "physical/band.hpp"
#include "physical/chip.hpp"
#include "report/report.hpp"

namespace triada {

namespace {

// A value as its file holds it: a real file's values are read into complex numbers.
std::string file_value(double v, bool) {
  return value_text(v);
}
std::string file_value(const cplx& v, bool complex_file) {
  return complex_file ? value_text(v) : value_text(v.real());
}

std::string axis_name(const TensorNames& names, int axis) {
  return "axis " + std::to_string(axis) + " of " + names.input_given;
}

// The matrix streamed along `axis` (called on the rank hosting that actuator, and by
// rank 0 during validation).
CoeffMatrix coefficients_for(const TransformConfig& cfg, TransformTensors& tensors,
                             const TensorNames& names, int axis, index_t n) {
  const TransformKind kind = cfg.kinds[axis - 1];
  if (kind != TransformKind::gemt)
    return make_coefficients(kind, n, cfg.norm, cfg.inverse, axis_name(names, axis));
  std::string what;
  CoeffMatrix c = tensors.gemt_matrix(axis, what);
  if (c.rows != n)
    throw input_error(what + ": has " + std::to_string(c.rows) + " rows, but " +
                      axis_name(names, axis) + " has " + std::to_string(n) + " elements");
  if (const std::size_t at = first_non_finite(c.data); at < c.data.size())  // the rule
    throw_non_finite(what, at, {c.rows, c.cols}, file_value(c.data[at], c.is_complex));
  if (cfg.inverse) c = invert(c, what);
  return c;
}

// The report and trace files, probed by rank 0 before any work and published together
// with the output at the end (io/output_files.hpp).
struct TextOutputs {
  TextOutput report;
  TextOutput trace;
  TextOutput batches;        // --trace's time split per piece (batch_trace_path)
  TextOutput activity_xdmf;  // --activity's sidecar
};

// Every output can be written (after check_problem's check that none is the same file as
// an input or another output).
TextOutputs probe_outputs(const TransformConfig& cfg, TransformTensors& tensors) {
  tensors.check_output();
  TextOutputs t;
  t.activity_xdmf = probe_activity(cfg);
  if (!cfg.report.empty()) t.report = TextOutput(cfg.report, cfg.force);
  if (!cfg.trace.empty()) t.trace = TextOutput(cfg.trace, cfg.force);
  if (!batch_trace_path(cfg.trace).empty())
    t.batches = TextOutput(batch_trace_path(cfg.trace), cfg.force);
  return t;
}

// --initial: Y0 must be a tensor of the output's shape, complex only if the output is.
void check_initial(const TensorInfo& y0, const std::string& name, ProblemFacts& f) {
  if (y0.shape != f.out_shape)
    throw input_error(name + ": --initial has shape " + to_string(y0.shape) +
                      ", but the output has shape " + to_string(f.out_shape));
  if (y0.is_complex && !f.input_complex && !f.coeffs_complex)
    throw input_error(name + ": --initial is complex (" + y0.type_name +
                      "), but the output of this transform is real");
  f.initial_complex = y0.is_complex ? 1 : 0;
  f.initial = 1;
}

// C_axis's facts without building or reading it: K and whether it is complex.
CoeffMatrix coefficient_facts(const TransformConfig& cfg, TensorFacts& tensors,
                              const TensorNames& names, int axis, index_t n) {
  const TransformKind kind = cfg.kinds[axis - 1];
  if (kind != TransformKind::gemt) {
    check_transform_size(kind, n, axis_name(names, axis));
    return {n, n, kind == TransformKind::dft, {}};
  }
  std::string what;
  const CoeffMatrix c = tensors.gemt_facts(axis, what);
  if (c.rows != n)
    throw input_error(what + ": has " + std::to_string(c.rows) + " rows, but " +
                      axis_name(names, axis) + " has " + std::to_string(n) + " elements");
  if (cfg.inverse) check_square(c, what);
  return c;
}

// No output of the run is the same file as an input or another output.
void check_files(const TransformConfig& cfg, const TensorFacts& tensors) {
  std::vector<RunFile> files = tensors.run_files();
  for (RunFile& f : activity_files(cfg)) files.push_back(std::move(f));
  check_distinct(files);
}

// Rank 0 checks every input before any rank does work: what needs no data as --dry-run and
// --model-only check it, then what only the data shows (each matrix read or built:
// finite, invertible with --inverse, within memory).
ProblemFacts validate(const TransformConfig& cfg, TransformTensors& tensors, TensorInfo& info,
                      TensorInfo& y0, TextOutputs& texts) {
  const ProblemFacts f =
      check_problem(cfg, tensors, info, y0, [&] { texts = probe_outputs(cfg, tensors); });
  const TensorNames names = tensors.names(info, y0);
  for (int axis = 1; axis <= 3; ++axis)
    coefficients_for(cfg, tensors, names, axis, f.in_shape[axis - 1]);
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
  ref_opt.activity = nullptr;
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

// Everything a run shares between its phases once rank 0's facts are known everywhere.
struct Job {
  const TransformConfig& cfg;
  TransformTensors& tensors;
  TensorInfo info, y0info;
  TensorNames names;
  Plan plan;
  MemoryModelOptions mem;
  TextOutputs texts;  // rank 0's
  MPI_Comm world;
  std::ostream& out;
  std::chrono::steady_clock::time_point t0;
  Provenance provenance;    // rank 0's, on every rank (the output's attributes, the report)
  int ranks_per_node = 1;   // on rank 0's node (the time model's)
  CellActivity activity{};  // --activity: this brick's record of the run
  std::optional<TensorWriter> activity_file{};
};

// The report's problem, precision and memory figures (report/report.hpp).
template <class T>
ReportContext report_context(const Job& job, const EngineOptions& opt,
                             const std::array<double, 3>& err,
                             const std::vector<std::int64_t>& mem_all) {
  const TransformConfig& cfg = job.cfg;
  const Plan& plan = job.plan;
  ReportContext ctx;
  ctx.app = "triada-transform";
  ctx.provenance = job.provenance;
  ctx.problem = {{"input", job.names.input},
                 {"input_type", job.info.type_name},
                 {"output", job.names.output},
                 {"transform", transform_list(cfg)},
                 {"direction", cfg.inverse ? "inverse" : "forward"},
                 {"norm", to_string(cfg.norm)},
                 {"element", is_complex_v<T> ? "complex128" : "float64"},
                 {"shuffle_seed", cfg.shuffle_seed}};
  if (!cfg.coeffs.empty()) ctx.problem["coeffs"] = cfg.coeffs;
  if (cfg.xdmf) ctx.problem["output_xdmf"] = xdmf_path(cfg.output.file);
  if (!cfg.activity.empty()) {
    ctx.problem["activity"] = cfg.activity;
    ctx.problem["activity_xdmf"] = xdmf_path(cfg.activity);
  }
  // The affine form's Y0 (null: none, Y = X x1 C1 x2 C2 x3 C3).
  ctx.problem["initial"] =
      job.names.initial.empty() ? nlohmann::json(nullptr) : nlohmann::json(job.names.initial);
  if (!job.names.initial.empty()) ctx.problem["initial_type"] = job.y0info.type_name;
  ctx.mesh_config = cfg.mesh.file;
  ctx.executor = to_string(opt.executor);
  ctx.kernels = kernels_json();
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
    const MemoryPrediction p = predict_memory(plan, r, job.mem, job.names.input_given);
    ctx.predicted_peak_bytes.push_back(p.run);
    ctx.predicted_window_bytes.push_back(p.window_mapped);
  }
  return ctx;
}

// The engine's options for this run; progress lines on world rank 0.
EngineOptions engine_options(Job& job, const Topology& topo, Progress& progress) {
  const TransformConfig& cfg = job.cfg;
  EngineOptions opt;
  opt.executor = named("--executor", [&] { return parse_executor(cfg.executor); });
  opt.mode = cfg.mesh.mode;
  opt.cell_mode = cfg.mesh.cell_mode;
  opt.shuffle_seed = cfg.shuffle_seed;
  opt.pivot_transport = cfg.transport;
  opt.record_batches = !cfg.trace.empty();
  if (!cfg.activity.empty()) opt.activity = &job.activity;
  opt.coefficients = [&job](int axis) {
    return coefficients_for(job.cfg, job.tensors, job.names, axis, job.plan.in_shape[axis - 1]);
  };
  if (topo.world_rank() == 0)
    opt.on_progress = [&job, &progress](int s, std::uint64_t done, std::uint64_t total) {
      const int stages = static_cast<int>(job.plan.stages.size());
      progress.update(stage_fraction(s, stages, done, total), [&] {
        return "stage " + std::to_string(s + 1) + "/" + std::to_string(stages) + " (axis " +
               std::to_string(job.plan.stages[s].axis) + "): step " + std::to_string(done) + "/" +
               std::to_string(total);
      });
    };
  return opt;
}

// The tensor's C-order index of element `i` of `box` (C order within the brick).
std::int64_t global_index(const Brick& box, const ext3& shape, std::size_t i) {
  const auto e = box.extents();
  const auto k = static_cast<index_t>(i);
  const index_t i1 = box.lo[0] + k / (e[1] * e[2]), i2 = box.lo[1] + k / e[2] % e[1],
                i3 = box.lo[2] + k % e[2];
  return (i1 * shape[1] + i2) * shape[2] + i3;
}

// Refuses a tensor holding a non-finite value (core/finite.hpp: the rule), naming its first
// element in C order, on every rank: the ranks agree on the lowest index any brick holds,
// and its owner gives the message.
template <class T>
void require_finite_tensor(const Topology& topo, const std::vector<T>& mine, const Brick& box,
                           const TensorInfo& info, const std::string& name) {
  constexpr auto none = std::numeric_limits<std::int64_t>::max();
  const std::size_t at = topo.is_brick() ? first_non_finite(mine) : mine.size();
  const std::int64_t global = at < mine.size() ? global_index(box, info.shape, at) : none;
  const std::int64_t first = mpi::min_of(topo.world(), global);
  mpi::collectively(topo.world(), [&] {
    if (first != none && global == first)
      throw_non_finite(name, static_cast<std::size_t>(first),
                       {info.shape[0], info.shape[1], info.shape[2]},
                       file_value(mine[at], info.is_complex));
  });
}

// This brick's parts of X and (with an initial output) of Y0, the last stage's W box.
template <class T>
void read_bricks(Job& job, const Topology& topo, std::vector<T>& in, std::vector<T>& y0) {
  const Brick in_box = topo.cells().intersect(whole(job.plan.in_shape));
  const Brick out_box = topo.cells().intersect(whole(job.plan.out_shape));
  reserve_huge(in, static_cast<std::size_t>(in_box.count()));
  mpi::collectively(topo.world(), [&] {
    if (topo.is_brick()) job.tensors.read(topo, job.info, false, in_box, in);
  });
  require_finite_tensor(topo, in, in_box, job.info, job.names.input);
  if (!job.cfg.initial.file.empty()) {
    mpi::collectively(topo.world(), [&] {
      if (topo.is_brick()) job.tensors.read(topo, job.y0info, true, out_box, y0);
    });
    require_finite_tensor(topo, y0, out_box, job.y0info, job.names.initial);
  }
}

// Every rank's peak memory, baseline and brick bytes, on world rank 0 (empty elsewhere).
template <class T>
std::vector<std::int64_t> memory_figures(const Job& job, const Topology& topo, long baseline_rss) {
  const index_t brick = std::max(topo.cells().intersect(whole(job.plan.in_shape)).count(),
                                 topo.cells().intersect(whole(job.plan.out_shape)).count());
  const std::array<std::int64_t, 3> mine{
      peak_rss_bytes(), baseline_rss,
      static_cast<std::int64_t>(brick * static_cast<index_t>(sizeof(T)))};
  return mpi::gather<std::int64_t>(topo.world(), mine, 0);
}

// Rank 0: the report, staged with the trace, and the summary.
template <class T>
nlohmann::json report_on_rank0(Job& job, const RunCounters& rc, const EngineOptions& opt,
                               const std::array<double, 3>& err,
                               const std::vector<std::int64_t>& mem_all, double sim_seconds,
                               std::string& summary) {
  const TransformConfig& cfg = job.cfg;
  ReportContext ctx = report_context<T>(job, opt, err, mem_all);
  ctx.esop = cfg.mesh.mode == Mode::esop;
  ctx.energy = cfg.mesh.energy_for(is_complex_v<T>);
  ctx.physical = with_range(job.plan, rc, cfg.mesh.physical, ctx.energy, cfg.mesh.cell_mode,
                            is_complex_v<T>, !job.names.initial.empty());
  ctx.physical_params = cfg.mesh.physical;
  ctx.machine = cfg.mesh.machine;
  ctx.model = model_stages(job.plan, cfg.mesh.machine, sizeof(T), model_transport(cfg.transport),
                           job.ranks_per_node);
  ctx.sim_seconds = sim_seconds;
  ctx.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - job.t0).count();
  nlohmann::json report = make_report(job.plan, rc, ctx);
  // A dataset name from a file may hold bytes that are not UTF-8: shown as U+FFFD.
  job.texts.report.stage(report.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                         "\n");
  job.texts.trace.stage(trace_csv(job.plan, rc, &*ctx.physical));
  job.texts.batches.stage(batch_trace_csv(job.plan, rc));
  summary = summary_text(job.plan, rc, ctx);
  return report;
}

template <class T>
TransformResult run_typed(Job& job) {
  const TransformConfig& cfg = job.cfg;
  // --transport broadcast uses no shared window: none is allocated (/dev/shm) or mapped.
  Topology topo(job.plan, job.world, cfg.transport == PivotTransport::broadcast ? 0 : sizeof(T));
  const long baseline_rss = current_rss_bytes();
  std::vector<T> in, y0;
  read_bricks(job, topo, in, y0);
  const std::vector<T>* initial = cfg.initial.file.empty() ? nullptr : &y0;
  Progress progress("triada-transform", cfg.progress, !cfg.quiet && topo.world_rank() == 0);
  const EngineOptions opt = engine_options(job, topo, progress);
  // --check keeps the input to rerun it in fp64 afterwards.
  std::vector<T> check_input;
  if (cfg.check) check_input = in;
  const auto ts = std::chrono::steady_clock::now();
  EngineResult<T> res = run_engine<T>(topo, opt, std::move(in), nullptr, initial);
  progress.finish();
  const std::vector<std::int64_t> mem_all = memory_figures<T>(job, topo, baseline_rss);
  const double sim_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
  // Error of the output against an fp64 run of the same input (relative to max |fp64|).
  std::array<double, 3> err{0, 0, 0};  // max |d|, sum |d|, max |ref|
  if (cfg.check) err = fp64_error(topo, opt, std::move(check_input), initial, res.out);
  const RunCounters& rc = res.counters;  // write() may take res.out, never the counters
  // Every output is finished (written, checked, on disk) before any is published.
  mpi::collectively(topo.world(), [&] {
    if (topo.is_brick()) job.tensors.write(job.names, job.provenance, topo, res);
  });
  if (!cfg.activity.empty())
    mpi::collectively(topo.world(), [&] {
      if (topo.is_brick())
        write_activity(cfg, job.provenance, topo, job.activity, job.activity_file,
                       job.texts.activity_xdmf);
    });
  std::string summary;  // rank 0's, printed once everything is published
  nlohmann::json report;
  mpi::collectively(topo.world(), [&] {
    if (topo.world_rank() == 0)
      report = report_on_rank0<T>(job, rc, opt, err, mem_all, sim_seconds, summary);
  });
  cancel::last_stop(topo.world());  // a run being stopped publishes nothing
  // Devices first: a report or trace that fails on one leaves every file as it was.
  mpi::collectively(topo.world(), [&] {
    for (TextOutput* t :
         {&job.texts.activity_xdmf, &job.texts.report, &job.texts.trace, &job.texts.batches})
      t->deliver();
  });
  mpi::collectively(topo.world(), [&] {
    job.tensors.publish();
    if (job.activity_file) job.activity_file->publish();
    job.texts.activity_xdmf.publish();
    job.texts.report.publish();
    job.texts.trace.publish();
    job.texts.batches.publish();
  });
  if (!cfg.quiet) job.out << summary << std::flush;
  TransformResult result;
  result.report = std::move(report);
  if (topo.world_rank() == 0) result.counters = std::move(res.counters);
  return result;
}

// Rank 0 checks every input before any rank does work; all ranks agree on the verdict and
// learn its facts.
ProblemFacts agreed_facts(Job& job) {
  ProblemFacts facts;
  TensorInfo& info = job.info;
  TensorInfo& y0info = job.y0info;
  mpi::collectively(job.world, [&] {
    if (mpi::rank(job.world) == 0) facts = validate(job.cfg, job.tensors, info, y0info, job.texts);
  });
  mpi::bcast_bytes(job.world, std::span<ProblemFacts>(&facts, 1), 0);
  info.dataset = mpi::bcast_string(job.world, info.dataset, 0);
  info.type_name = mpi::bcast_string(job.world, info.type_name, 0);
  info.shape = facts.in_shape;
  info.is_complex = facts.input_complex != 0;
  y0info.dataset = mpi::bcast_string(job.world, y0info.dataset, 0);
  y0info.type_name = mpi::bcast_string(job.world, y0info.type_name, 0);
  y0info.shape = facts.out_shape;
  y0info.is_complex = facts.initial_complex != 0;
  job.names = job.tensors.names(info, y0info);
  mpi::collectively(job.world, [&] { job.tensors.share(job.world); });
  return facts;
}

}  // namespace

ProblemFacts check_problem(const TransformConfig& cfg, TensorFacts& tensors, TensorInfo& info,
                           TensorInfo& y0, const std::function<void()>& probe) {
  check_files(cfg, tensors);
  probe();
  ProblemFacts f;
  info = tensors.inspect_input();
  f.in_shape = info.shape;
  f.input_complex = info.is_complex;
  const TensorNames names = tensors.names(info, y0);
  for (int axis = 1; axis <= 3; ++axis) {
    const CoeffMatrix c = coefficient_facts(cfg, tensors, names, axis, f.in_shape[axis - 1]);
    f.out_shape[axis - 1] = c.cols;
    f.coeffs_complex |= c.is_complex ? 1 : 0;
  }
  if (!cfg.initial.file.empty()) {
    y0 = tensors.inspect_initial(f.out_shape);
    check_initial(y0, tensors.names(info, y0).initial, f);
  }
  return f;
}

MemoryModelOptions memory_options(const TransformConfig& cfg, bool complex_run, bool one_node) {
  MemoryModelOptions m;
  m.element_bytes = complex_run ? sizeof(cplx) : sizeof(double);
  m.cell_bytes = complex_run ? sizeof(Cell<cplx>) : sizeof(Cell<double>);
  m.reference =
      named("--executor", [&] { return parse_executor(cfg.executor); }) == Executor::reference;
  m.check = cfg.check;
  for (TransformKind k : cfg.kinds) {
    if (k == TransformKind::gemt && cfg.inverse) m.coeff_copies = 3;  // Gauss-Jordan: c, a, inv
    if (k == TransformKind::gemt) m.matrices_from_file = true;
  }
  m.one_node = one_node;
  m.shared_windows = cfg.transport != PivotTransport::broadcast;
  m.binary64_kernels = cfg.mesh.cell_mode == CellMode::fp64;  // other modes read planes in place
  m.initial = !cfg.initial.file.empty();
  return m;
}

PlanRequest transform_plan_request(const TransformConfig& cfg, const Plan& plan) {
  PlanRequest req;
  req.in_shape = plan.in_shape;
  req.out_shape = plan.out_shape;
  ext3 full{};
  for (int d = 0; d < 3; ++d) full[d] = std::max(plan.in_shape[d], plan.out_shape[d]);
  if (plan.mesh != full) req.mesh = plan.mesh;  // the full mesh is the default's
  req.stage_order = cfg.stage_order;
  req.grid = cfg.mesh.grid;
  req.actuators = cfg.mesh.actuators;
  return req;
}

PlanRequest transform_plan_request(const TransformConfig& cfg, const ProblemFacts& f) {
  const bool complex_run = f.complex_run();
  const ChipProblem chip{f.in_shape,         f.out_shape, cfg.stage_order,
                         cfg.mesh.cell_mode, complex_run, cfg.mesh.energy_for(complex_run),
                         f.initial != 0};
  Plan shapes;
  shapes.in_shape = f.in_shape;
  shapes.out_shape = f.out_shape;
  PlanRequest req = transform_plan_request(cfg, shapes);
  req.mesh = chip_mesh(chip, cfg.mesh.physical, cfg.mesh.cells);
  return req;
}

Plan transform_plan(const TransformConfig& cfg, MPI_Comm world, const ProblemFacts& facts) {
  // The grid is chosen on binary64 whatever the data: triada.layout() knows only shapes.
  GridModel model;
  model.machine = cfg.mesh.machine;
  model.transport = model_transport(cfg.transport);
  const Plan plan =
      plan_for_world(world, transform_plan_request(cfg, facts), model, cfg.plan_world_size);
  if (!cfg.activity.empty()) mpi::collectively(world, [&] { check_activity_fits(plan); });
  return plan;
}

ModelTransport model_transport(PivotTransport t) {
  return t == PivotTransport::broadcast ? ModelTransport::broadcast
         : t == PivotTransport::shared  ? ModelTransport::shared
                                        : ModelTransport::automatic;
}

std::vector<LayoutChoice> good_layouts_for(const TransformConfig& cfg, const Plan& plan) {
  PlanRequest req = transform_plan_request(cfg, plan);
  req.world_size = plan.ranks.world_size;
  return good_layouts_near(req, [](int b) { return mpi::dims_create(b); });
}

void warn_poor_layout(const TransformConfig& cfg, const Plan& plan, MPI_Comm world) {
  if (cfg.quiet || mpi::rank(world) != 0) return;
  const LayoutVerdict v = judge_layout(plan);
  if (!v.poor) return;
  std::cerr << "triada-transform: warning: " << layout_warning(plan, v, good_layouts_for(cfg, plan))
            << std::endl;
}

TransformResult run_transform(const TransformConfig& cfg, TransformTensors& tensors, MPI_Comm world,
                              std::ostream& out) {
  Job job{cfg, tensors, {}, {}, {}, {}, {}, {}, world, out, std::chrono::steady_clock::now(), {}};
  job.provenance = run_provenance(world, "triada-transform", cfg.command_line);
  const ProblemFacts facts = agreed_facts(job);
  job.plan = transform_plan(cfg, world, facts);
  job.ranks_per_node = model_ranks_per_node(cfg.mesh.machine, world);
  warn_poor_layout(cfg, job.plan, world);

  // Memory: a node that cannot hold its ranks' predicted peak refuses the run before
  // anything is allocated; an allocation that fails anyway is an input error too.
  const bool complex_run = facts.input_complex || facts.coeffs_complex;
  const bool one_node = on_one_node(world);
  std::vector<int> nodes = node_of_ranks(world);  // which lines have a window
  const std::string what = job.names.input + ": shape " + to_string(job.plan.in_shape) +
                           (complex_run ? " complex128" : " float64");
  MemoryPrediction need;
  mpi::collectively(world, [&] {
    job.mem = memory_options(cfg, complex_run, one_node);
    job.mem.node_of_rank = std::move(nodes);
    need = predict_memory(job.plan, mpi::rank(world), job.mem, what);
  });
  require_node_memory(world, need.node_share(), what);
  require_node_shared_memory(world, need.window_own, what);

  // Run in the element type the data needs.
  return out_of_memory_is_input_error(
      what, [&] { return complex_run ? run_typed<cplx>(job) : run_typed<double>(job); });
}

TransformJob::TransformJob(TransformConfig cfg) : cfg_(std::move(cfg)) {
  validate(cfg_);
}

TransformResult TransformJob::run(MPI_Comm world, std::ostream& out) const {
  const JobEntry entry(world, config_fields(cfg_), "TransformConfig");
  if (cfg_.dry_run) return {run_dry_run(cfg_, world, out), {}, {}};
  if (cfg_.model_shape) return run_model_only(cfg_, world, out);
  const std::unique_ptr<TransformTensors> files = file_tensors(cfg_);
  return run_transform(cfg_, *files, world, out);
}

TransformResult TransformJob::run(const ArrayInputs& in, MPI_Comm world, std::ostream& out) const {
  Fields fields = config_fields(cfg_);
  for (mpi::Field& f : input_fields(in)) fields.push_back(std::move(f));
  const JobEntry entry(world, fields, "TransformConfig");
  if (cfg_.dry_run || cfg_.model_shape)
    throw config_error(std::string(cfg_.dry_run ? "--dry-run" : "--model-only") +
                       " reads no arrays: run it without them");
  // An initial output the config does not name would be dropped without a word.
  mpi::collectively(world, [&] {
    if (in.initial.given && cfg_.initial.file.empty())
      throw config_error(
          "initial: an array is given, but the config names no initial output (set "
          "TransformConfig::initial to name it)");
  });
  ArrayResult y;
  const std::unique_ptr<TransformTensors> arrays = array_tensors(cfg_, in, y);
  TransformResult result = run_transform(cfg_, *arrays, world, out);
  result.y = std::move(y);
  return result;
}

Plan TransformJob::plan(MPI_Comm world, const ext3& in_shape, const ext3& out_shape) const {
  Fields fields = config_fields(cfg_);
  fields.push_back({"plan's in_shape", to_string(in_shape)});
  fields.push_back({"plan's out_shape", to_string(out_shape)});
  const JobEntry entry(world, fields, "TransformConfig");
  ProblemFacts facts;
  facts.in_shape = in_shape;
  facts.out_shape = out_shape;
  return transform_plan(cfg_, world, facts);
}

}  // namespace triada
