// triada-tcu: thin main; the work is in src/mxu/tcu_app.cpp. Serial: every rank parses the
// options (so a bad option ends all ranks together), rank 0 alone runs the algorithm.
#include <mpi.h>

#include <iostream>
#include <optional>
#include <sstream>

#include "core/app.hpp"
#include "mesh/mpi.hpp"
#include "mxu/tcu_app.hpp"

int main(int argc, char** argv) {
  return triada::run_app("triada-tcu", argc, argv, [](int ac, char** av) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::optional<triada::TcuConfig> cfg;
    std::ostringstream help;
    triada::mpi::collectively(MPI_COMM_WORLD,
                              [&] { cfg = triada::parse_tcu_options(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;  // --help
    int code = 0;
    triada::mpi::collectively(MPI_COMM_WORLD, [&] {
      if (rank == 0) code = triada::run_tcu_job(*cfg, std::cout);
    });
    return code;
  });
}
