#include "io/matrix_reader.hpp"

#include <cstdint>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/input_file.hpp"

namespace triada {

namespace {

h5::File open_file(const RealArrayRequest& r) {
  if (r.words == ArrayWords::plain) {
    h5::File f = h5::open_read_only(r.file);
    if (!f.valid()) throw input_error(r.label + ": not a readable HDF5 file");
    return f;
  }
  if (!h5::is_hdf5_file(r.file)) throw input_error(r.label + ": not an HDF5 file");
  h5::File f = h5::open_read_only(r.file);
  if (!f.valid()) throw input_error(r.label + ": cannot open (" + h5::last_error_message() + ")");
  return f;
}

// The dataset asked for, or the file's only one of rank min_rank (labelled wording: a
// relative path is taken from the root and named so).
std::string dataset_path(hid_t file, const RealArrayRequest& r) {
  std::string path = r.dataset;
  if (path.empty()) {
    std::vector<std::string> found;
    for (const auto& e : h5::list_datasets(file))
      if (e.rank == r.min_rank) found.push_back(e.path);
    const std::string rank = "rank-" + std::to_string(r.min_rank);
    if (found.size() != 1)
      throw input_error(r.label + ": " +
                        (found.empty() ? "no " + rank + " dataset"
                                       : "several " + rank + " datasets; name one as " + r.file +
                                             ":" + found[0]));
    path = found[0];
  }
  if (r.words == ArrayWords::labelled && path[0] != '/') path = "/" + path;
  return path;
}

bool real_type(h5::TypeClass c) {
  return c == h5::TypeClass::integer || c == h5::TypeClass::real;
}

void check_rank(const std::vector<hsize_t>& dims, const RealArrayRequest& r,
                const std::string& name) {
  const int rank = static_cast<int>(dims.size());
  if (rank >= r.min_rank && rank <= r.max_rank) return;
  if (r.words == ArrayWords::labelled)
    throw input_error(name + ": rank " + std::to_string(rank) + ", expected " +
                      std::to_string(r.min_rank));
  throw input_error(name + ": expected a rank-" + std::to_string(r.min_rank) + " or rank-" +
                    std::to_string(r.max_rank) + " dataset, got rank " + std::to_string(rank));
}

// Opens the dataset and checks its type and rank in the order of the request's wording.
std::vector<hsize_t> check_dataset(const h5::Dataset& d, const RealArrayRequest& r,
                                   const std::string& name) {
  std::vector<hsize_t> dims;
  if (r.words == ArrayWords::labelled) {
    dims = h5::extents(d);
    check_rank(dims, r, name);
    if (!real_type(h5::type_class(d)))
      throw input_error(name + ": unsupported element type (integer or float expected)");
  } else {
    if (!real_type(h5::type_class(d)))
      throw input_error(name + ": expected an integer or real dataset");
    dims = h5::extents(d);
    check_rank(dims, r, name);
  }
  return dims;
}

}  // namespace

RealArray read_real_array(const RealArrayRequest& r) {
  h5::QuietErrors quiet;
  require_regular_file(r.file, r.label);  // a FIFO would block in open
  const h5::File f = open_file(r);
  const std::string path = dataset_path(f.get(), r);
  const std::string name = r.label + ":" + path;
  if (!h5::link_exists(f.get(), path)) throw input_error(name + ": no such dataset");
  h5::Dataset d = h5::try_open_dataset(f.get(), path);
  if (!d.valid()) {
    if (r.words == ArrayWords::labelled) throw input_error(name + ": not a dataset");
    h5::throw_hdf5_error("H5Dopen2", __FILE__, __LINE__);
  }
  const std::vector<hsize_t> dims = check_dataset(d, r, name);
  RealArray a;
  for (const hsize_t n : dims) a.dims.push_back(static_cast<index_t>(n));
  // Checked: a declared shape must not wrap into a small buffer that H5Dread overruns.
  const auto count = checked_product<std::uint64_t>(dims, name);
  require_memory(checked_mul(count, sizeof(double), name), name);
  a.data = h5::read_as_double(d, count);
  return a;
}

}  // namespace triada
