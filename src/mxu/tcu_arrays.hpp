#pragma once
// A TCU input's datasets given in memory (the library's callers, TcuConfig::arrays), read
// by the algorithms as the datasets of the input they name (mxu/tcu_inputs.hpp). Apart from
// the readers, so that a config holding them reaches no HDF5 code.
#include <map>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace triada::tcu_in {

// A dataset of an input given in memory: its extents (slowest first) and its values in C
// order, real or (is_complex) complex.
struct MemoryDataset {
  std::vector<index_t> dims;
  std::vector<double> real;
  std::vector<cplx> complex;
  bool is_complex = false;
};
// Datasets by path ("/A").
using MemoryDatasets = std::map<std::string, MemoryDataset>;

}  // namespace triada::tcu_in
