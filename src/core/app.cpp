#include "core/app.hpp"

#include <hdf5.h>
#include <mpi.h>

#include <cstdio>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace {

// HDF5 closes what is still open at exit, after MPI_Finalize: a parallel file left open
// by a failure would then call MPI and crash. Close the library while MPI still runs.
void close_hdf5() noexcept {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5close();
}

// Control bytes of user text (a file name, a value) never reach the terminal raw.
std::string escaped(const char* what) {
  std::string out;
  for (const unsigned char c : std::string(what)) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

int exit_code_of(const std::exception& e) {
  if (dynamic_cast<const config_error*>(&e)) return 2;
  if (dynamic_cast<const input_error*>(&e)) return 1;
  return 3;
}
}  // namespace

int run_app(const std::string& app, int argc, char** argv,
            const std::function<int(int, char**)>& body) {
  mpi::Environment env(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  try {
    const int code = body(argc, argv);
    close_hdf5();
    return code;
  } catch (const std::exception& e) {
    const int code = exit_code_of(e);
    if (dynamic_cast<const collective_marker*>(&e)) {
      if (rank == 0)
        std::fprintf(stderr, "%s: error: %s\n", app.c_str(), escaped(e.what()).c_str());
      close_hdf5();
      return code;
    }
    if (size > 1)
      std::fprintf(stderr, "%s: error (rank %d): %s\n", app.c_str(), rank,
                   escaped(e.what()).c_str());
    else
      std::fprintf(stderr, "%s: error: %s\n", app.c_str(), escaped(e.what()).c_str());
    std::fflush(stderr);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    return code;
  }
}

}  // namespace triada
