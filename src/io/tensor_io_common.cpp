// Names and types of tensor files, and the HDF5 helpers that the reader (tensor_reader.cpp)
// and the writer (tensor_writer.cpp) share.
#include "io/tensor_io_common.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "io/tensor_io.hpp"

namespace triada {

// ---------------------------------------------------------------------------------------
// Names and types

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
    case ElementType::uint32:
      return "uint32";
  }
  return "?";
}

namespace tensor_io_detail {

// In-memory complex: {r, i} of native double, the layout of std::complex<double>.
h5::Datatype complex_memtype() {
  h5::Datatype t(CHECK_H5(H5Tcreate(H5T_COMPOUND, sizeof(cplx))));
  CHECK_H5(H5Tinsert(t.get(), "r", 0, H5T_NATIVE_DOUBLE));
  CHECK_H5(H5Tinsert(t.get(), "i", sizeof(double), H5T_NATIVE_DOUBLE));
  return t;
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

// stack says why). H5Lexists fails rather than answers when an intermediate link is
// missing, so walk them.
htri_t find_object(hid_t file, const std::string& path, hid_t lapl) {
  if (path.empty() || path[0] != '/') return 0;
  for (size_t pos = 1;; ++pos) {
    pos = path.find('/', pos);
    const std::string prefix = path.substr(0, pos);
    if (prefix.size() > 1 && prefix.back() != '/') {
      const htri_t found = H5Lexists(file, prefix.c_str(), lapl);
      if (found <= 0) return found;
      if (pos != std::string::npos) {  // an intermediate: must be a group to go on
        h5::Object obj(H5Oopen(file, prefix.c_str(), lapl));
        if (!obj.valid()) return -1;
        if (H5Iget_type(obj.get()) != H5I_GROUP) return 0;
      }
    }
    if (pos == std::string::npos) break;
  }
  return H5Oexists_by_name(file, path.c_str(), lapl);
}

bool object_exists(hid_t file, const std::string& path, hid_t lapl) {
  const htri_t ok = find_object(file, path, lapl);
  H5Eclear2(H5E_DEFAULT);
  return ok > 0;
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
      throw internal_error(std::string(who) + ": brick outside the tensor");
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
h5::Dataspace memory_selection(index_t n, hsize_t stride) {
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

}  // namespace tensor_io_detail
}  // namespace triada
