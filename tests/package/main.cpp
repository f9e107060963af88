// Uses the installed library as another project would, through the public headers only:
// the version, a plan, an executor's name, the kernel path the library chose for this CPU
// (the report's "kernels" object) and a transform job on a tensor in memory; the job's
// refusal before MPI_Init and after MPI_Finalize.
#include <hdf5.h>
#include <mpi.h>

#include <iomanip>
#include <iostream>
#include <string>
#include <triada/triada.hpp>
#include <vector>

namespace {

// A 2x3x4 tensor of ones through the DCT: all its energy in y[0,0,0] = sqrt(24).
double dct_of_ones() {
  triada::TransformConfig cfg;
  cfg.input = {"x", ""};
  cfg.output = {"y", ""};
  cfg.kinds = {triada::TransformKind::dct, triada::TransformKind::dct, triada::TransformKind::dct};
  cfg.transform_spec = "dct";
  cfg.mesh = triada::parse_mesh_file("");
  cfg.quiet = true;
  const std::vector<double> x(24, 1.0);
  triada::ArrayInputs in;
  in.x = triada::array_view(x.data(), {2, 3, 4});
  const triada::TransformJob job(cfg);
  return job.run(in, MPI_COMM_WORLD, std::cout).y.real.at(0);
}

// What a job says when MPI cannot run it (before MPI_Init, after MPI_Finalize): an mpi_error.
std::string refusal() {
  try {
    dct_of_ones();
  } catch (const triada::mpi_error& e) {
    return e.what();
  }
  return "no mpi_error";
}

}  // namespace

int main(int argc, char** argv) {
  std::cout << "before init: " << refusal() << "\n";
  MPI_Init(&argc, &argv);
  triada::PlanRequest req;
  req.in_shape = {8, 6, 4};
  req.out_shape = {8, 6, 4};
  req.world_size = 1;
  req.balanced_dims = {1, 1, 1};  // what MPI_Dims_create gives for one brick rank
  const triada::Plan plan = triada::make_plan(req);
  std::cout << "triada " << triada::version_string() << "\n"
            << "plan " << plan.mesh[0] << "x" << plan.mesh[1] << "x" << plan.mesh[2] << " cells, "
            << plan.stages.size() << " stages, order " << triada::to_string(plan.stage_order)
            << "\n"
            << "executor " << triada::to_string(triada::parse_executor("fused")) << "\n"
            << "kernels " << triada::kernels_json()["isa"].get<std::string>() << "\n"
            << "dct y000 " << std::setprecision(15) << dct_of_ones() << "\n";
  H5close();
  MPI_Finalize();
  std::cout << "after finalize: " << refusal() << "\n";
  return plan.stages.size() == 3 ? 0 : 1;
}
