// The tensor reader (io/tensor_io.hpp): one serial stack that opens and checks any input
// dataset (tensors, matrices, vectors, real arrays) and the collective brick reads.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <type_traits>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/input_file.hpp"
#include "io/tensor_io.hpp"
#include "io/tensor_io_common.hpp"
#include "mesh/mpi.hpp"

namespace triada {

using namespace tensor_io_detail;

namespace {

struct TypeDesc {
  bool supported = false;
  bool is_complex = false;
  std::string name;  // "int16", "float64", "complex128", or what it is if unsupported
};

std::string class_name(H5T_class_t c) {
  switch (c) {
    case H5T_TIME:
      return "time";
    case H5T_STRING:
      return "string";
    case H5T_BITFIELD:
      return "bitfield";
    case H5T_OPAQUE:
      return "opaque";
    case H5T_REFERENCE:
      return "reference";
    case H5T_ENUM:
      return "enum";
    case H5T_VLEN:
      return "variable-length";
    case H5T_ARRAY:
      return "array";
    default:
      return "unknown class";
  }
}

std::string float_name(size_t bytes) {
  return "float" + std::to_string(8 * bytes);
}

TypeDesc describe_type(hid_t t) {
  const H5T_class_t cls = CHECK_H5(H5Tget_class(t));
  const size_t size = H5Tget_size(t);
  TypeDesc d;
  if (cls == H5T_INTEGER) {
    const bool is_signed = CHECK_H5(H5Tget_sign(t)) != H5T_SGN_NONE;
    d.supported = true;
    d.name = (is_signed ? "int" : "uint") + std::to_string(8 * size);
  } else if (cls == H5T_FLOAT) {
    d.supported = size == 4 || size == 8;
    d.name = float_name(size);
  } else if (cls == H5T_COMPOUND) {
    // h5py's complex: exactly two float members "r" and "i" of the same width.
    d.name = "compound other than {r, i} of float32/float64";
    if (CHECK_H5(H5Tget_nmembers(t)) != 2) return d;
    if (H5Tget_member_index(t, "r") < 0 || H5Tget_member_index(t, "i") < 0) {
      H5Eclear2(H5E_DEFAULT);
      return d;
    }
    size_t widths[2] = {0, 0};
    for (unsigned m = 0; m < 2; ++m) {
      h5::Datatype mt(CHECK_H5(H5Tget_member_type(t, m)));
      if (CHECK_H5(H5Tget_class(mt.get())) != H5T_FLOAT) return d;
      widths[m] = H5Tget_size(mt.get());
    }
    if (widths[0] != widths[1] || (widths[0] != 4 && widths[0] != 8)) return d;
    d.supported = true;
    d.is_complex = true;
    d.name = widths[0] == 4 ? "complex64" : "complex128";
  } else {
    d.name = class_name(cls);
  }
  return d;
}

// ---------------------------------------------------------------------------------------
// Serial opening with input_error messages that name the input

// `label` names the file in messages: the file itself, or e.g. "--input FILE".
h5::File open_serial(const std::string& file, const std::string& label) {
  require_regular_file(file, label);  // before any open(): a FIFO would block forever
  const htri_t is_h5 = H5Fis_hdf5(file.c_str());
  if (is_h5 == 0) throw input_error(label + ": not an HDF5 file");
  const auto why = [] { return h5::plain_reason(h5::last_error_message()); };
  if (is_h5 < 0) throw input_error(label + ": cannot read (" + why() + ")");
  h5::PropList fapl(CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
  best_effort_locking(fapl.get());
  const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) throw input_error(label + ": cannot open (" + why() + ")");
  return h5::File(id);
}

// Opens `path` as a dataset; `name` is how the user wrote it ("in.h5:/x"). Links along
// the path are followed as HDF5 does (soft and external), external ones only to regular files.
h5::Dataset open_dataset(hid_t file, const std::string& path, const std::string& name) {
  const h5::PropList lapl = h5::input_link_access();
  const auto why = [] { return h5::plain_reason(h5::last_error_message()); };
  const htri_t found = find_object(file, path, lapl.get());
  if (found < 0) throw input_error(name + ": cannot open (" + why() + ")");
  // A dangling external link (or one we refuse) is opened anyway: HDF5 then says why.
  H5L_info_t link;
  const bool external = found == 0 && H5Lget_info(file, path.c_str(), &link, H5P_DEFAULT) >= 0 &&
                        link.type == H5L_TYPE_EXTERNAL;
  if (found == 0 && !external) throw input_error(name + ": no such dataset");
  h5::Object obj(H5Oopen(file, path.c_str(), lapl.get()));
  if (!obj.valid()) throw input_error(name + ": cannot open (" + why() + ")");
  const H5I_type_t kind = H5Iget_type(obj.get());
  if (kind != H5I_DATASET)
    throw input_error(name + ": not a dataset" + (kind == H5I_GROUP ? " (a group)" : ""));
  return h5::Dataset(obj.release());  // H5Oopen of a dataset gives a dataset id
}

std::vector<hsize_t> dims_of(hid_t dset, std::vector<hsize_t>* max_dims = nullptr) {
  h5::Dataspace space(CHECK_H5(H5Dget_space(dset)));
  const int rank = CHECK_H5(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), max(dims.size());
  if (rank > 0) CHECK_H5(H5Sget_simple_extent_dims(space.get(), dims.data(), max.data()));
  if (max_dims) *max_dims = max;
  return dims;
}

// "rank 2", "scalar", "empty (null dataspace)".
std::string extent_of(hid_t dset) {
  h5::Dataspace space(CHECK_H5(H5Dget_space(dset)));
  return h5::describe_extent(space.get());
}

std::string dims_string(const std::vector<hsize_t>& dims) {
  std::string s;
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? "x" : "") + std::to_string(dims[d]);
  return s;
}

// HDF5 never writes a chunk larger than a fixed maximum extent (H5Pset_chunk refuses it),
// but libhdf5 1.10.8 reads such a corrupt layout past its buffers (h5dump crashes on it).
void check_chunks(hid_t dset, const std::vector<hsize_t>& max, const std::string& name) {
  h5::PropList dcpl(CHECK_H5(H5Dget_create_plist(dset)));
  if (CHECK_H5(H5Pget_layout(dcpl.get())) != H5D_CHUNKED) return;
  std::vector<hsize_t> chunk(max.size());
  const int n = CHECK_H5(H5Pget_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data()));
  bool bad = n != static_cast<int>(max.size());
  for (size_t k = 0; k < max.size() && !bad; ++k)
    bad = chunk[k] == 0 || (max[k] != H5S_UNLIMITED && chunk[k] > max[k]);
  if (bad)
    throw input_error(name + ": corrupt layout (chunks of " + dims_string(chunk) +
                      " for a maximum extent of " + dims_string(max) + ")");
}

// "a rank-3 tensor", "a rank-2 matrix", "a rank-4 dataset", "a rank-1 or rank-2 dataset".
std::string expected_rank(int lo, int hi) {
  std::string s = "a rank-" + std::to_string(lo);
  for (int r = lo + 1; r <= hi; ++r) s += " or rank-" + std::to_string(r);
  return s + (lo != hi ? " dataset" : lo == 3 ? " tensor" : lo == 2 ? " matrix" : " dataset");
}

// Rank, type and extent checks shared by every input.
struct Checked {
  std::vector<hsize_t> dims;
  TypeDesc type;
};
Checked check_dataset(hid_t dset, int lo_rank, int hi_rank, const std::string& name) {
  Checked c;
  std::vector<hsize_t> max;
  c.dims = dims_of(dset, &max);
  const int rank = static_cast<int>(c.dims.size());
  if (rank < lo_rank || rank > hi_rank)
    throw input_error(name + ": " + extent_of(dset) + ", expected " +
                      expected_rank(lo_rank, hi_rank));
  // HDF5 does not check this itself; a flipped bit in a corrupt file shows here first.
  for (size_t k = 0; k < max.size(); ++k)
    if (max[k] != H5S_UNLIMITED && c.dims[k] > max[k])
      throw input_error(name + ": corrupt dataspace (extent " + dims_string(c.dims) +
                        " beyond its maximum " + dims_string(max) + ")");
  check_chunks(dset, max, name);
  h5::Datatype t(CHECK_H5(H5Dget_type(dset)));
  c.type = describe_type(t.get());
  if (!c.type.supported)
    throw input_error(name + ": unsupported element type (" + c.type.name + ")");
  for (hsize_t n : c.dims)
    if (n == 0) throw input_error(name + ": empty extent " + dims_string(c.dims));
  return c;
}

// The file's only dataset of rank r.min_rank (an external link to one counts, see
// list_datasets). An object that cannot be read might have been a candidate: then the file
// is refused.
std::string find_only_dataset(hid_t file, const ArrayRequest& r) {
  const std::vector<h5::DatasetEntry> all = h5::list_datasets(file);
  std::vector<std::string> found;
  for (const auto& e : all) {
    if (!e.problem.empty())
      throw input_error(r.label + ":" + e.path + ": cannot read (" + h5::plain_reason(e.problem) +
                        ")");
    if (e.rank == r.min_rank) found.push_back(e.path);
  }
  if (found.size() == 1) return found[0];
  const std::string none = r.label + ": no rank-" + std::to_string(r.min_rank) + " dataset";
  std::string list;
  if (found.empty()) {
    if (all.empty()) throw input_error(none + " (the file has no datasets)");
    const size_t shown = std::min<size_t>(all.size(), 6);
    for (size_t k = 0; k < shown; ++k)
      list += (k ? ", " : "") + all[k].path + " (" + all[k].shape +
              (all[k].target.empty() ? "" : ", external link to " + all[k].target) + ")";
    if (shown < all.size()) list += ", ...";
    throw input_error(none + " (found: " + list + ")");
  }
  for (size_t k = 0; k < found.size(); ++k) list += (k ? ", " : "") + found[k];
  throw input_error(r.label + ": several rank-" + std::to_string(r.min_rank) + " datasets (" +
                    list + "); name one as " + r.file + ":" + found[0]);
}

// The serial reader: the input `r` asks for, opened and checked (its file, its dataset, and
// "LABEL:/path" that names it in messages). Failed HDF5 calls are bad input.
struct OpenInput {
  h5::File file;
  h5::Dataset dset;
  std::string path, name;
  Checked facts;
};
OpenInput open_input(const ArrayRequest& r) {
  OpenInput in;
  in.file = open_serial(r.file, r.label);
  // A named dataset is opened alone; only an unnamed one makes us look at the others.
  in.path = r.dataset.empty()
                ? h5::reading_input(r.label, [&] { return find_only_dataset(in.file.get(), r); })
                : rooted(r.dataset);
  in.name = r.label + ":" + in.path;
  h5::reading_input(in.name, [&] {
    in.dset = open_dataset(in.file.get(), in.path, in.name);
    in.facts = check_dataset(in.dset.get(), r.min_rank, r.max_rank, in.name);
  });
  return in;
}

// An input open in parallel: closed collectively, by the last collective phase of a read or
// by the destructor while an agreed error unwinds (every rank closes then). While a failure
// of this rank alone unwinds, the handles are let go instead: a collective close would wait
// for peers that never come (MPI_Abort in the program's main ends them).
struct ParallelInput {
  MPI_Comm comm = MPI_COMM_NULL;
  h5::File file;
  h5::Dataset dset;
  explicit ParallelInput(MPI_Comm c) : comm(c) {}
  ParallelInput(const ParallelInput&) = delete;
  ParallelInput& operator=(const ParallelInput&) = delete;
  ~ParallelInput() {
    if (std::uncaught_exceptions() > 0 && !mpi::unwinding_agreed_error(comm)) {
      dset.release();
      file.release();
    }
  }
};

template <class T>
void read_brick_impl(MPI_Comm comm, const std::string& file, const TensorInfo& info,
                     const Brick& brick, std::vector<T>& out) {
  if constexpr (!is_complex_v<T>) {
    if (info.is_complex)
      throw internal_error("read_brick: " + file + ":" + info.dataset +
                           " is complex; read it into std::vector<cplx>");
  }
  check_brick_inside(brick, info.shape, "read_brick");
  h5::QuietErrors quiet;
  const std::string name = file + ":" + info.dataset;
  ParallelInput in(comm);
  h5::File& f = in.file;
  h5::Dataset& d = in.dset;
  const auto why = [] { return h5::plain_reason(h5::last_error_message()); };
  // Every failure, on any rank, is agreed by all (collectively) and is an input error
  // naming the file (reading_input): rank 0 checked the file, so it changed or is corrupt.
  mpi::collectively(comm, [&] {
    h5::reading_input(name, [&] {
      require_regular_file(file, file);  // replaced since rank 0 checked it?
      h5::PropList fapl = mpio_access(comm);
      f = h5::File(H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()));
      if (!f.valid()) throw input_error(file + ": cannot open (" + why() + ")");
      const h5::PropList dapl = h5::input_link_access(H5P_DATASET_ACCESS);
      d = h5::Dataset(H5Dopen2(f.get(), info.dataset.c_str(), dapl.get()));
      if (!d.valid()) throw input_error(name + ": cannot open (" + why() + ")");
      const auto dims = dims_of(d.get());
      if (dims.size() != 3 || static_cast<index_t>(dims[0]) != info.shape[0] ||
          static_cast<index_t>(dims[1]) != info.shape[1] ||
          static_cast<index_t>(dims[2]) != info.shape[2])
        throw input_error(name + ": changed while reading (now " + dims_string(dims) + ")");
    });
  });
  out.assign(static_cast<size_t>(brick.count()), T{});
  mpi::collectively(comm, [&] {
    h5::reading_input(name, [&] {
      h5::Dataspace fspace = file_selection(d.get(), brick);
      h5::PropList dxpl = collective_transfer();
      T dummy{};
      void* buf = out.empty() ? static_cast<void*>(&dummy) : static_cast<void*>(out.data());
      if constexpr (is_complex_v<T>) {
        if (info.is_complex) {
          h5::Datatype mt = complex_memtype();
          h5::Dataspace mspace = memory_selection(brick.count());
          CHECK_H5(H5Dread(d.get(), mt.get(), mspace.get(), fspace.get(), dxpl.get(), buf));
        } else {
          // Real file data into the real parts, imaginary parts zero. A strided memory
          // selection would make HDF5 and MPI-IO stage the brick in buffers as large as
          // itself, so read contiguously into the upper half of the buffer and widen in
          // place, front to back: element i is written (doubles 2i, 2i+1) only after
          // double n+i is read, and n+i >= 2i+1 never lies below what is still unread.
          const index_t n = brick.count();
          double* d2 = reinterpret_cast<double*>(buf);
          h5::Dataspace mspace = memory_selection(n);
          CHECK_H5(H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(),
                           n == 0 ? buf : static_cast<void*>(d2 + n)));
          for (index_t i = 0; i < n; ++i) {
            const double re = d2[n + i];
            d2[2 * i] = re;
            d2[2 * i + 1] = 0.0;
          }
        }
      } else {
        h5::Dataspace mspace = memory_selection(brick.count());
        CHECK_H5(H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(), buf));
      }
    });
  });
  mpi::collectively(comm, [&] {
    h5::reading_input(name, [&] {
      d.close();
      f.close();
    });
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Inputs

TensorInfo inspect_tensor(const DatasetRef& ref) {
  h5::QuietErrors quiet;
  const OpenInput in = open_input({ref.file, ref.dataset, ref.file, 3, 3});
  TensorInfo info;
  info.dataset = in.path;
  for (int k = 0; k < 3; ++k) info.shape[k] = static_cast<index_t>(in.facts.dims[k]);
  info.is_complex = in.facts.type.is_complex;
  info.type_name = in.facts.type.name;
  return info;
}

void read_brick(MPI_Comm comm, const std::string& file, const TensorInfo& info, const Brick& brick,
                std::vector<double>& out) {
  read_brick_impl(comm, file, info, brick, out);
}
void read_brick(MPI_Comm comm, const std::string& file, const TensorInfo& info, const Brick& brick,
                std::vector<cplx>& out) {
  read_brick_impl(comm, file, info, brick, out);
}

// A failed HDF5 call (a corrupt file) is bad input naming the matrix, not an internal error.
CoeffMatrix read_whole(const std::string& file, const std::string& dataset_path, int rank,
                       bool with_data = true);
CoeffMatrix read_matrix(const std::string& file, const std::string& dataset_path) {
  return h5::reading_input(file + ":" + rooted(dataset_path),
                           [&] { return read_whole(file, dataset_path, 2); });
}
CoeffMatrix inspect_matrix(const std::string& file, const std::string& dataset_path) {
  return h5::reading_input(file + ":" + rooted(dataset_path),
                           [&] { return read_whole(file, dataset_path, 2, false); });
}

std::vector<cplx> read_vector(const std::string& file, const std::string& dataset_path) {
  return h5::reading_input(file + ":" + rooted(dataset_path),
                           [&] { return read_whole(file, dataset_path, 1).data; });
}

// A whole rank-2 (rows x cols) or rank-1 (rows x 1) dataset; without data, its facts alone.
CoeffMatrix read_whole(const std::string& file, const std::string& dataset_path, int rank,
                       bool with_data) {
  h5::QuietErrors quiet;
  const OpenInput in = open_input({file, rooted(dataset_path), file, rank, rank});
  CoeffMatrix m;
  m.rows = static_cast<index_t>(in.facts.dims[0]);
  m.cols = rank == 2 ? static_cast<index_t>(in.facts.dims[1]) : 1;
  m.is_complex = in.facts.type.is_complex;
  // Checked: a declared shape must not wrap into a small buffer that H5Dread overruns.
  const std::string label =
      in.name + ": the " + std::to_string(m.rows) +
      (rank == 2 ? "x" + std::to_string(m.cols) + " matrix" : "-entry vector");
  if (!with_data) {
    checked_mul(m.rows, m.cols, label);
    return m;
  }
  const std::size_t elements = matrix_elements(m.rows, m.cols, 1, label);
  m.data.assign(elements, cplx{});
  const hid_t d = in.dset.get();
  if (m.is_complex) {
    h5::Datatype mt = complex_memtype();
    CHECK_H5(H5Dread(d, mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, m.data.data()));
  } else {
    h5::Dataspace mspace = memory_selection(static_cast<index_t>(elements), 2);
    CHECK_H5(H5Dread(d, H5T_NATIVE_DOUBLE, mspace.get(), H5S_ALL, H5P_DEFAULT, m.data.data()));
  }
  return m;
}

RealArray read_real_array(const ArrayRequest& request) {
  h5::QuietErrors quiet;
  const OpenInput in = open_input(request);
  if (in.facts.type.is_complex)
    throw input_error(in.name + ": unsupported element type (" + in.facts.type.name +
                      "; integer or float expected)");
  RealArray a;
  for (const hsize_t n : in.facts.dims) a.dims.push_back(static_cast<index_t>(n));
  // Checked: a declared shape must not wrap into a small buffer that H5Dread overruns.
  const auto count = checked_product<std::uint64_t>(in.facts.dims, in.name);
  require_memory(checked_mul(count, sizeof(double), in.name), in.name);
  a.data.resize(static_cast<std::size_t>(count));
  h5::reading_input(in.name, [&] {
    CHECK_H5(
        H5Dread(in.dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, a.data.data()));
  });
  return a;
}

}  // namespace triada
