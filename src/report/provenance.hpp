#pragma once
// What produced an output (doc/design.md §5.6): the program and its build, the command line,
// where and when it ran, on how many ranks, with which MPI and HDF5 libraries and which
// kernel path. Every JSON report carries it as its `provenance` object, every HDF5 output
// as attributes of the same names (one scalar each). The MPI and HDF5 versions and the
// kernel path are filled by the layers that own them (jobs/provenance.hpp collects
// a run's record).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace triada {

struct Provenance {
  std::string program;       // "triada-transform", ...
  std::string version;       // the project version (core/version.hpp)
  std::string commit;        // git commit at build time, "<hash>-dirty" or "unknown"
  std::string command_line;  // the words as a POSIX shell reads them back (shell_words)
  std::string host;          // host name of the rank that records it (rank 0)
  std::string date;          // start of the run, UTC, ISO 8601: 2025-06-01T12:34:56Z
  int ranks = 1;             // MPI ranks of the run (its communicator's size)
  std::string mpi_library;   // MPI_Get_library_version, first line
  std::string hdf5_library;  // H5get_libversion, "1.10.8"
  std::string kernels;       // the kernels' instruction-set path: "avx512", "avx2", "portable"
};

// The keys, in the order reports and files list them (the JSON object and the attributes).
nlohmann::json to_json(const Provenance& p);
// Inverse of to_json; throws nlohmann::json's errors on a missing key.
Provenance provenance_from_json(const nlohmann::json& j);

// One word for a POSIX shell: as is when it has only safe characters, else in single quotes
// (a ' inside as '\'').
std::string shell_quote(const std::string& word);
// The words joined by spaces, each shell_quote'd: `sh -c` of it runs the same argv.
std::string shell_words(const std::vector<std::string>& words);
std::string shell_words(int argc, const char* const* argv);

// `t` (seconds since the epoch) as ISO 8601 UTC, "YYYY-MM-DDThh:mm:ssZ"; now by default.
std::string iso8601_utc(long long t);
std::string iso8601_utc_now();
// This host's name ("unknown" if the system has none).
std::string host_name();

// version_string() and git_commit() of this build, with the date and host of now and the
// given program, command line and ranks; the library fields left empty.
Provenance build_provenance(const std::string& program, const std::string& command_line, int ranks);

}  // namespace triada
