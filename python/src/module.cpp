// The extension module _triada: the programs' jobs on numpy arrays, for the pure-Python
// package triada (python/triada/__init__.py), which documents and checks the arguments.
// Errors become the exceptions of the project's hierarchy (core/error.hpp), with the
// programs' one-line messages.
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "config/options.hpp"
#include "core/signal_cleanup.hpp"
#include "core/version.hpp"
#include "interrupt.hpp"
#include "io/hdf5.hpp"
#include "io/output_files.hpp"
#include "jobs/messages.hpp"
#include "mesh/agreement.hpp"
#include "precision/cell_mode.hpp"
#include "report/provenance.hpp"

namespace triada::py {

namespace {
std::recursive_mutex& call_mutex() {
  static std::recursive_mutex m;
  return m;
}
}  // namespace

ArrayView view_of(const pyb::object& obj) {
  ArrayView v;
  if (obj.is_none()) return v;
  const auto a = pyb::reinterpret_borrow<pyb::array>(obj);
  v.given = true;
  v.data = static_cast<const std::byte*>(a.data());
  for (pyb::ssize_t d = 0; d < a.ndim(); ++d) {
    v.shape.push_back(static_cast<index_t>(a.shape(d)));
    v.strides.push_back(static_cast<index_t>(a.strides(d)));
  }
  v.kind = a.dtype().kind();
  v.itemsize = static_cast<int>(a.itemsize());
  v.type_name = pyb::str(a.dtype().attr("name"));
  return v;
}

Serialized::Serialized() : lock_(call_mutex(), std::try_to_lock) {
  if (lock_.owns_lock()) return;
  pyb::gil_scoped_release released;
  lock_.lock();
}

MPI_Comm comm_of(const std::optional<std::int64_t>& fortran_handle) {
  mpi::start_if_needed();
  mpi::require_callable_thread();
  const MPI_Comm comm = fortran_handle ? mpi::comm_from_fortran(*fortran_handle) : MPI_COMM_WORLD;
  mpi::require_usable(comm);  // an intercommunicator hung every rank in the first collective
  return comm;
}

std::string python_command_line() {
  pyb::gil_scoped_acquire gil;
  try {
    const pyb::module_ sys = pyb::module_::import("sys");
    if (pyb::hasattr(sys, "orig_argv"))
      return shell_words(sys.attr("orig_argv").cast<std::vector<std::string>>());
    std::vector<std::string> words{sys.attr("executable").cast<std::string>()};
    if (pyb::hasattr(sys, "argv"))
      for (const std::string& w : sys.attr("argv").cast<std::vector<std::string>>())
        words.push_back(w);
    return shell_words(words);
  } catch (const pyb::error_already_set&) {  // e.g. a word that is not valid UTF-8
    return "python3 (command line not readable)";
  } catch (const pyb::cast_error&) {
    return "python3 (command line not readable)";
  }
}

namespace {

// Python classes of the hierarchy; ValueError and OSError as Python programs expect.
struct Exceptions {
  pyb::object error, config, input, mpi, hdf5;
};

pyb::object new_exception(pyb::module_& m, const char* name, const char* doc, pyb::tuple bases) {
  const std::string full = std::string("triada.") + name;
  pyb::object e = pyb::reinterpret_steal<pyb::object>(
      PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr));
  m.attr(name) = e;
  return e;
}

void register_exceptions(pyb::module_& m) {
  static Exceptions x;  // the module lives as long as the interpreter
  x.error = new_exception(m, "Error", "Any error of the simulator (the programs' exit codes 1-3).",
                          pyb::make_tuple(pyb::handle(PyExc_RuntimeError)));
  x.config = new_exception(m, "ConfigError", "A bad argument, option or config value (exit 2).",
                           pyb::make_tuple(x.error, pyb::handle(PyExc_ValueError)));
  x.input = new_exception(m, "InputError", "A bad input tensor, shape, type or size (exit 1).",
                          pyb::make_tuple(x.error, pyb::handle(PyExc_ValueError)));
  x.mpi = new_exception(m, "MPIError", "An MPI call failed.", pyb::make_tuple(x.error));
  x.hdf5 = new_exception(m, "HDF5Error", "An HDF5 call failed.",
                         pyb::make_tuple(x.error, pyb::handle(PyExc_OSError)));
  pyb::register_exception_translator([](std::exception_ptr p) {
    const auto raise = [](const pyb::object& e, const std::exception& what) {
      PyErr_SetString(e.ptr(), escape_controls(what.what()).c_str());
    };
    try {
      if (p) std::rethrow_exception(p);
    } catch (const config_error& e) {
      raise(x.config, e);
    } catch (const input_error& e) {
      raise(x.input, e);
    } catch (const mpi_error& e) {
      raise(x.mpi, e);
    } catch (const hdf5_error& e) {
      raise(x.hdf5, e);
    } catch (const error& e) {
      raise(x.error, e);
    }
  });
}

// MPI started (unless it runs), with the clean-up on SIGTERM and SIGHUP where they are
// at the default action (core/signal_cleanup.hpp): a kill then leaves no session root.
bool start() {
  const bool started = mpi::start_if_needed();
  signal_cleanup::install_where_default();
  return started;
}

// MPI_Finalize at the interpreter's exit when the module started MPI (HDF5 closed first,
// as the programs do: it would close after MPI_Finalize otherwise), once a call of another
// thread still running has ended; the signal defaults back.
void finalize() {
  Serialized lock;
  mpi::abort_if_abandoned();
  h5::close_library();
  mpi::finalize_if_started();
  signal_cleanup::restore_defaults();
}

// Seconds a call's ranks wait for each other to join it: TRIADA_JOIN_TIMEOUT, 600 by
// default, 0 for no limit (doc/python.md "Communicators").
double join_timeout() {
  const char* given = std::getenv("TRIADA_JOIN_TIMEOUT");
  if (!given || !*given) return 600;
  char* end = nullptr;
  const double s = std::strtod(given, &end);
  if (*end || !(s >= 0) || s > 1e9)
    throw config_error(std::string("TRIADA_JOIN_TIMEOUT: expected seconds >= 0, got '") +
                       printable(given) + "'");
  return s;
}

// Every rank of the call's comm present (or MPIError after join_timeout()), then the first
// failing rank's (error class, message) on every rank, or None where no rank passed one:
// the package's agreement on its own checks, a call's first collective.
std::optional<std::pair<std::string, std::string>> agree(
    const std::optional<std::pair<std::string, std::string>>& mine,
    std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  mpi::Failure first;
  {
    pyb::gil_scoped_release released;
    const std::string text = mine ? mine->first + '\0' + mine->second : "";
    const MPI_Comm comm = comm_of(comm_handle);
    mpi::join_within(comm, join_timeout());
    first = mpi::first_failure(comm, mine.has_value(), text);
  }
  if (first.rank < 0) return std::nullopt;
  const std::size_t cut = first.message.find('\0');
  return std::make_pair(first.message.substr(0, cut), first.message.substr(cut + 1));
}

// The call's arguments as (name, words) pairs, the same on every rank of `comm`, or
// ConfigError on every rank naming the first that differs (its values not the arrays').
void agree_call(const std::vector<std::pair<std::string, std::string>>& arguments,
                std::optional<std::int64_t> comm_handle) {
  Serialized lock;
  std::optional<mpi::Disagreement> d;
  {
    pyb::gil_scoped_release released;
    std::vector<mpi::Field> fields;
    for (const auto& [name, value] : arguments) fields.push_back({name, value});
    d = mpi::first_disagreement(comm_of(comm_handle), fields);
  }
  if (d)
    throw config_error("the ranks disagree on " + d->field + ": rank 0 passed " +
                       printable(d->value0, 80) + ", rank " + std::to_string(d->rank) + " passed " +
                       printable(d->value, 80) +
                       " (every rank makes the same call; only arrays are each rank's own)");
}

// `with _triada.serialized():` holds Serialized for the block.
struct HeldLock {
  std::optional<Serialized> held;
};

}  // namespace

}  // namespace triada::py

PYBIND11_MODULE(_triada, m) {
  namespace py = triada::py;
  namespace pyb = pybind11;
  m.doc() = "The TriADA simulator's jobs on numpy arrays (use the package triada).";
  triada::set_overwrite_option("force=True");  // messages name the package's argument
  py::register_exceptions(m);
  py::register_interrupts(m);
  m.def("version", &triada::version_string, "The library's version.");
  m.attr("cell_modes") = triada::cell_mode_names(", ");  // "fp64, fp32, ..."
  pyb::class_<py::HeldLock>(m, "serialized",
                            "A context that holds the module's lock (one call at a time).")
      .def(pyb::init<>())
      .def("__enter__", [](py::HeldLock& l) { l.held.emplace(); })
      .def("__exit__", [](py::HeldLock& l, const pyb::args&) { l.held.reset(); });
  m.def(
      "mpi_start",
      [] {
        py::Serialized lock;
        return py::start();
      },
      "Starts MPI unless it runs (mpi4py may have); True if this call started it. Raises "
      "MPIError if MPI was finalized.");
  m.def("mpi_finalize", &py::finalize, "MPI_Finalize, for the exit hook of mpi_start's caller.");
  m.def(
      "rank",
      [](std::optional<std::int64_t> comm) {
        py::Serialized lock;
        return triada::mpi::rank(py::comm_of(comm));
      },
      "This rank in the communicator (mpi4py's Comm.py2f() handle; None: the world).");
  m.def(
      "bcast_text",
      [](const std::string& text, std::optional<std::int64_t> comm) {
        py::Serialized lock;
        pyb::gil_scoped_release released;
        return triada::mpi::bcast_string(py::comm_of(comm), text, 0);
      },
      "Rank 0's text on every rank.");
  m.def("agree_call", &py::agree_call, pyb::arg("arguments"), pyb::arg("comm"),
        "Raises ConfigError on every rank unless the call's (name, words) pairs are every "
        "rank's.");
  m.def(
      "abort_if_abandoned", [] { triada::mpi::abort_if_abandoned(); },
      "MPI_Abort if a call gave up waiting for its ranks (for the exit hook).");
  m.def("agree", &py::agree,
        "(class name, message) of the lowest rank that passed one, on every rank; None if "
        "none did.");
  py::register_transform(m);
  py::register_mxu(m);
}
