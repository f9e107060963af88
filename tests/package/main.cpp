// Uses the installed library as another project would: the umbrella header, the
// version, a plan built by the model library, a name parsed by the engine library and the
// kernel path the library chose for this CPU.
#include <iostream>
#include <triada/triada.hpp>

int main() {
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
            << "kernels " << triada::kernels::to_string(triada::kernels::isa()) << "\n";
  return plan.stages.size() == 3 ? 0 : 1;
}
