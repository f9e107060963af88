// triada-transform's job on numpy arrays (TransformJob, jobs/transform_job.hpp), and the
// rank layout a distributed call needs. The settings come as typed Python values, keyed by
// the config's fields, and fill the TransformConfig field by field with the program's value
// parsers: the same checks and messages as its command line.
#include <array>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "config/options.hpp"
#include "interrupt.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/cancel.hpp"

namespace triada::py {

namespace {

using Shape = std::optional<std::array<index_t, 3>>;

// A setting's word; `fallback` (the program's default) where it is not given.
std::string or_default(const Settings& s, const char* key, const char* fallback) {
  return s.has(key) ? s.word(key) : fallback;
}

// The mesh keys of `mesh` with the config's winning, then the short spellings that override
// them (cell_mode, esop), as the program's --cell-mode and --esop do.
MeshConfig mesh_part(const Settings& s, const std::string& mesh) {
  MeshConfig m = mesh_config(mesh, s.pairs("config"));
  if (s.has("cell_mode"))
    m.use_cell_mode(named("--cell-mode", [&] { return parse_cell_mode(s.word("cell_mode")); }));
  if (s.has("esop")) m.mode = s.flag("esop") ? Mode::esop : Mode::dense;
  return m;
}

// The config of a run on the arrays x (initial, C1..C3 where given) into y, in the order
// the program checks its options; `transform` where the settings name none.
TransformConfig transform_config(const Settings& s, const char* transform = "") {
  TransformConfig c;
  const std::string mesh = s.path("mesh", "--mesh");
  c.report = s.path("report", "--report");
  c.trace = s.path("trace", "--trace");
  c.input = {"x", ""};
  c.output = {"y", ""};
  if (s.flag("initial")) c.initial = {"initial", ""};
  c.transform_spec = or_default(s, "transform_spec", transform);
  c.kinds = parse_transform_list(c.transform_spec, "--transform");
  c.inverse = s.flag("inverse");
  c.norm = named("--norm", [&] { return parse_norm(or_default(s, "norm", "ortho")); });
  if (s.flag("coeffs")) c.coeffs = "C1,C2,C3";
  c.stage_order = named("--stage-order",
                        [&] { return parse_stage_order(or_default(s, "stage_order", "312")); });
  c.mesh = mesh_part(s, mesh);
  c.mesh.file = mesh;
  c.check = s.flag("check");
  c.force = s.flag("force");
  c.quiet = s.flag("quiet");
  c.executor = or_default(s, "executor", "fused");
  c.transport =
      named("--transport", [&] { return parse_transport(or_default(s, "transport", "auto")); });
  c.shuffle_seed = parse_unsigned("--shuffle-seed", or_default(s, "shuffle_seed", "0"));
  c.command_line = python_command_line();
  return c;
}

// The job of rank 0's settings on every rank, its errors agreed (`transform`: as above).
TransformJob agreed_job(Settings& settings, MPI_Comm comm, const char* transform = "") {
  settings.share(comm);
  std::optional<TransformJob> job;
  mpi::collectively(comm, [&] { job.emplace(transform_config(settings, transform)); });
  return std::move(*job);
}

// Rank 0's distributed and gather flags on every rank (its call decides).
void agree_flags(ArrayInputs& in, MPI_Comm comm) {
  std::array<int, 2> flags{in.distributed ? 1 : 0, in.gather ? 1 : 0};
  mpi::bcast(comm, std::span<int>(flags), 0);
  in.distributed = flags[0] != 0;
  in.gather = flags[1] != 0;
}

pyb::object box_tuple(const Brick& b) {
  return pyb::make_tuple(pyb::make_tuple(b.lo[0], b.lo[1], b.lo[2]),
                         pyb::make_tuple(b.hi[0], b.hi[1], b.hi[2]));
}

pyb::object result_array(ArrayResult& r) {
  if (!r.present) return pyb::none();
  const std::vector<index_t> shape{r.box.extent(0), r.box.extent(1), r.box.extent(2)};
  if (r.is_complex) return to_numpy(std::move(r.complex), shape);
  return to_numpy(std::move(r.real), shape);
}

// (y or None, its box or None, the report as JSON text on every rank, rank 0's summary).
pyb::tuple transform(const pyb::dict& settings, const pyb::object& x, const pyb::object& initial,
                     const std::vector<pyb::object>& coeffs,
                     std::optional<std::int64_t> comm_handle, bool distributed, Shape shape,
                     bool gather) {
  Serialized lock;
  Settings given(settings, {"transform_spec", "inverse", "norm", "stage_order", "esop", "cell_mode",
                            "mesh", "config", "initial", "coeffs", "executor", "transport", "check",
                            "shuffle_seed", "report", "trace", "force", "quiet"});
  ArrayInputs in;
  in.x = view_of(x);
  in.initial = view_of(initial);
  for (std::size_t a = 0; a < coeffs.size() && a < 3; ++a) in.coeffs[a] = view_of(coeffs[a]);
  in.distributed = distributed;
  if (shape) in.global_shape = *shape;
  in.gather = gather;
  TransformResult result;
  std::string report, summary;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;  // the arrays stay alive: the caller holds them
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    agree_flags(in, comm);
    const TransformJob job = agreed_job(given, comm);
    std::ostringstream out;
    result = job.run(in, comm, out);
    report = mpi::bcast_string(
        comm, result.report.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
    summary = out.str();
    stoppable.finish();
  }
  pyb::object box = result.y.present ? box_tuple(result.y.box) : pyb::none();
  return pyb::make_tuple(result_array(result.y), box, report, summary);
}

// Every rank's bricks of X and Y for a run with these settings (mesh, config) on these shapes.
pyb::dict layout(const pyb::dict& settings, std::array<index_t, 3> in_shape,
                 std::array<index_t, 3> out_shape, std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  Settings given(settings, {"mesh", "config"});
  Plan plan;
  int rank = 0;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    // The bricks depend on the mesh alone: a DCT's will do.
    plan = agreed_job(given, comm, "dct").plan(comm, in_shape, out_shape);
    rank = mpi::rank(comm);
  }
  pyb::list bricks;
  for (int r = 0; r < plan.ranks.n_bricks; ++r)
    bricks.append(pyb::make_tuple(box_tuple(plan.brick_cells(r).intersect(whole(in_shape))),
                                  box_tuple(plan.brick_cells(r).intersect(whole(out_shape)))));
  pyb::dict d;
  d["rank"] = rank;
  d["world_size"] = plan.ranks.world_size;
  d["brick_ranks"] = plan.ranks.grid;
  d["actuator_ranks"] = plan.ranks.dedicated_actuators ? 3 : 0;
  d["mesh"] = plan.mesh;
  d["bricks"] = bricks;
  return d;
}

}  // namespace

void register_transform(pyb::module_& m) {
  m.def("transform", &transform, pyb::arg("settings"), pyb::arg("x"), pyb::arg("initial"),
        pyb::arg("coeffs"), pyb::arg("comm"), pyb::arg("distributed"), pyb::arg("shape"),
        pyb::arg("gather"),
        "TransformJob on arrays (see triada.transform): settings {field: value} of the "
        "TransformConfig (transform_spec, inverse, norm, stage_order, esop, cell_mode, mesh, "
        "config {section.key: text}, initial and coeffs (bools: given), executor, transport, "
        "check, shuffle_seed, report, trace, force, quiet)");
  m.def("layout", &layout, pyb::arg("settings"), pyb::arg("shape"), pyb::arg("out_shape"),
        pyb::arg("comm"),
        "the bricks of a run (see triada.layout): settings {mesh, config} as for transform");
}

}  // namespace triada::py
