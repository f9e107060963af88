// triada-transform's job on numpy arrays (TransformJob, jobs/transform_job.hpp), and the
// rank layout a distributed call needs. The settings come as typed Python values, keyed by
// the config's fields, and fill the TransformConfig field by field with the program's value
// parsers: the same checks and messages as its command line.
#include <array>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "interrupt.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/cancel.hpp"

namespace triada::py {

namespace {

using Shape = std::optional<std::array<index_t, 3>>;
using Json = nlohmann::json;

// A settings value as JSON: None null, a bool, an int as its decimal text (parsed as the
// program parses its option), a str, or a dict {str: str} (the mesh keys).
Json json_of(const pyb::handle& v) {
  if (v.is_none()) return nullptr;
  if (pyb::isinstance<pyb::bool_>(v)) return v.cast<bool>();
  if (pyb::isinstance<pyb::int_>(v)) return pyb::str(v).cast<std::string>();
  if (pyb::isinstance<pyb::dict>(v)) {
    Json d = Json::object();
    for (const auto& [key, value] : v.cast<pyb::dict>())
      d[key.cast<std::string>()] = value.cast<std::string>();
    return d;
  }
  return v.cast<std::string>();
}

// The settings, each a field of the config (or a mesh override: esop, cell_mode, config).
Json settings_json(const pyb::dict& settings) {
  static const std::set<std::string> known = {
      "transform_spec", "inverse",      "norm",    "stage_order", "esop",     "cell_mode",
      "mesh",           "config",       "initial", "coeffs",      "executor", "transport",
      "check",          "shuffle_seed", "report",  "trace",       "force",    "quiet"};
  Json s = Json::object();
  for (const auto& [key, value] : settings) {
    const std::string name = key.cast<std::string>();
    if (!known.count(name)) throw pyb::type_error("settings: unknown key '" + name + "'");
    s[name] = json_of(value);
  }
  return s;
}

// Rank 0's settings on every rank: rank 0's call decides.
Json rank0_settings(const Json& mine, MPI_Comm comm) {
  return Json::parse(mpi::bcast_string(comm, mine.dump(), 0));
}

// A setting's text; `fallback` where it is absent or None.
std::string text(const Json& s, const char* key, const std::string& fallback = "") {
  return s.contains(key) && s[key].is_string() ? s[key].get<std::string>() : fallback;
}
bool flag(const Json& s, const char* key) {
  return s.contains(key) && s[key].is_boolean() && s[key].get<bool>();
}
// A path setting: absent or None is "", an empty one is refused as the program refuses it.
std::string path(const Json& s, const char* key, const char* option) {
  if (s.contains(key) && s[key].is_string() && s[key].get<std::string>().empty())
    throw config_error(std::string(option) + ": empty file name");
  return text(s, key);
}

// The mesh keys of `mesh` with the config's winning, then the short spellings that override
// them (cell_mode, esop), as the program's --cell-mode and --esop do.
MeshConfig mesh_part(const Json& s, const std::string& mesh) {
  std::vector<std::pair<std::string, std::string>> keys;
  if (s.contains("config") && s["config"].is_object())
    for (const auto& [key, value] : s["config"].items()) keys.emplace_back(key, value);
  MeshConfig m = mesh_config(mesh, keys);
  if (s.contains("cell_mode") && s["cell_mode"].is_string())
    m.use_cell_mode(named("--cell-mode", [&] { return parse_cell_mode(text(s, "cell_mode")); }));
  if (s.contains("esop") && s["esop"].is_boolean())
    m.mode = flag(s, "esop") ? Mode::esop : Mode::dense;
  return m;
}

// The config of a run on the arrays x (initial, C1..C3 where given) into y, in the order
// the program checks its options.
TransformConfig transform_config(const Json& s) {
  TransformConfig c;
  const std::string mesh = path(s, "mesh", "--mesh");
  c.report = path(s, "report", "--report");
  c.trace = path(s, "trace", "--trace");
  c.input = {"x", ""};
  c.output = {"y", ""};
  if (flag(s, "initial")) c.initial = {"initial", ""};
  c.transform_spec = text(s, "transform_spec");
  c.kinds = parse_transform_list(c.transform_spec, "--transform");
  c.inverse = flag(s, "inverse");
  c.norm = named("--norm", [&] { return parse_norm(text(s, "norm", "ortho")); });
  if (flag(s, "coeffs")) c.coeffs = "C1,C2,C3";
  c.stage_order =
      named("--stage-order", [&] { return parse_stage_order(text(s, "stage_order", "312")); });
  c.mesh = mesh_part(s, mesh);
  c.mesh.file = mesh;
  c.check = flag(s, "check");
  c.force = flag(s, "force");
  c.quiet = flag(s, "quiet");
  c.executor = text(s, "executor", "fused");
  c.transport = named("--transport", [&] { return parse_transport(text(s, "transport", "auto")); });
  c.shuffle_seed = parse_unsigned("--shuffle-seed", text(s, "shuffle_seed", "0"));
  c.command_line = python_command_line();
  return c;
}

// The job of rank 0's settings on every rank, its errors agreed.
TransformJob agreed_job(const Json& settings, MPI_Comm comm) {
  const Json s = rank0_settings(settings, comm);
  std::optional<TransformJob> job;
  mpi::collectively(comm, [&] { job.emplace(transform_config(s)); });
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
  const Json mine = settings_json(settings);
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
    const TransformJob job = agreed_job(mine, comm);
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

// The settings of a run of some transform: a layout's bricks depend on the mesh alone.
Json any_transform(Json s) {
  s["transform_spec"] = "dct";
  return s;
}

// Every rank's bricks of X and Y for a run with these settings (mesh, config) on these shapes.
pyb::dict layout(const pyb::dict& settings, std::array<index_t, 3> in_shape,
                 std::array<index_t, 3> out_shape, std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  const Json mine = settings_json(settings);
  Plan plan;
  int rank = 0;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    plan = agreed_job(any_transform(mine), comm).plan(comm, in_shape, out_shape);
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
