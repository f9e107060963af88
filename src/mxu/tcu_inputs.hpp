#pragma once
// The inputs of the TCU algorithms (tcu_algorithms.hpp) read from --input (HDF5, or the
// caller's arrays standing for its datasets) and the checks of sizes and parameters they
// share. Every refusal is one line naming the option,
// or the file and dataset, and the rule: config_error for a parameter, input_error for a
// file. Sizes read from a file go through checked arithmetic (core/checked.hpp).
#include <string>
#include <vector>

#include "core/types.hpp"
#include "io/tensor_io.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_arrays.hpp"

namespace triada::tcu_in {

// While it lives, the readers below take the datasets of the input named `file` from
// `datasets` (this thread's reads; checked and named as a file's would be) instead of
// opening a file. The algorithms read their inputs by file and dataset name, so a job given
// arrays runs them unchanged.
class MemoryInput {
 public:
  MemoryInput(std::string file, const MemoryDatasets& datasets);
  ~MemoryInput();
  MemoryInput(const MemoryInput&) = delete;
  MemoryInput& operator=(const MemoryInput&) = delete;
  const std::string& file() const { return file_; }
  const MemoryDatasets& datasets() const { return datasets_; }

 private:
  std::string file_;
  const MemoryDatasets& datasets_;
  const MemoryInput* outer_;
};

// A real rank-1 or rank-2 dataset (any integer or float type), read serially.
std::vector<double> read_real(const std::string& file, const std::string& dset,
                              std::vector<index_t>& dims);
// A non-empty square rank-2 dataset of finite values; returns its side.
index_t read_square(const std::string& file, const std::string& dset, std::vector<double>& out);
// A vector of finite values: rank 1, or rank 2 with one extent 1.
std::vector<double> read_vector(const std::string& file, const std::string& dset);
// A complex vector of finite values: rank 1, any integer, float or compound {r, i} type.
std::vector<cplx> read_complex_vector(const std::string& file, const std::string& dset);

// The file of --input for an algorithm that reads fixed datasets (`datasets` names them);
// config_error if a dataset is named.
std::string input_file(const TcuProblem& p, const char* algo, const char* datasets);
// --input as FILE and DATASET, `fallback` when it names no dataset.
DatasetRef input_dataset(const TcuProblem& p, const char* fallback);

// The natural size: the file's; --size, when also given, must agree (config_error).
index_t resolve_size(const TcuProblem& p, index_t from_file, const char* algo);
// A size asked for (a config error naming `size_name`) or, when `from` names the dataset
// it was read from, from a file (an input error naming it): in [1, max].
void check_size(const std::string& size_name, const char* algo, index_t size, index_t max,
                const char* rule, const std::string& from = "");
// The dataset of --input a size was read from, FILE:/DSET; empty for generated data.
std::string size_source(const TcuProblem& p, const char* default_dataset);

// How messages name a parameter: the problem's option prefix and `name` ("--k").
std::string param_name(const TcuProblem& p, const char* name);

}  // namespace triada::tcu_in
