#pragma once
// What the module's functions share: numpy arrays to views and results back, the
// communicator of a call, a job's typed settings.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
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

// A job's settings as the package gives them, keyed by its config's field names: bool,
// int, float, str, a sequence of numbers, or a dict {str: str} (mesh keys); None or absent:
// the program's default. Read with the GIL held, so that the config is filled without it.
// A value reaches the library's value parsers spelled as Python spells it (str(); a
// sequence's items joined by commas), so that a refusal quotes it as the caller wrote it,
// in the program's message.
class Settings {
 public:
  // Throws TypeError for a key not in `known`.
  Settings(const pyb::dict& given, std::initializer_list<const char*> known);
  // Rank 0's settings on every rank of `comm`. Collective. The package has agreed every
  // argument of the call before (_triada.agree_call): the same settings, sent once more
  // so that a caller of the module alone cannot run ranks on different ones.
  void share(MPI_Comm comm);

  bool has(const std::string& key) const { return values_.contains(key); }
  // True where the value is the bool True.
  bool flag(const std::string& key) const;
  // The value's word ("" if not given).
  std::string word(const std::string& key) const;
  // A file name: "" where not given; an empty one is refused as the program refuses it.
  std::string path(const std::string& key, const std::string& option) const;
  // A dict setting's (key, value) pairs, in the order given.
  std::vector<std::pair<std::string, std::string>> pairs(const std::string& key) const;

 private:
  nlohmann::ordered_json values_ = nlohmann::ordered_json::object();
};

// The interpreter's own command line, shell-quoted (sys.orig_argv: "python3 script.py
// args"; [sys.executable] + sys.argv before Python 3.10): a call's provenance record
// (report/provenance.hpp). Takes the GIL for the time it reads them.
std::string python_command_line();

// The module's parts (module.cpp registers them).
void register_transform(pyb::module_& m);
void register_mxu(pyb::module_& m);

}  // namespace triada::py
