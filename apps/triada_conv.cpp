// triada-conv: thin main; the work is in src/conv/conv_app.cpp. Serial: every rank parses the
// options (so a bad option or network file ends all ranks together), rank 0 alone runs the
// layers.
#include <mpi.h>

#include <iostream>
#include <optional>
#include <sstream>

#include "conv/conv_app.hpp"
#include "core/app.hpp"
#include "mesh/mpi.hpp"

int main(int argc, char** argv) {
  return triada::run_app("triada-conv", argc, argv, [](int ac, char** av) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::optional<triada::ConvConfig> cfg;
    std::ostringstream help;
    triada::mpi::collectively(MPI_COMM_WORLD,
                              [&] { cfg = triada::parse_conv_options(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;  // --help
    int code = 0;
    triada::mpi::collectively(MPI_COMM_WORLD, [&] {
      if (rank == 0) code = triada::run_conv_job(*cfg, std::cout);
    });
    return code;
  });
}
