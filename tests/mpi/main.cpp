// Catch2 main for the MPI tests (doc/design.md §10.12): MPI init, one session per rank, the
// failure count reduced so every rank (and the exit code) agrees, output from rank 0 only.
// Other ranks report into a scratch file; the reports of ranks that failed are sent to
// rank 0 and printed there, so a failure on any rank is both counted and explained.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "mesh/mpi.hpp"
#include "support/catch.hpp"

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Gathers the text of every rank to rank 0 (empty strings for ranks with nothing to say).
std::vector<std::string> gather_text(const std::string& mine, int rank, int size) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[r] = total;
    total += lens[r];
  }
  std::string all(static_cast<size_t>(std::max(total, 1)), '\0');
  MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<std::string> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r) out.push_back(all.substr(displs[r], lens[r]));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  triada::mpi::Environment env(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Catch::Session session;
  int failed = session.applyCommandLine(argc, argv);  // same argv, same result on every rank
  std::string log;
  if (failed == 0) {
    if (rank != 0) {
      log = "/tmp/triada_mpi_tests.rank" + std::to_string(rank) + "." + std::to_string(::getpid()) +
            ".log";
      // A file, printed later: no colour codes in it.
#if TRIADA_CATCH2_MAJOR >= 3
      session.configData().defaultOutputFilename = log;
      session.configData().defaultColourMode = Catch::ColourMode::None;
#else
      session.configData().outputFilename = log;
      session.configData().useColour = Catch::UseColour::No;
#endif
    }
    failed = session.run();
  }

  std::string report;
  if (rank != 0 && failed != 0) report = slurp(log);
  if (!log.empty()) std::remove(log.c_str());
  const std::vector<std::string> reports = gather_text(report, rank, size);
  for (int r = 1; r < static_cast<int>(reports.size()); ++r)
    if (!reports[r].empty()) std::cout << "\n==== report of rank " << r << " ====\n" << reports[r];

  int worst = 0;
  MPI_Allreduce(&failed, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0 && worst != 0 && failed == 0)
    std::cout << "rank 0 passed, but other ranks failed (see their reports above)\n";
  std::cout.flush();
  return worst;
}
