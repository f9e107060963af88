// triada-transform: thin main; the work is in src/transform/transform_job.cpp.
#include <iostream>
#include <sstream>

#include "config/options.hpp"
#include "core/app.hpp"
#include "mesh/mpi.hpp"
#include "transform/transform_job.hpp"

int main(int argc, char** argv) {
  return triada::run_app("triada-transform", argc, argv, [](int ac, char** av) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::optional<triada::TransformConfig> cfg;
    std::ostringstream help;  // printed by rank 0 only
    triada::mpi::collectively(MPI_COMM_WORLD,
                              [&] { cfg = triada::parse_transform_options(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;  // --help
    triada::run_transform_job(*cfg, MPI_COMM_WORLD, std::cout);
    return 0;
  });
}
