#pragma once
// What the tensor reader and writer (io/tensor_io.hpp) share: the in-memory complex type,
// dataset paths, file access properties and the hyperslab selections of a brick.
// Internal to src/io.
#include <mpi.h>

#include <array>
#include <string>

#include "core/types.hpp"
#include "geometry/brick.hpp"
#include "io/hdf5.hpp"

namespace triada::tensor_io_detail {

// In-memory complex: {r, i} of native double, the layout of std::complex<double>.
h5::Datatype complex_memtype();

// Dataset paths are taken from the file's root: "x" means "/x".
std::string rooted(const std::string& path);

// File locking where the file system supports it, and no failure where it does not.
void best_effort_locking(hid_t fapl);

// 1 if every link along `path` exists and the object it names exists, 0 if one is missing
// or dangles, negative if HDF5 failed (its error stack says why).
htri_t find_object(hid_t file, const std::string& path, hid_t lapl);
// find_object > 0, with HDF5's error stack cleared.
bool object_exists(hid_t file, const std::string& path, hid_t lapl = H5P_DEFAULT);

std::array<hsize_t, 3> to_h(const ext3& e);
// A brick outside the tensor is a bug of the caller (internal_error naming `who`).
void check_brick_inside(const Brick& b, const ext3& shape, const char* who);
// Selects the brick in a copy of the file space (nothing if it is empty).
h5::Dataspace file_selection(hid_t dset, const Brick& b);
// A 1D memory space of `n` elements; with stride 2 it selects every other one of 2n.
h5::Dataspace memory_selection(index_t n, hsize_t stride = 1);
h5::PropList collective_transfer();
// Parallel (MPI-IO) file access over `comm`, metadata collective.
h5::PropList mpio_access(MPI_Comm comm);

}  // namespace triada::tensor_io_detail
