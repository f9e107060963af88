// triada-transform: argv -> config -> TransformJob (jobs/transform_job.hpp) -> output.
#include <iostream>
#include <optional>
#include <sstream>
#include <utility>

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
    if (!cfg) return 0;                               // --help
    const triada::TransformJob job(std::move(*cfg));  // validated by the parser already
    job.run(MPI_COMM_WORLD, std::cout);
    return 0;
  });
}
