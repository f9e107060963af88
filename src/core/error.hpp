#pragma once
// The one exception hierarchy (doc/design.md §10.9). Every main catches triada::error once,
// prints one line and makes every rank leave.
#include <stdexcept>
#include <string>
#include <utility>

namespace triada {

// "src/mesh/mpi.cpp:42": our source line in a message about a failed call, without the
// folders of the machine that built the library (its users see them in every error).
inline std::string source_line(const char* file, int line) {
  const std::string f = file;
  const std::size_t at = f.rfind("/src/");
  return (at == std::string::npos ? f : f.substr(at + 1)) + ":" + std::to_string(line);
}

class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// A bad option, INI key or value.
class config_error : public error {
 public:
  using error::error;
};
// A bad input file, dataset, shape, type or size.
class input_error : public error {
 public:
  using error::error;
};
// An MPI call failed.
class mpi_error : public error {
 public:
  using error::error;
};
// An HDF5 call failed (after input validation: I/O or library trouble). what() names the
// call and our source line (for bugs); reason() is HDF5's innermost message alone, for
// input errors that name the file instead (h5::reading_input).
class hdf5_error : public error {
 public:
  explicit hdf5_error(const std::string& what, std::string reason = "")
      : error(what), reason_(std::move(reason)) {}
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};
// A bug: a broken invariant or a call outside a function's contract, never bad input.
class internal_error : public error {
 public:
  using error::error;
};

// The caller asked to stop the run (the Python module's caller, by a signal whose handler
// raised; mesh/cancel.hpp): thrown by every rank together, nothing published.
class cancelled : public error {
 public:
  using error::error;
};

// Marks an error that every rank of the run raised together (see mpi::agree_on_error):
// main prints it once (rank 0) and all ranks leave normally, without MPI_Abort.
struct collective_marker {
  virtual ~collective_marker() = default;
};
template <class E>
class collective : public E, public collective_marker {
 public:
  using E::E;
};

}  // namespace triada
