#pragma once
// A run's provenance record (report/provenance.hpp) with the MPI and HDF5 library versions
// filled in, as the programs' reports and HDF5 outputs record it, and --version's text.
#include <mpi.h>

#include <string>

#include "io/tensor_io.hpp"
#include "report/provenance.hpp"

namespace triada {

// This rank's record of a run of `program` on `ranks` ranks (no communication).
Provenance local_provenance(const std::string& program, const std::string& command_line, int ranks);

// Collective over `comm`: rank 0's record (its host and clock), the same on every rank, with
// ranks = the size of `comm`.
Provenance run_provenance(MPI_Comm comm, const std::string& program,
                          const std::string& command_line);

// The record as attributes of an HDF5 output, one scalar each (ranks an integer, the
// others strings), named as the JSON keys.
void set_provenance_attributes(TensorWriter& w, const Provenance& p);

// --version: "<program> <version>", "commit <commit>", then the MPI and HDF5 libraries.
std::string version_text(const std::string& program);

}  // namespace triada
