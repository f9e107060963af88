#pragma once
// Small owning MPI wrappers (STYLE.md #7): an init/finalize guard, a communicator that
// frees what it created, and CHECK_MPI that turns a failed call into triada::mpi_error.
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace triada::mpi {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

#define CHECK_MPI(call)                                                         \
  do {                                                                          \
    const int triada_mpi_rc_ = (call);                                          \
    if (triada_mpi_rc_ != MPI_SUCCESS)                                          \
      ::triada::mpi::throw_mpi_error(triada_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)

// MPI_Init / MPI_Finalize guard; errors on MPI_COMM_WORLD return codes (not abort).
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
};

// A communicator; frees it on destruction unless it is a predefined one.
class Comm {
 public:
  Comm() = default;
  static Comm world() { return Comm(MPI_COMM_WORLD, false); }
  static Comm self() { return Comm(MPI_COMM_SELF, false); }
  static Comm adopt(MPI_Comm c) { return Comm(c, true); }  // takes ownership
  ~Comm() { release(); }
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  Comm(Comm&& o) noexcept : comm_(std::exchange(o.comm_, MPI_COMM_NULL)), owned_(o.owned_) {}
  Comm& operator=(Comm&& o) noexcept {
    if (this != &o) {
      release();
      comm_ = std::exchange(o.comm_, MPI_COMM_NULL);
      owned_ = o.owned_;
    }
    return *this;
  }

  MPI_Comm get() const { return comm_; }
  bool valid() const { return comm_ != MPI_COMM_NULL; }
  int rank() const;
  int size() const;
  void barrier() const;
  // Split into sub-communicators; a rank passing MPI_UNDEFINED gets an invalid Comm.
  Comm split(int color, int key) const;

 private:
  Comm(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {}
  void release() noexcept {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

// Collective agreement on an error: every rank passes the message it would throw
// (empty if fine); if any rank has one, every rank throws the same input/config error
// (the message of the lowest failing rank). Lets validation fail on all ranks at once,
// so no rank hangs in a later collective and the message is printed once.
enum class ErrorKind { none = 0, config = 1, input = 2, other = 3 };
void agree_on_error(MPI_Comm comm, ErrorKind kind, const std::string& message);

// Runs `body` on every rank; any triada::error is first agreed over `comm` so all ranks
// throw together. Use around phases where one rank alone may fail (e.g. metadata checks).
template <class F>
void collectively(MPI_Comm comm, F&& body) {
  ErrorKind kind = ErrorKind::none;
  std::string msg;
  try {
    body();
  } catch (const config_error& e) {
    kind = ErrorKind::config;
    msg = e.what();
  } catch (const input_error& e) {
    kind = ErrorKind::input;
    msg = e.what();
  } catch (const std::exception& e) {
    kind = ErrorKind::other;
    msg = e.what();
  }
  agree_on_error(comm, kind, msg);
}

// Broadcast a string from root.
std::string bcast_string(MPI_Comm comm, const std::string& s, int root);

}  // namespace triada::mpi
