// triada-transform's job on numpy arrays (jobs/transform_job.hpp, memory_tensors.hpp), and
// the rank layout a distributed call needs.
#include <array>
#include <span>

#include "apps/transform/options.hpp"
#include "bindings.hpp"
#include "interrupt.hpp"
#include "jobs/memory_tensors.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/cancel.hpp"

namespace triada::py {

namespace {

using Shape = std::optional<std::array<index_t, 3>>;

// The options parsed as the program parses them (rank 0's); the tensors named as the
// arguments (--initial's value is "initial" where Y0 is given).
TransformConfig memory_config(const std::vector<std::string>& args, MPI_Comm comm) {
  TransformConfig cfg = parse_args(args, parse_transform_options, comm);
  cfg.input = {"x", ""};
  cfg.output = {"y", ""};
  return cfg;
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
pyb::tuple transform(const std::vector<std::string>& args, const pyb::object& x,
                     const pyb::object& initial, const std::vector<pyb::object>& coeffs,
                     std::optional<std::int64_t> comm_handle, bool distributed, Shape shape,
                     bool gather) {
  Serialized lock;
  ArrayInputs in;
  in.x = view_of(x);
  in.initial = view_of(initial);
  for (std::size_t a = 0; a < coeffs.size() && a < 3; ++a) in.coeffs[a] = view_of(coeffs[a]);
  in.distributed = distributed;
  if (shape) in.global_shape = *shape;
  in.gather = gather;
  ArrayResult result;
  std::string report, summary;
  const CallSignals signals;
  {
    pyb::gil_scoped_release released;  // the arrays stay alive: the caller holds them
    const MPI_Comm comm = comm_of(comm_handle);
    cancel::Scope stoppable(comm, signals.poll());
    agree_flags(in, comm);
    const TransformConfig cfg = memory_config(args, comm);
    std::ostringstream out;
    const auto tensors = array_tensors(cfg, in, result);
    const nlohmann::json r = run_transform(cfg, *tensors, comm, out);
    report = mpi::bcast_string(comm,
                               r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
    summary = out.str();
    stoppable.finish();
  }
  pyb::object box = result.present ? box_tuple(result.box) : pyb::none();
  return pyb::make_tuple(result_array(result), box, report, summary);
}

// Every rank's bricks of X and Y for a run of these options on these shapes.
pyb::dict layout(const std::vector<std::string>& args, std::array<index_t, 3> in_shape,
                 std::array<index_t, 3> out_shape, std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  Plan plan;
  int rank = 0;
  {
    pyb::gil_scoped_release released;
    const MPI_Comm comm = comm_of(comm_handle);
    const TransformConfig cfg = parse_args(args, parse_transform_options, comm);
    plan = transform_plan(cfg, comm, in_shape, out_shape);
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
  m.def("transform", &transform, "triada-transform's job on arrays (see triada.transform)");
  m.def("layout", &layout, "the bricks of a run (see triada.layout)");
}

}  // namespace triada::py
