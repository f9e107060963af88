#include "io/tensor_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "core/error.hpp"
#include "core/checked.hpp"
#include "io/hdf5.hpp"
#include "geometry/memory_model.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Names and types

DatasetRef parse_dataset_ref(const std::string& spec) {
  // Only the last ":/" separates: file names may contain ':' themselves.
  const auto sep = spec.rfind(":/");
  DatasetRef ref;
  if (sep == std::string::npos) {
    ref.file = spec;
  } else {
    ref.file = spec.substr(0, sep);
    ref.dataset = spec.substr(sep + 1);
  }
  if (ref.file.empty()) throw config_error("'" + spec + "': missing file name (FILE[:/DATASET])");
  return ref;
}

ElementType parse_element_type(const std::string& word) {
  if (word == "int32") return ElementType::int32;
  if (word == "float32") return ElementType::float32;
  if (word == "float64") return ElementType::float64;
  if (word == "complex64") return ElementType::complex64;
  if (word == "complex128") return ElementType::complex128;
  throw config_error("unknown element type '" + word +
                     "' (expected int32, float32, float64, complex64 or complex128)");
}

std::string to_string(ElementType t) {
  switch (t) {
    case ElementType::int32:
      return "int32";
    case ElementType::float32:
      return "float32";
    case ElementType::float64:
      return "float64";
    case ElementType::complex64:
      return "complex64";
    case ElementType::complex128:
      return "complex128";
  }
  return "?";
}

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

// In-memory complex: {r, i} of native double, the layout of std::complex<double>.
h5::Datatype complex_memtype() {
  h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, sizeof(cplx))));
  CHECK_H5(H5Tinsert(t.get(), "r", 0, H5T_NATIVE_DOUBLE));
  CHECK_H5(H5Tinsert(t.get(), "i", sizeof(double), H5T_NATIVE_DOUBLE));
  return t;
}

// File types, little-endian as h5py writes them on the usual machines.
h5::Datatype file_type(ElementType e) {
  switch (e) {
    case ElementType::int32:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_STD_I32LE)));
    case ElementType::float32:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_IEEE_F32LE)));
    case ElementType::float64:
      return h5::Datatype(CHECK_H5(H5Tcopy(H5T_IEEE_F64LE)));
    case ElementType::complex64:
    case ElementType::complex128: {
      const bool wide = e == ElementType::complex128;
      const size_t w = wide ? 8 : 4;
      h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, 2 * w)));
      const hid_t part = wide ? H5T_IEEE_F64LE : H5T_IEEE_F32LE;
      CHECK_H5(H5Tinsert(t.get(), "r", 0, part));
      CHECK_H5(H5Tinsert(t.get(), "i", w, part));
      return t;
    }
  }
  throw std::logic_error("file_type: bad ElementType");
}

// Dataset paths are taken from the file's root: "x" means "/x".
std::string rooted(const std::string& path) {
  return path.empty() || path[0] == '/' ? path : "/" + path;
}

// File locking where the file system supports it, and no failure where it does not
// (e.g. some NFS and Lustre mounts), instead of HDF5's "unable to lock file".
void best_effort_locking(hid_t fapl) {
#if H5_VERSION_GE(1, 10, 7)
  CHECK_H5(H5Pset_file_locking(fapl, true, true));
#else
  (void)fapl;
#endif
}

// ---------------------------------------------------------------------------------------
// Serial opening with input_error messages that name the input

h5::File open_serial(const std::string& file) {
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (!fs::exists(st)) throw input_error(file + ": no such file");
  if (fs::is_directory(st)) throw input_error(file + ": is a directory");
  const htri_t is_h5 = H5Fis_hdf5(file.c_str());
  if (is_h5 == 0) throw input_error(file + ": not an HDF5 file");
  if (is_h5 < 0) throw input_error(file + ": cannot read (" + h5::last_error_message() + ")");
  h5::PropList fapl(CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
  best_effort_locking(fapl.get());
  const hid_t id = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get());
  if (id < 0) throw input_error(file + ": cannot open (" + h5::last_error_message() + ")");
  return h5::File(id);
}

// True if every link along `path` exists and the object it names exists (not dangling).
// H5Lexists fails rather than answers when an intermediate link is missing, so walk them.
bool object_exists(hid_t file, const std::string& path) {
  if (path.empty() || path[0] != '/') return false;
  for (size_t pos = 1;; ++pos) {
    pos = path.find('/', pos);
    const std::string prefix = path.substr(0, pos);
    if (prefix.size() > 1 && prefix.back() != '/' &&
        H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      return false;
    }
    if (pos == std::string::npos) break;
  }
  const htri_t ok = H5Oexists_by_name(file, path.c_str(), H5P_DEFAULT);
  H5Eclear2(H5E_DEFAULT);
  return ok > 0;
}

// Opens `path` as a dataset; `name` is how the user wrote it ("in.h5:/x").
h5::Dataset open_dataset(hid_t file, const std::string& path, const std::string& name) {
  if (!object_exists(file, path)) throw input_error(name + ": no such dataset");
  h5::Object obj(H5Oopen(file, path.c_str(), H5P_DEFAULT));
  if (!obj.valid()) throw input_error(name + ": cannot open (" + h5::last_error_message() + ")");
  const H5I_type_t kind = H5Iget_type(obj.get());
  if (kind != H5I_DATASET)
    throw input_error(name + ": not a dataset" + (kind == H5I_GROUP ? " (a group)" : ""));
  const hid_t id = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  if (id < 0) throw input_error(name + ": cannot open (" + h5::last_error_message() + ")");
  return h5::Dataset(id);
}

std::vector<hsize_t> dims_of(hid_t dset) {
  h5::Dataspace space(CHECK_H5(H5Dget_space(dset)));
  const int rank = CHECK_H5(H5Sget_simple_extent_ndims(space.get()));
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  if (rank > 0) CHECK_H5(H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr));
  return dims;
}

std::string dims_string(const std::vector<hsize_t>& dims) {
  std::string s;
  for (size_t d = 0; d < dims.size(); ++d) s += (d ? "x" : "") + std::to_string(dims[d]);
  return s;
}

// Rank, type and extent checks shared by tensors and matrices.
struct Checked {
  std::vector<hsize_t> dims;
  TypeDesc type;
};
Checked check_dataset(hid_t dset, int want_rank, const std::string& name) {
  Checked c;
  c.dims = dims_of(dset);
  if (static_cast<int>(c.dims.size()) != want_rank)
    throw input_error(name + ": rank " + std::to_string(c.dims.size()) + ", expected a rank-" +
                      std::to_string(want_rank) +
                      (want_rank == 3   ? " tensor"
                       : want_rank == 2 ? " matrix"
                                        : " dataset"));
  h5::Datatype t(CHECK_H5(H5Dget_type(dset)));
  c.type = describe_type(t.get());
  if (!c.type.supported)
    throw input_error(name + ": unsupported element type (" + c.type.name + ")");
  for (hsize_t n : c.dims)
    if (n == 0) throw input_error(name + ": empty extent " + dims_string(c.dims));
  return c;
}

std::string find_rank3_dataset(hid_t file, const std::string& fname) {
  const std::vector<h5::DatasetEntry> all = h5::list_datasets(file);
  std::vector<std::string> rank3;
  for (const auto& e : all)
    if (e.rank == 3) rank3.push_back(e.path);
  if (rank3.size() == 1) return rank3[0];
  std::string list;
  if (rank3.empty()) {
    if (all.empty()) throw input_error(fname + ": no rank-3 dataset (the file has no datasets)");
    const size_t shown = std::min<size_t>(all.size(), 6);
    for (size_t k = 0; k < shown; ++k)
      list += (k ? ", " : "") + all[k].path + " (rank " + std::to_string(all[k].rank) + ")";
    if (shown < all.size()) list += ", ...";
    throw input_error(fname + ": no rank-3 dataset (found: " + list + ")");
  }
  for (size_t k = 0; k < rank3.size(); ++k) list += (k ? ", " : "") + rank3[k];
  throw input_error(fname + ": several rank-3 datasets (" + list + "); name one as " + fname + ":" +
                    rank3[0]);
}

// ---------------------------------------------------------------------------------------
// Hyperslabs

std::array<hsize_t, 3> to_h(const ext3& e) {
  return {static_cast<hsize_t>(e[0]), static_cast<hsize_t>(e[1]), static_cast<hsize_t>(e[2])};
}

void check_brick_inside(const Brick& b, const ext3& shape, const char* who) {
  if (b.empty()) return;
  for (int d = 0; d < 3; ++d)
    if (b.lo[d] < 0 || b.hi[d] > shape[d])
      throw std::logic_error(std::string(who) + ": brick outside the tensor");
}

// Selects the brick in a copy of the file space (nothing if it is empty).
h5::Dataspace file_selection(hid_t dset, const Brick& b) {
  h5::Dataspace space(CHECK_H5(H5Dget_space(dset)));
  if (b.empty()) {
    CHECK_H5(H5Sselect_none(space.get()));
  } else {
    const auto start = to_h(b.lo), count = to_h(b.extents());
    CHECK_H5(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                                 nullptr));
  }
  return space;
}

// A 1D memory space of `n` elements; with stride 2 it selects every other one of 2n
// (the real parts of a complex buffer). An empty brick selects nothing but still exists,
// so the rank can take part in the collective call.
h5::Dataspace memory_selection(index_t n, hsize_t stride = 1) {
  const hsize_t len = std::max<hsize_t>(1, static_cast<hsize_t>(n) * stride);
  h5::Dataspace space(CHECK_H5(H5Screate_simple(1, &len, nullptr)));
  if (n == 0) {
    CHECK_H5(H5Sselect_none(space.get()));
  } else if (stride != 1) {
    const hsize_t start = 0, count = static_cast<hsize_t>(n);
    CHECK_H5(H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, &start, &stride, &count, nullptr));
  }
  return space;
}

h5::PropList collective_transfer() {
  h5::PropList dxpl(CHECK_H5(H5Pcreate(H5P_DATASET_XFER)));
  CHECK_H5(H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE));
  return dxpl;
}

h5::PropList mpio_access(MPI_Comm comm) {
  h5::PropList fapl(CHECK_H5(H5Pcreate(H5P_FILE_ACCESS)));
  CHECK_H5(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL));
  CHECK_H5(H5Pset_all_coll_metadata_ops(fapl.get(), true));
  CHECK_H5(H5Pset_coll_metadata_write(fapl.get(), true));
  best_effort_locking(fapl.get());
  return fapl;
}

template <class T>
void read_brick_impl(MPI_Comm comm, const std::string& file, const TensorInfo& info,
                     const Brick& brick, std::vector<T>& out) {
  if constexpr (!is_complex_v<T>) {
    if (info.is_complex)
      throw std::logic_error("read_brick: " + file + ":" + info.dataset +
                             " is complex; read it into std::vector<cplx>");
  }
  check_brick_inside(brick, info.shape, "read_brick");
  h5::QuietErrors quiet;
  const std::string name = file + ":" + info.dataset;
  h5::File f;
  h5::Dataset d;
  mpi::collectively(comm, [&] {
    h5::PropList fapl = mpio_access(comm);
    f = h5::File(H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.get()));
    if (!f.valid()) throw input_error(file + ": cannot open (" + h5::last_error_message() + ")");
    d = h5::Dataset(H5Dopen2(f.get(), info.dataset.c_str(), H5P_DEFAULT));
    if (!d.valid()) throw input_error(name + ": no such dataset");
    const auto dims = dims_of(d.get());
    if (dims.size() != 3 || static_cast<index_t>(dims[0]) != info.shape[0] ||
        static_cast<index_t>(dims[1]) != info.shape[1] ||
        static_cast<index_t>(dims[2]) != info.shape[2])
      throw input_error(name + ": changed while reading (now " + dims_string(dims) + ")");
  });
  out.assign(static_cast<size_t>(brick.count()), T{});
  mpi::collectively(comm, [&] {
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
        // Real file data into the real parts; imaginary parts stay zero.
        h5::Dataspace mspace = memory_selection(brick.count(), 2);
        CHECK_H5(H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(), buf));
      }
    } else {
      h5::Dataspace mspace = memory_selection(brick.count());
      CHECK_H5(H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), fspace.get(), dxpl.get(), buf));
    }
  });
  mpi::collectively(comm, [&] {
    d.close();
    f.close();
  });
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Inputs

TensorInfo inspect_tensor(const DatasetRef& ref) {
  h5::QuietErrors quiet;
  h5::File f = open_serial(ref.file);
  TensorInfo info;
  info.dataset = ref.dataset.empty() ? find_rank3_dataset(f.get(), ref.file) : rooted(ref.dataset);
  const std::string name = ref.file + ":" + info.dataset;
  h5::Dataset d = open_dataset(f.get(), info.dataset, name);
  const Checked c = check_dataset(d.get(), 3, name);
  for (int k = 0; k < 3; ++k) info.shape[k] = static_cast<index_t>(c.dims[k]);
  info.is_complex = c.type.is_complex;
  info.type_name = c.type.name;
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

CoeffMatrix read_matrix(const std::string& file, const std::string& dataset_path) {
  h5::QuietErrors quiet;
  const std::string dataset = rooted(dataset_path);
  h5::File f = open_serial(file);
  const std::string name = file + ":" + dataset;
  h5::Dataset d = open_dataset(f.get(), dataset, name);
  const Checked c = check_dataset(d.get(), 2, name);
  CoeffMatrix m;
  m.rows = static_cast<index_t>(c.dims[0]);
  m.cols = static_cast<index_t>(c.dims[1]);
  m.is_complex = c.type.is_complex;
  // Checked: a declared shape must not wrap into a small buffer that H5Dread overruns.
  const std::string label = name + ": the " + std::to_string(c.dims[0]) + "x" + std::to_string(c.dims[1]) + " matrix";
  const index_t elements = checked_mul(m.rows, m.cols, label);
  require_memory(checked_mul(static_cast<std::uint64_t>(elements), sizeof(cplx), label), label);
  m.data.assign(static_cast<size_t>(elements), cplx{});
  if (m.is_complex) {
    h5::Datatype mt = complex_memtype();
    CHECK_H5(H5Dread(d.get(), mt.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, m.data.data()));
  } else {
    h5::Dataspace mspace = memory_selection(elements, 2);
    CHECK_H5(
        H5Dread(d.get(), H5T_NATIVE_DOUBLE, mspace.get(), H5S_ALL, H5P_DEFAULT, m.data.data()));
  }
  return m;
}

// ---------------------------------------------------------------------------------------
// Output

void check_output_writable(const DatasetRef& target, bool force) {
  const std::string& file = target.file;
  if (file.empty()) throw config_error("empty output file name");
  std::error_code ec;
  const auto st = fs::status(file, ec);
  if (fs::is_directory(st)) throw input_error(file + ": is a directory");
  if (fs::exists(st) && !force) throw input_error(file + ": exists (use --force to overwrite)");
  fs::path dir = fs::path(file).parent_path();
  if (dir.empty()) dir = ".";
  const auto dst = fs::status(dir, ec);
  if (!fs::exists(dst)) throw input_error(file + ": directory " + dir.string() + " does not exist");
  if (!fs::is_directory(dst)) throw input_error(file + ": " + dir.string() + " is not a directory");
  // access(W_OK) says yes to root even where creating fails (read-only mounts, /proc),
  // so try what we will do: create a file in the directory, then remove it.
  const std::string probe = (dir / (".triada-probe-" + std::to_string(::getpid()))).string();
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0 && errno == EEXIST) {  // left over from a killed run of the same pid
    ::unlink(probe.c_str());
    fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  }
  if (fd < 0) throw input_error(file + ": directory " + dir.string() + " is not writable");
  ::close(fd);
  ::unlink(probe.c_str());
}

namespace {

enum class WriterState { unopened, open, committed, aborted };

// How long a rank waits in abort() for its peers before assuming it failed alone.
constexpr std::chrono::seconds peer_timeout{10};

// True if every rank of `comm` reaches this call within `timeout`. A collective abort
// meets here quickly; a rank failing alone times out instead of blocking forever in a
// collective close its peers never enter (they are ended by MPI_Abort in run_app).
bool peers_join(MPI_Comm comm, std::chrono::seconds timeout) noexcept {
  MPI_Request req = MPI_REQUEST_NULL;
  if (MPI_Ibarrier(comm, &req) != MPI_SUCCESS) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int done = 0;
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
    if (done) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

std::string temp_name_for(const std::string& target) {
  const fs::path p(target);
  const std::string base = "." + p.filename().string() + ".tmp-" + std::to_string(::getpid());
  return (p.parent_path() / base).string();
}

}  // namespace

struct TensorWriter::Impl {
  mpi::Comm comm;  // private duplicate: our collectives never match the caller's
  int rank = 0;
  DatasetRef target;
  ext3 shape{};
  ElementType type = ElementType::float64;
  bool force = false;
  std::string tmp;
  h5::File file;
  h5::Dataset dset;
  WriterState state = WriterState::unopened;

  ~Impl() { abort(); }

  void abort() noexcept {
    if (state != WriterState::open) return;
    state = WriterState::aborted;
    h5::QuietErrors quiet;
    std::error_code ec;
    if (peers_join(comm.get(), peer_timeout)) {
      dset.reset();  // collective closes: every rank is here
      file.reset();
      MPI_Barrier(comm.get());
      if (rank == 0) fs::remove(tmp, ec);
    } else {
      // Alone: a collective close would hang. Leave the handles to process exit and
      // remove the temporary file from this rank (any rank can unlink it).
      dset.release();
      file.release();
      fs::remove(tmp, ec);
    }
  }

  void require_open(const char* who) const {
    if (state != WriterState::open)
      throw std::logic_error(std::string("TensorWriter::") + who + ": writer is not open");
  }

  template <class T>
  void write(const Brick& brick, const std::vector<T>& values) {
    require_open("write_brick");
    if (is_complex(type) != is_complex_v<T>)
      throw std::logic_error(std::string("TensorWriter::write_brick: ") +
                             (is_complex_v<T> ? "complex" : "real") + " values for a " +
                             to_string(type) + " dataset");
    check_brick_inside(brick, shape, "TensorWriter::write_brick");
    if (static_cast<index_t>(values.size()) != brick.count())
      throw std::logic_error("TensorWriter::write_brick: values do not match the brick size");
    h5::QuietErrors quiet;
    mpi::collectively(comm.get(), [&] {
      h5::Dataspace fspace = file_selection(dset.get(), brick);
      h5::Dataspace mspace = memory_selection(brick.count());
      h5::PropList dxpl = collective_transfer();
      h5::Datatype mt =
          is_complex_v<T> ? complex_memtype() : h5::Datatype(CHECK_H5(H5Tcopy(H5T_NATIVE_DOUBLE)));
      const T dummy{};
      const void* buf = values.empty() ? static_cast<const void*>(&dummy)
                                       : static_cast<const void*>(values.data());
      CHECK_H5(H5Dwrite(dset.get(), mt.get(), mspace.get(), fspace.get(), dxpl.get(), buf));
    });
  }

  // Attributes replace one of the same name; all ranks pass the same value (HDF5 writes
  // metadata collectively).
  void put_attribute(const std::string& name, hid_t type_id, hid_t space_id, const void* buf) {
    require_open("set_attribute");
    h5::QuietErrors quiet;
    mpi::collectively(comm.get(), [&] {
      if (CHECK_H5(H5Aexists(dset.get(), name.c_str())) > 0)
        CHECK_H5(H5Adelete(dset.get(), name.c_str()));
      h5::Attribute a(CHECK_H5(
          H5Acreate2(dset.get(), name.c_str(), type_id, space_id, H5P_DEFAULT, H5P_DEFAULT)));
      CHECK_H5(H5Awrite(a.get(), type_id, buf));
      a.close();
    });
  }
};

TensorWriter::TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape,
                           bool is_complex_values, bool force)
    : TensorWriter(comm, target, shape,
                   is_complex_values ? ElementType::complex128 : ElementType::float64, force) {}

TensorWriter::TensorWriter(MPI_Comm comm, const DatasetRef& target, const ext3& shape,
                           ElementType type, bool force)
    : impl_(std::make_unique<Impl>()) {
  for (index_t n : shape)
    if (n < 0) throw std::logic_error("TensorWriter: negative extent " + to_string(shape));
  h5::QuietErrors quiet;
  Impl& m = *impl_;
  MPI_Comm dup = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(comm, &dup));
  m.comm = mpi::Comm::adopt(dup);
  m.rank = m.comm.rank();
  m.target = target;
  m.target.dataset = m.target.dataset.empty() ? "/y" : rooted(m.target.dataset);
  m.shape = shape;
  m.type = type;
  m.force = force;
  const MPI_Comm c = m.comm.get();

  mpi::collectively(c, [&] {
    if (m.rank == 0) check_output_writable(m.target, force);
  });
  // The pid of rank 0 makes the name unique among concurrent runs on the same directory.
  m.tmp = mpi::bcast_string(c, m.rank == 0 ? temp_name_for(m.target.file) : std::string(), 0);
  // From here on, destruction (e.g. by a failure below) removes the temporary file.
  m.state = WriterState::open;
  mpi::collectively(c, [&] {
    h5::PropList fapl = mpio_access(c);
    m.file = h5::File(H5Fcreate(m.tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()));
    if (!m.file.valid())
      throw input_error(m.target.file + ": cannot create " + m.tmp + " (" +
                        h5::last_error_message() + ")");
    h5::PropList lcpl(CHECK_H5(H5Pcreate(H5P_LINK_CREATE)));
    CHECK_H5(H5Pset_create_intermediate_group(lcpl.get(), 1));
    h5::PropList dcpl(CHECK_H5(H5Pcreate(H5P_DATASET_CREATE)));
    CHECK_H5(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS));
    // Every element is written by some brick; don't write a fill value first.
    CHECK_H5(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER));
    const auto dims = to_h(shape);
    h5::Dataspace space(CHECK_H5(H5Screate_simple(3, dims.data(), nullptr)));
    h5::Datatype ft = file_type(type);
    m.dset = h5::Dataset(H5Dcreate2(m.file.get(), m.target.dataset.c_str(), ft.get(), space.get(),
                                    lcpl.get(), dcpl.get(), H5P_DEFAULT));
    if (!m.dset.valid())
      throw input_error(m.target.str() + ": cannot create dataset (" + h5::last_error_message() +
                        ")");
  });
}

TensorWriter::~TensorWriter() = default;  // Impl's destructor aborts if not committed

void TensorWriter::write_brick(const Brick& brick, const std::vector<double>& values) {
  impl_->write(brick, values);
}
void TensorWriter::write_brick(const Brick& brick, const std::vector<cplx>& values) {
  impl_->write(brick, values);
}

void TensorWriter::set_attribute(const std::string& name, const std::string& value) {
  // Variable-length UTF-8: h5py reads it as str (fixed-length would come back as bytes).
  h5::QuietErrors quiet;
  h5::Datatype t(CHECK_H5(H5Tcopy(H5T_C_S1)));
  CHECK_H5(H5Tset_size(t.get(), H5T_VARIABLE));
  CHECK_H5(H5Tset_cset(t.get(), H5T_CSET_UTF8));
  h5::Dataspace s(CHECK_H5(H5Screate(H5S_SCALAR)));
  const char* p = value.c_str();
  impl_->put_attribute(name, t.get(), s.get(), &p);
}

void TensorWriter::set_attribute(const std::string& name, const std::vector<index_t>& value) {
  h5::QuietErrors quiet;
  const hsize_t n = value.size();
  h5::Dataspace s(CHECK_H5(H5Screate_simple(1, &n, nullptr)));
  const index_t dummy = 0;
  impl_->put_attribute(name, H5T_STD_I64LE, s.get(), value.empty() ? &dummy : value.data());
}

void TensorWriter::set_attribute(const std::string& name, double value) {
  h5::QuietErrors quiet;
  h5::Dataspace s(CHECK_H5(H5Screate(H5S_SCALAR)));
  impl_->put_attribute(name, H5T_IEEE_F64LE, s.get(), &value);
}

void TensorWriter::commit() {
  Impl& m = *impl_;
  m.require_open("commit");
  h5::QuietErrors quiet;
  const MPI_Comm c = m.comm.get();
  // Close (flush) on every rank before the file changes its name.
  mpi::collectively(c, [&] {
    m.dset.close();
    m.file.close();
  });
  mpi::collectively(c, [&] {
    if (m.rank != 0) return;
    std::error_code ec;
    // Re-check: the target may have appeared since the constructor looked.
    if (!m.force && fs::exists(m.target.file, ec))
      throw input_error(m.target.file + ": exists (use --force to overwrite)");
    // Same directory, so rename is atomic; it replaces a target only under --force.
    fs::rename(m.tmp, m.target.file, ec);
    if (ec)
      throw input_error(m.target.file + ": cannot rename " + m.tmp + " onto it (" + ec.message() +
                        ")");
  });
  m.state = WriterState::committed;
}

void TensorWriter::abort() noexcept {
  impl_->abort();
}

}  // namespace triada
