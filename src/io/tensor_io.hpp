#pragma once
// Tensor files (doc/design.md §5): rank-3 HDF5 datasets, C order. Input element types: any
// integer, float32, float64, and compound {r, i} of float32/float64 (h5py's complex).
// Output: float64 or compound {r, i} of float64. Parallel HDF5: each brick rank reads and
// writes its own hyperslab collectively; no rank holds the whole tensor. The one reader of
// inputs (tensors, matrices, vectors, real arrays) is io/tensor_reader.cpp; the writer is
// io/tensor_writer.cpp.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/types.hpp"
#include "geometry/brick.hpp"
#include "io/dataset_ref.hpp"

namespace triada {

struct TensorInfo {
  std::string dataset;  // resolved full path, e.g. "/x"
  ext3 shape{};
  bool is_complex = false;
  std::string type_name;  // e.g. "int32", "float64", "complex128"
};

// Serial metadata look-up (one rank calls it). Resolves an empty dataset name to the
// file's only rank-3 dataset. Throws input_error with one clear line naming the input:
// missing file, not HDF5, missing dataset, several rank-3 candidates, wrong rank,
// unsupported type, zero extent.
TensorInfo inspect_tensor(const DatasetRef& ref);

// Collective over `comm`: every rank reads its brick (may be empty) of the dataset.
// The brick is clipped to the dataset by the caller. Values land in C order of the brick.
void read_brick(MPI_Comm comm, const std::string& file, const TensorInfo& info, const Brick& brick,
                std::vector<double>& out);
void read_brick(MPI_Comm comm, const std::string& file, const TensorInfo& info, const Brick& brick,
                std::vector<cplx>& out);

// Serial read of a whole rank-2 dataset (coefficient matrices for gemt: /C1, /C2, /C3),
// any integer/float/complex type as above. Throws input_error naming file:dataset.
CoeffMatrix read_matrix(const std::string& file, const std::string& dataset);
// read_matrix's checks and facts without its data: rows, cols and is_complex (data empty).
CoeffMatrix inspect_matrix(const std::string& file, const std::string& dataset);
// The same for a whole rank-1 dataset (real types land in the real parts).
std::vector<cplx> read_vector(const std::string& file, const std::string& dataset);

// A whole dataset of any rank in [min_rank, max_rank], read serially as float64 (HDF5
// converts integer and float types; complex ones are refused): real matrices, vectors and
// rank-4 tensors.
struct ArrayRequest {
  std::string file;
  std::string dataset;  // "" = the file's only dataset of rank min_rank
  std::string label;    // names the file in messages: the file itself or e.g. "--input FILE"
  int min_rank = 1, max_rank = 1;
};
struct RealArray {
  std::vector<index_t> dims;  // extents, slowest first
  std::vector<double> data;   // C order
};
// Throws input_error naming the input, with the checks and words of inspect_tensor.
RealArray read_real_array(const ArrayRequest& request);

// Element types a TensorWriter can store. Transform outputs are float64 / complex128
// (doc/design.md §5); uint32 holds per-cell counts (--activity, §5.11); the others exist for
// test-data generation (triada-gen).
enum class ElementType { int32, float32, float64, complex64, complex128, uint32 };
// "int32" | "float32" | "float64" | "complex64" | "complex128"; throws config_error.
// (uint32 is written, never asked for by name.)
ElementType parse_element_type(const std::string& word);
std::string to_string(ElementType t);
inline bool is_complex(ElementType t) {
  return t == ElementType::complex64 || t == ElementType::complex128;
}

// Atomic, collective output (doc/errors.md "Errors"). The constructor probes the target (an
// existing file is refused unless `force`; under `force` an existing HDF5 file keeps every
// object but the named dataset), creates the file under a temporary name beside it and
// reserves the data's blocks on disk. write_brick() writes this rank's hyperslab
// (collective); attributes are kept and written at finish(). finish() closes, flushes,
// checks and fsyncs the temporary; publish() renames it onto the target (commit() does
// both). If the writer is destroyed or abort()ed before publish(), the temporary file is
// removed and any existing target is untouched.
//
// One file may hold several datasets (DatasetSpec, each written by its index); they are
// created together, and published or removed together.
struct DatasetSpec {
  std::string dataset;  // from the root, e.g. "/stage1/macs" (groups created)
  ext3 shape{};
  ElementType type = ElementType::float64;
};
class TensorWriter {
 public:
  TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape, bool is_complex,
               bool force);
  TensorWriter(MPI_Comm comm, const std::string& file, const std::vector<DatasetSpec>& datasets,
               bool force);
  // Same, with an explicit file element type (real values may be written to integer or
  // float32 files; HDF5 converts, rounding toward zero for integers).
  TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape, ElementType type,
               bool force);
  ~TensorWriter();
  TensorWriter(const TensorWriter&) = delete;
  TensorWriter& operator=(const TensorWriter&) = delete;

  void write_brick(const Brick& brick, const std::vector<double>& values);
  void write_brick(const Brick& brick, const std::vector<cplx>& values);
  // Dataset `index` of the constructor's list (a uint32 one).
  void write_brick(std::size_t index, const Brick& brick, const std::vector<std::uint32_t>& values);
  // Attributes on the dataset (collective, same values on every rank): a string, an
  // integer or a real is a scalar attribute, a vector a 1-D array (h5py: str, numpy
  // scalar, array). After attributes_on(object) they go on that object of the file
  // instead ("/" or a group or dataset created with it).
  void set_attribute(const std::string& name, const std::string& value);
  void set_attribute(const std::string& name, const std::vector<index_t>& value);
  void set_attribute(const std::string& name, index_t value);
  void set_attribute(const std::string& name, double value);
  void attributes_on(const std::string& object);
  // Byte offset in the file of dataset `index`'s data (contiguous, little-endian), known
  // on rank 0 of `comm` (0 elsewhere): where a raw reader (an XDMF Binary item) finds it.
  std::uint64_t data_offset(std::size_t index = 0) const;
  void finish();
  void publish();
  void commit();
  // Collective like every other member: all ranks abort together (as they do when an
  // error was agreed with mpi::collectively), each closing when it gets there, however late.
  // The destructor while a failure of this rank alone unwinds (no agreed error,
  // mpi::unwinding_agreed_error; MPI_Abort follows in the main) skips the collective close
  // and removes the temporary file itself.
  void abort() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The dataset a TensorWriter writes for `target`: as named, from the root, or "/y".
std::string output_dataset_path(const DatasetRef& target);

// Checks, on the calling rank alone, that `target` could be written (see probe_output in
// io/output_files.hpp). Throws input_error naming the file.
void check_output_writable(const DatasetRef& target, bool force);

}  // namespace triada
