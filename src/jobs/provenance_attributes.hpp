#pragma once
// A run's provenance record (jobs/provenance.hpp) on an HDF5 output: the library's own, kept
// out of the installed headers with the HDF5 writer it takes.
#include "io/tensor_io.hpp"
#include "report/provenance.hpp"

namespace triada {

// The record as attributes of an HDF5 output, one scalar each (ranks an integer, the
// others strings), named as the JSON keys.
void set_provenance_attributes(TensorWriter& w, const Provenance& p);

}  // namespace triada
