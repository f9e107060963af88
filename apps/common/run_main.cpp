#include "apps/common/run_main.hpp"

#include <malloc.h>

#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "core/signal_cleanup.hpp"
#include "io/hdf5.hpp"
#include "io/output_files.hpp"
#include "jobs/messages.hpp"
#include "jobs/provenance.hpp"
#include "mesh/kernel_path.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace {

// HDF5 closes what is still open at exit, after MPI_Finalize: close it while MPI runs.
void close_hdf5() noexcept {
  h5::close_library();
}

// --version anywhere among the words (Boost takes a word "--version" as that option, never
// as another option's value): every program answers it before parsing anything else.
bool wants_version(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--version") == 0) return true;
  return false;
}

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const config_error*>(&e)) return 2;
  if (dynamic_cast<const input_error*>(&e)) return 1;
  return 3;
}
}  // namespace

void keep_freed_memory() {
  constexpr int kGiB = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kGiB);  // the largest the heap serves; larger blocks are mapped
  mallopt(M_TRIM_THRESHOLD, kGiB);
}

int run_main(const std::string& app, int argc, char** argv,
             const std::function<int(int, char**)>& body) {
  // Before MPI_Init, which makes a singleton's session root: SIGINT, SIGTERM and SIGHUP
  // remove it and the run's temporaries, then end the program by the signal.
  signal_cleanup::install();
  mpi::Environment env(argc, argv);
  set_overwrite_option("--force");  // every program's option for replacing outputs
  const int rank = mpi::rank(MPI_COMM_WORLD), size = mpi::size(MPI_COMM_WORLD);
  if (wants_version(argc, argv)) {
    int code = 0;
    try {  // on every rank, which all read the same TRIADA_ISA (no collective here)
      const std::string text = version_text(app);
      if (rank == 0) std::fputs(text.c_str(), stdout);
    } catch (const config_error& e) {
      if (rank == 0)
        std::fprintf(stderr, "%s: error: %s\n", app.c_str(), escape_controls(e.what()).c_str());
      code = 2;
    }
    close_hdf5();
    return code;
  }
  try {
    // A bad TRIADA_ISA, or ranks choosing different kernel paths, is a config error now,
    // before any work (and no path runs on a CPU that lacks its instructions).
    agree_on_kernel_path(MPI_COMM_WORLD);
    const int code = body(argc, argv);
    close_hdf5();
    return code;
  } catch (const std::exception& e) {
    const int code = exit_code_of(e);
    if (dynamic_cast<const collective_marker*>(&e)) {
      if (rank == 0)
        std::fprintf(stderr, "%s: error: %s\n", app.c_str(), escape_controls(e.what()).c_str());
      close_hdf5();
      return code;
    }
    if (size > 1)
      std::fprintf(stderr, "%s: error (rank %d): %s\n", app.c_str(), rank,
                   escape_controls(e.what()).c_str());
    else
      std::fprintf(stderr, "%s: error: %s\n", app.c_str(), escape_controls(e.what()).c_str());
    std::fflush(stderr);
    if (size > 1) mpi::abort(MPI_COMM_WORLD, code);
    return code;
  }
}

}  // namespace triada
