#pragma once
// What the module's functions share: numpy arrays to views and results back, the
// communicator of a call, argument lists parsed by the programs' own parsers.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "jobs/array_view.hpp"
#include "mesh/mpi.hpp"

namespace triada::py {

namespace pyb = pybind11;

// A numpy array's view (not given for None). The array must outlive the view.
ArrayView view_of(const pyb::object& obj);

// A C-order numpy array of `shape` that owns `values` (moved, not copied).
template <class T>
pyb::array to_numpy(std::vector<T>&& values, const std::vector<index_t>& shape) {
  auto* owned = new std::vector<T>(std::move(values));
  pyb::capsule free_it(owned, [](void* p) { delete static_cast<std::vector<T>*>(p); });
  return pyb::array_t<T>(shape, owned->data(), free_it);
}

// The module's calls one at a time in the process: MPI runs at MPI_THREAD_SERIALIZED (or
// FUNNELED, if mpi4py asked so) and HDF5 is not built thread-safe. Every function here that
// touches MPI or HDF5 holds it; the package holds it for a whole call (its agreement on
// the arguments, the job, the report's broadcast), so one thread's collectives never
// interleave with another's. Recursive; constructed with the GIL held, which it releases
// while it waits (the holder may need the GIL to finish).
class Serialized {
 public:
  Serialized();

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

// The communicator of a call: mpi4py's Comm.py2f() handle, or the world without one. MPI
// started if it is not; throws mpi_error if it was finalized, or if this thread may not
// call it (mpi::require_callable_thread).
MPI_Comm comm_of(const std::optional<std::int64_t>& fortran_handle);

// The interpreter's own command line, shell-quoted (sys.orig_argv: "python3 script.py
// args"; [sys.executable] + sys.argv before Python 3.10): a call's provenance record
// (report/provenance.hpp). Takes the GIL for the time it reads them.
std::string python_command_line();

// The module's parts (module.cpp registers them).
void register_transform(pyb::module_& m);
void register_mxu(pyb::module_& m);

}  // namespace triada::py
