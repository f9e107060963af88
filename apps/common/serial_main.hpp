#pragma once
// The main of a serial program (triada-tcu, triada-conv): every rank parses the options
// (so a bad option or input file ends all ranks together), rank 0 alone runs the job.
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "apps/common/run_main.hpp"
#include "mesh/mpi.hpp"

namespace triada {

// parse(argc, argv, help) -> std::optional<Config> (nothing for --help);
// job(config, out) -> exit code.
template <class Parse, class Job>
int serial_main(const std::string& app, int argc, char** argv, Parse parse, Job job) {
  return run_main(app, argc, argv, [&](int ac, char** av) {
    const int rank = mpi::rank(MPI_COMM_WORLD);
    decltype(parse(ac, av, std::declval<std::ostream&>())) cfg;
    std::ostringstream help;
    mpi::collectively(MPI_COMM_WORLD, [&] { cfg = parse(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;  // --help
    int code = 0;
    mpi::collectively(MPI_COMM_WORLD, [&] {
      if (rank == 0) code = job(*cfg, std::cout);
    });
    return code;
  });
}

}  // namespace triada
