#pragma once
// A run's provenance record (report/provenance.hpp) with the MPI and HDF5 library versions
// and the kernel path filled in, as the programs' reports record it (HDF5 outputs:
// jobs/provenance_attributes.hpp), and --version's text.
#include <mpi.h>

#include <nlohmann/json.hpp>
#include <string>

#include "report/provenance.hpp"

namespace triada {

// This rank's record of a run of `program` on `ranks` ranks (no communication).
Provenance local_provenance(const std::string& program, const std::string& command_line, int ranks);

// Collective over `comm`: rank 0's record (its host and clock), the same on every rank, with
// ranks = the size of `comm`. The ranks agree on the kernel path first
// (mesh/kernel_path.hpp), so the record names the one they run.
Provenance run_provenance(MPI_Comm comm, const std::string& program,
                          const std::string& command_line);

// --version: "<program> <version>", "commit <commit>", the MPI and HDF5 libraries, then
// "kernels: <path> (...)" (kernels::isa_summary; may throw config_error for TRIADA_ISA).
std::string version_text(const std::string& program);

// The report's "kernels" object: the path in use, how it was chosen, the paths compiled and
// those this CPU runs, the -DTRIADA_ARCH flags (null if none) and the register block.
nlohmann::json kernels_json();

}  // namespace triada
