#pragma once
// The main of the MXU programs (triada-tcu, triada-conv): every rank parses the options (so
// a bad option or input file ends all ranks together), then every rank runs the job over
// MPI_COMM_WORLD; the job splits its work over the ranks (or leaves it to rank 0) and rank 0
// alone prints and writes the report.
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include "apps/common/run_main.hpp"
#include "mesh/mpi.hpp"

namespace triada {

// parse(argc, argv, help) -> std::optional<Config> (nothing for --help);
// job(config, comm, out) -> exit code, collective, the same on every rank; `out` is
// std::cout on rank 0 and a discarding stream elsewhere.
template <class Parse, class Job>
int serial_main(const std::string& app, int argc, char** argv, Parse parse, Job job) {
  keep_freed_memory();
  return run_main(app, argc, argv, [&](int ac, char** av) {
    const int rank = mpi::rank(MPI_COMM_WORLD);
    decltype(parse(ac, av, std::declval<std::ostream&>())) cfg;
    std::ostringstream help;
    mpi::collectively(MPI_COMM_WORLD, [&] { cfg = parse(ac, av, help); });
    if (rank == 0) std::cout << help.str();
    if (!cfg) return 0;             // --help
    std::ostream discard(nullptr);  // no buffer: writes are dropped
    return job(*cfg, MPI_COMM_WORLD, rank == 0 ? std::cout : discard);
  });
}

}  // namespace triada
