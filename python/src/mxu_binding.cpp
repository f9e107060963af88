// The planar MXU's programs on numpy arrays: triada-tcu's job (jobs/tcu_job.hpp) and
// triada-conv's (jobs/conv_job.hpp), run as the programs run them.
#include <span>

#include "apps/conv/options.hpp"
#include "apps/tcu/options.hpp"
#include "bindings.hpp"
#include "interrupt.hpp"
#include "jobs/conv_job.hpp"
#include "jobs/tcu_job.hpp"
#include "mesh/cancel.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada::py {

namespace {

// A C-order float64 array's values (the Python side converts the type).
std::vector<double> values_of(const pyb::object& obj) {
  const auto a = pyb::array_t<double, pyb::array::c_style | pyb::array::forcecast>::ensure(obj);
  if (!a) throw config_error("expected an array of numbers");
  return std::vector<double>(a.data(), a.data() + a.size());
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

// The product of matmul or strassen on a unit like the run's (the job reports, not returns,
// its product): C and that unit's cost, which equals the report's for the same A and B.
pyb::object tcu_product(const TcuConfig& cfg, std::vector<double> a, std::vector<double> b,
                        index_t side) {
  std::vector<double> c;
  TcuCost cost;
  {
    pyb::gil_scoped_release released;
    TensorUnit unit(cfg.m, cfg.latency, cfg.weak, Mode::esop, cfg.cell_mode, cfg.executor);
    c = cfg.algo == "strassen" ? tcu_strassen_dense(unit, a, b, side)
                               : tcu_matmul_dense(unit, a, b, side);
    cost = unit.cost();
  }
  return pyb::make_tuple(to_numpy(std::move(c), {side, side}), cost_dict(cost));
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

// (rank 0's summary, the exit code, (C, its unit's cost) for matmul and strassen given A and
// B on rank 0, else None, the report's text on every rank). The report also goes to the file
// of --report, which may not be readable back ("-", a FIFO). `inputs`: rank 0's arrays
// standing for the datasets of --input, which then only names them.
pyb::tuple tcu(const std::vector<std::string>& args, std::optional<std::int64_t> comm_handle,
               const pyb::object& a, const pyb::object& b, const pyb::dict& inputs) {
  Serialized lock;
  TcuConfig cfg;
  tcu_in::MemoryDatasets arrays = memory_datasets(inputs);
  std::string summary, report;
  int code = 0, rank = 0;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    cfg = parse_args(args, parse_tcu_options, comm);
    cfg.arrays = std::move(arrays);
    std::ostringstream out;
    code = run_tcu_job_keeping_report(cfg, comm, out, &report);
    report = mpi::bcast_string(comm, report, 0);
    summary = out.str();
    rank = mpi::rank(comm);
    stoppable.finish();
  }
  pyb::object product = pyb::none();
  const bool square = cfg.algo == "matmul" || cfg.algo == "strassen";
  if (rank == 0 && square && !a.is_none() && !b.is_none()) {
    const auto side = static_cast<index_t>(pyb::len(a));
    product = tcu_product(cfg, values_of(a), values_of(b), side);
  }
  return pyb::make_tuple(summary, code, product, report);
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
// layer: None where it was not checked, else {method: NHWC values}).
pyb::tuple conv(const std::vector<std::string>& args, std::optional<std::int64_t> comm_handle,
                const pyb::object& input, const pyb::object& weights) {
  Serialized lock;
  ConvConfig given, cfg;
  given_operand(input, given.input_values, given.input_dims);
  given_operand(weights, given.weight_values, given.weight_dims);
  ConvRun run;
  std::string report, table;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    cfg = parse_args(args, parse_conv_options, comm);
    share_operands(given, comm);  // rank 0's, as its arguments
    cfg.input_values = std::move(given.input_values);
    cfg.input_dims = given.input_dims;
    cfg.weight_values = std::move(given.weight_values);
    cfg.weight_dims = given.weight_dims;
    cfg.keep_outputs = true;
    std::ostringstream out;
    run = run_conv(cfg, comm, out);
    report = mpi::bcast_string(
        comm, run.report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
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
  return pyb::make_tuple(report, table, run.code, outputs);
}

}  // namespace

void register_mxu(pyb::module_& m) {
  m.def("tcu", &tcu, "triada-tcu's job (see triada.tcu)");
  m.def("conv", &conv, "triada-conv's job (see triada.conv)");
}

}  // namespace triada::py
