// The planar MXU's programs on numpy arrays: triada-tcu's job (jobs/tcu_job.hpp) and
// triada-conv's (jobs/conv_job.hpp), made from typed settings (a dict keyed by the config's
// field names) as the programs make them from their options.
#include <span>
#include <utility>

#include "bindings.hpp"
#include "config/options.hpp"
#include "interrupt.hpp"
#include "jobs/conv_job.hpp"
#include "jobs/mxu_option_values.hpp"
#include "jobs/tcu_job.hpp"
#include "mesh/cancel.hpp"
#include "report/provenance.hpp"

namespace triada::py {

namespace {

// A C-order float64 array's values (the Python side converts the type).
std::vector<double> values_of(const pyb::object& obj) {
  const auto a = pyb::array_t<double, pyb::array::c_style | pyb::array::forcecast>::ensure(obj);
  if (!a) throw config_error("expected an array of numbers");
  return std::vector<double>(a.data(), a.data() + a.size());
}

// A report as JSON text (every rank has it).
std::string dumped(const nlohmann::json& report) {
  return report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

pyb::dict cost_dict(const TcuCost& c) {
  pyb::dict d;
  d["calls"] = c.calls;
  d["rows"] = c.rows;
  d["cell_steps"] = c.cell_steps;
  d["macs"] = c.macs;
  d["macs_dense"] = c.macs_dense;
  d["cycles"] = c.cycles;
  return d;
}

// Arrays {name: array} as the datasets /name of an input in memory (complex where the
// array is, else float64; the Python side checked the types).
tcu_in::MemoryDatasets memory_datasets(const pyb::dict& arrays) {
  tcu_in::MemoryDatasets out;
  for (const auto& [key, item] : arrays) {
    const auto value = pyb::reinterpret_borrow<pyb::object>(item);
    std::string name = key.cast<std::string>();
    name.erase(0, name.find_first_not_of('/'));  // "A" and "/A" name the same dataset
    tcu_in::MemoryDataset& d = out["/" + name];
    const pyb::array arr = pyb::array::ensure(value);
    if (!arr) throw config_error(name + ": expected an array");
    for (pyb::ssize_t k = 0; k < arr.ndim(); ++k) d.dims.push_back(arr.shape(k));
    d.is_complex = arr.dtype().kind() == 'c';
    if (!d.is_complex) {
      d.real = values_of(value);
      continue;
    }
    const auto c = pyb::array_t<cplx, pyb::array::c_style | pyb::array::forcecast>::ensure(value);
    d.complex.assign(c.data(), c.data() + c.size());
  }
  return out;
}

// triada-tcu's config from its settings, filled and checked in the program's order
// (apps/tcu/options.cpp), its mesh file read.
TcuConfig tcu_config(const Settings& s) {
  TcuConfig c;
  c.input = s.path("input", "--input");
  c.report = s.path("report", "--report");
  c.mesh = s.path("mesh", "--mesh");
  c.algo = s.word("algo");
  if (c.algo.empty()) throw config_error("missing --algo (see --help)");
  if (s.has("latency")) c.latency = parse_latency(s.word("latency"));
  if (s.has("seed")) c.seed = parse_seed(s.word("seed"));
  if (s.has("size")) c.size = parse_positive("--size", s.word("size"));
  c.memory = parse_mesh_file(c.mesh).mxu;
  if (s.has("m")) c.m = parse_positive("--m", s.word("m"));
  c.weak = s.flag("weak");
  c.force = s.flag("force");
  if (s.has("progress")) c.progress = parse_progress_mode(s.word("progress"));
  c.sweep = s.flag("sweep");
  if (s.has("cell_mode"))
    c.cell_mode = named("--cell-mode", [&] { return parse_cell_mode(s.word("cell_mode")); });
  if (s.has("executor"))
    c.executor = named("--executor", [&] { return parse_mxu_executor(s.word("executor")); });
  if (s.has("sizes")) c.sizes = parse_positive_list("--sizes", s.word("sizes"));
  if (s.has("ms")) c.ms = parse_positive_list("--ms", s.word("ms"));
  if (s.has("product")) set_tcu_product(c, s.word("product"));
  if (s.has("sweeps")) c.sweeps = parse_positive("--k", s.word("sweeps"));
  if (s.has("kernel")) c.kernel = parse_tcu_kernel(s.word("kernel"));
  if (s.has("points")) c.points = parse_positive("--points", s.word("points"));
  return c;
}

// triada-conv's config from its settings, filled and checked in the program's order
// (apps/conv/options.cpp), its mesh file read.
ConvConfig conv_config(const Settings& s) {
  ConvConfig c;
  c.network = s.path("network", "--network");
  c.input = s.path("input", "--input");
  c.weights = s.path("weights", "--weights");
  c.mesh = s.path("mesh", "--mesh");
  c.report = s.path("report", "--report");
  c.csv = s.path("csv", "--csv");
  c.layer_spec = s.word("layer_spec");
  if (c.network.empty() && c.layer_spec.empty())
    throw config_error(
        "give --network FILE.csv or --layer "
        "N,CI,HI,WI,CO,HF,WF,stride,pad (see --help)");
  if (s.has("method")) set_conv_method(c, s.word("method"));
  if (s.has("mxu")) c.mxu = parse_conv_mxu(s.word("mxu"));
  if (s.has("batch")) c.batch = parse_positive("--batch", s.word("batch"));
  if (s.has("latency")) c.latency = parse_latency(s.word("latency"));
  if (s.has("cell_mode"))
    c.cell_mode = named("--cell-mode", [&] { return parse_cell_mode(s.word("cell_mode")); });
  if (s.has("executor"))
    c.executor = named("--executor", [&] { return parse_mxu_executor(s.word("executor")); });
  c.memory = parse_mesh_file(c.mesh, c.cell_mode).mxu;
  c.force = s.flag("force");
  if (s.has("seed")) c.seed = parse_seed(s.word("seed"));
  c.verify = s.flag("verify");
  if (s.has("verify_budget")) c.verify_budget = parse_verify_budget(s.word("verify_budget"));
  if (s.has("max_layers")) c.max_layers = parse_positive("--max-layers", s.word("max_layers"));
  if (s.has("progress")) c.progress = parse_progress_mode(s.word("progress"));
  return c;
}

// (rank 0's summary, the exit code, (C, its unit's cost) on rank 0 for a single run of
// matmul or strassen on arrays, else None, the report's text on every rank). The report
// also goes to the file of settings' report, which may not be readable back ("-", a
// FIFO). Rank 0's settings are the call's; `arrays`: rank 0's, standing for the datasets
// of the input that settings' input then only names.
pyb::tuple tcu(const pyb::dict& settings, const pyb::dict& arrays,
               std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  Settings given(settings,
                 {"algo",     "size",    "m",      "latency", "seed",   "input",     "weak",
                  "report",   "force",   "sweep",  "sizes",   "ms",     "cell_mode", "mesh",
                  "executor", "product", "sweeps", "kernel",  "points", "progress"});
  const std::string command_line = python_command_line();
  tcu_in::MemoryDatasets datasets = memory_datasets(arrays);
  TcuResult result;
  std::string summary;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    given.share(comm);
    std::optional<TcuJob> job;
    mpi::collectively(comm, [&] {
      TcuConfig cfg = tcu_config(given);
      cfg.command_line = command_line;
      cfg.arrays = std::move(datasets);
      job.emplace(std::move(cfg));
    });
    std::ostringstream out;
    result = job->run(comm, out);
    summary = out.str();
    stoppable.finish();
  }
  pyb::object product = pyb::none();
  if (TcuMatrixProduct* p = result.product ? &*result.product : nullptr)
    product =
        pyb::make_tuple(to_numpy(std::move(p->values), {p->side, p->side}), cost_dict(p->cost));
  return pyb::make_tuple(summary, result.code, product, dumped(result.report));
}

// --layer's operands given as arrays (NCHW input, OIHW weights), float64 C order.
void given_operand(const pyb::object& obj, std::vector<double>& values,
                   std::array<index_t, 4>& dims) {
  if (obj.is_none()) return;
  const auto arr = pyb::reinterpret_borrow<pyb::array>(obj);
  if (arr.ndim() != 4) return;  // the Python side checked: only rank-4 arrays reach here
  for (int d = 0; d < 4; ++d) dims[static_cast<std::size_t>(d)] = arr.shape(d);
  values = values_of(obj);
}

// Rank 0's operands on every rank (each rank runs its work units on them).
void share_operands(ConvConfig& given, MPI_Comm comm) {
  mpi::bcast(comm, given.input_values, 0);
  mpi::bcast(comm, given.weight_values, 0);
  mpi::bcast_bytes(comm, std::span<index_t>(given.input_dims), 0);
  mpi::bcast_bytes(comm, std::span<index_t>(given.weight_dims), 0);
}

// (the report as JSON text, rank 0's table, the exit code, rank 0's outputs of every
// layer: None where it was not checked, else {method: NHWC values}). Rank 0's settings
// and operands (`input`, `weights`, named by settings' input and weights) are the call's.
pyb::tuple conv(const pyb::dict& settings, const pyb::object& input, const pyb::object& weights,
                std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  Settings given(
      settings, {"network", "layer_spec", "method", "mxu", "batch", "latency", "cell_mode",
                 "executor", "mesh", "report", "csv", "force", "input", "weights", "seed", "verify",
                 "verify_budget", "max_layers", "progress"});
  const std::string command_line = python_command_line();
  ConvConfig operands;
  given_operand(input, operands.input_values, operands.input_dims);
  given_operand(weights, operands.weight_values, operands.weight_dims);
  ConvRun run;
  std::string table;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    given.share(comm);
    share_operands(operands, comm);  // rank 0's, as its arguments
    std::optional<ConvJob> job;
    mpi::collectively(comm, [&] {
      ConvConfig cfg = conv_config(given);
      cfg.command_line = command_line;
      cfg.input_values = std::move(operands.input_values);
      cfg.input_dims = operands.input_dims;
      cfg.weight_values = std::move(operands.weight_values);
      cfg.weight_dims = operands.weight_dims;
      cfg.keep_outputs = true;
      job.emplace(std::move(cfg));
    });
    std::ostringstream out;
    run = job->run(comm, out);
    table = mpi::rank(comm) == 0 ? out.str() : "";
    stoppable.finish();
  }
  pyb::list outputs;
  for (LayerOutcome& o : run.outcomes) {
    pyb::dict layer;
    for (MethodOutcome* m : {&o.ex, &o.im})
      if (!m->output.empty()) {
        const auto n = static_cast<index_t>(m->output.size());
        layer[m == &o.ex ? "explicit" : "implicit"] = to_numpy(std::move(m->output), {n});
      }
    outputs.append(layer.empty() ? pyb::object(pyb::none()) : pyb::object(layer));
  }
  return pyb::make_tuple(dumped(run.report), table, run.code, outputs);
}

}  // namespace

void register_mxu(pyb::module_& m) {
  m.def("tcu", &tcu, pyb::arg("settings"), pyb::arg("arrays"), pyb::arg("comm_handle"),
        "triada-tcu's job (see triada.tcu): settings {TcuConfig field: value}, arrays "
        "{dataset: array}.");
  m.def("conv", &conv, pyb::arg("settings"), pyb::arg("input"), pyb::arg("weights"),
        pyb::arg("comm_handle"),
        "triada-conv's job (see triada.conv): settings {ConvConfig field: value}, the "
        "layer's operands.");
}

}  // namespace triada::py
