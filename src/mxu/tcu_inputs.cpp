#include "mxu/tcu_inputs.hpp"

#include <utility>

#include "core/error.hpp"
#include "core/finite.hpp"
#include "io/hdf5.hpp"
#include "io/tensor_io.hpp"

namespace triada::tcu_in {

namespace {

thread_local const MemoryInput* t_memory = nullptr;

// The dataset `dset` of the input in memory named `file`; null when `file` is a file.
const MemoryDataset* in_memory(const std::string& file, const std::string& dset) {
  if (!t_memory || file != t_memory->file()) return nullptr;
  const std::string path = dset.empty() || dset[0] != '/' ? "/" + dset : dset;
  const auto it = t_memory->datasets().find(path);
  if (it == t_memory->datasets().end()) throw input_error(file + ":" + path + ": no such dataset");
  return &it->second;
}

// A real dataset of rank 1 or 2 in memory, refused as read_real_array refuses a file's.
std::vector<double> memory_real(const MemoryDataset& d, const std::string& name,
                                std::vector<index_t>& dims) {
  const auto rank = d.dims.size();
  if (rank < 1 || rank > 2)
    throw input_error(name + ": " + (rank ? "rank " + std::to_string(rank) : "scalar") +
                      ", expected a rank-1 or rank-2 dataset");
  std::string extent;
  for (const index_t n : d.dims) extent += (extent.empty() ? "" : "x") + std::to_string(n);
  for (const index_t n : d.dims)
    if (n == 0) throw input_error(name + ": empty extent " + extent);
  if (d.is_complex)
    throw input_error(name + ": unsupported element type (complex128; integer or float expected)");
  dims = d.dims;
  return d.real;
}

// A rank-1 dataset in memory as complex values, refused as read_vector refuses a file's.
std::vector<cplx> memory_complex(const MemoryDataset& d, const std::string& name) {
  const std::size_t rank = d.dims.size();
  if (rank != 1)
    throw input_error(name + ": " + (rank ? "rank " + std::to_string(rank) : "scalar") +
                      ", expected a rank-1 dataset");
  if (d.dims[0] == 0) throw input_error(name + ": empty extent 0");
  if (d.is_complex) return d.complex;
  return std::vector<cplx>(d.real.begin(), d.real.end());
}

}  // namespace

MemoryInput::MemoryInput(std::string file, const MemoryDatasets& datasets)
    : file_(std::move(file)), datasets_(datasets), outer_(t_memory) {
  t_memory = this;
}

MemoryInput::~MemoryInput() {
  t_memory = outer_;
}

std::vector<double> read_real(const std::string& file, const std::string& dset,
                              std::vector<index_t>& dims) {
  if (const MemoryDataset* d = in_memory(file, dset))
    return memory_real(*d, file + ":" + dset, dims);
  RealArray a = read_real_array({file, dset, file, 1, 2});
  dims = std::move(a.dims);
  return std::move(a.data);
}

index_t read_square(const std::string& file, const std::string& dset, std::vector<double>& out) {
  std::vector<index_t> dims;
  out = h5::reading_input(file + ":" + dset, [&] { return read_real(file, dset, dims); });
  if (dims.size() != 2 || dims[0] != dims[1] || dims[0] < 1)
    throw input_error(file + ":" + dset + ": expected a non-empty square matrix");
  require_finite(out, dims, file + ":" + dset);
  return dims[0];
}

std::vector<double> read_vector(const std::string& file, const std::string& dset) {
  std::vector<index_t> dims;
  std::vector<double> v =
      h5::reading_input(file + ":" + dset, [&] { return read_real(file, dset, dims); });
  if (dims.size() == 2 && dims[0] != 1 && dims[1] != 1)
    throw input_error(file + ":" + dset +
                      ": expected a vector (rank 1, or rank 2 with an extent 1)");
  require_finite(v, dims, file + ":" + dset);
  return v;
}

std::vector<cplx> read_complex_vector(const std::string& file, const std::string& dset) {
  const MemoryDataset* d = in_memory(file, dset);
  std::vector<cplx> v = d ? memory_complex(*d, file + ":" + dset) : triada::read_vector(file, dset);
  require_finite(v, {}, file + ":" + dset);
  return v;
}

std::string input_file(const TcuProblem& p, const char* algo, const char* datasets) {
  const DatasetRef ref = parse_dataset_ref(p.input);
  if (!ref.dataset.empty())
    throw config_error(p.input_name + ": " + algo + " reads the datasets " + datasets +
                       "; give the file name alone, got '" + p.input + "'");
  return ref.file;
}

DatasetRef input_dataset(const TcuProblem& p, const char* fallback) {
  DatasetRef ref = parse_dataset_ref(p.input);
  if (ref.dataset.empty()) ref.dataset = fallback;
  return ref;
}

index_t resolve_size(const TcuProblem& p, index_t from_file, const char* algo) {
  if (p.size > 0 && p.size != from_file)
    throw config_error(p.size_name + " " + std::to_string(p.size) + " does not match the " + algo +
                       " input " + p.input + " (size " + std::to_string(from_file) + ")");
  return from_file;
}

void check_size(const std::string& size_name, const char* algo, index_t size, index_t max,
                const char* rule, const std::string& from) {
  if (size >= 1 && size <= max) return;
  const std::string need =
      std::string(algo) + " needs " + rule + " in [1, " + std::to_string(max) + "]";
  if (from.empty()) throw config_error(size_name + " " + std::to_string(size) + ": " + need);
  throw input_error(from + ": size " + std::to_string(size) + ": " + need);
}

std::string size_source(const TcuProblem& p, const char* default_dataset) {
  if (p.input.empty()) return "";
  const DatasetRef ref = input_dataset(p, default_dataset);
  return ref.file + ":" + ref.dataset;
}

std::string param_name(const TcuProblem& p, const char* name) {
  return p.option_prefix + name;
}

}  // namespace triada::tcu_in
