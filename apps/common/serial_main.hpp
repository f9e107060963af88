#pragma once
// The main of the MXU programs (triada-tcu, triada-conv): every rank parses the options into
// the job's config and makes the job (so a bad option or input file ends all ranks
// together), then every rank runs the job over MPI_COMM_WORLD; the job splits its work over
// the ranks (or leaves it to rank 0) and rank 0 alone prints and writes the report.
#include <iostream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include "apps/common/run_main.hpp"
#include "mesh/mpi.hpp"

namespace triada {

// parse(argc, argv, help) -> std::optional<Config> (nothing for --help); Job: constructed
// from the config, run(comm, out) collective, its result's code the same on every rank;
// `out` is std::cout on rank 0 and a discarding stream elsewhere.
template <class Job, class Parse>
int serial_main(const std::string& app, int argc, char** argv, Parse parse) {
  keep_freed_memory();
  return run_main(app, argc, argv, [&](int ac, char** av) {
    const int rank = mpi::rank(MPI_COMM_WORLD);
    std::optional<Job> job;
    std::ostringstream help;
    mpi::collectively(MPI_COMM_WORLD, [&] {
      if (auto cfg = parse(ac, av, help)) job.emplace(std::move(*cfg));
    });
    if (rank == 0) std::cout << help.str();
    if (!job) return 0;             // --help
    std::ostream discard(nullptr);  // no buffer: writes are dropped
    return job->run(MPI_COMM_WORLD, rank == 0 ? std::cout : discard).code;
  });
}

}  // namespace triada
