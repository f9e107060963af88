// triada-transform: thin main; the work is in jobs/transform_job.cpp.
#include <iostream>
#include <optional>
#include <sstream>

#include "apps/common/run_main.hpp"
#include "apps/transform/options.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/mpi.hpp"

int main(int argc, char** argv) {
  return triada::run_main("triada-transform", argc, argv, [](int ac, char** av) {
    const int rank = triada::mpi::rank(MPI_COMM_WORLD);
    std::optional<triada::TransformConfig> cfg;
    std::ostringstream help;  // printed by rank 0 only
    triada::mpi::collectively(MPI_COMM_WORLD,
                              [&] { cfg = triada::parse_transform_options(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;  // --help
    if (cfg->dry_run)
      triada::run_dry_run(*cfg, MPI_COMM_WORLD, std::cout);
    else if (cfg->model_shape)
      triada::run_model_only(*cfg, MPI_COMM_WORLD, std::cout);
    else
      triada::run_transform_job(*cfg, MPI_COMM_WORLD, std::cout);
    return 0;
  });
}
