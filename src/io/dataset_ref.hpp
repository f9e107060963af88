#pragma once
// A tensor's place as the options name it, FILE[:/DSET]: what a config holds (no HDF5 here;
// io/tensor_io.hpp opens it).
#include <string>

namespace triada {

// "file.h5" or "file.h5:/group/dset" split into its parts (dset empty if not given).
struct DatasetRef {
  std::string file;
  std::string dataset;
  std::string str() const { return dataset.empty() ? file : file + ":" + dataset; }
};
// Throws config_error for a spec without a file name.
DatasetRef parse_dataset_ref(const std::string& spec);

}  // namespace triada
