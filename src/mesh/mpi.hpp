#pragma once
// Small owning MPI wrappers (doc/design.md §10.7): an init/finalize guard, a communicator that
// frees what it created, move-only requests, typed collectives and point-to-point calls,
// and CHECK_MPI that turns a failed call into triada::mpi_error. Outside src/mesh (and
// src/io) no code calls MPI directly.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace triada::mpi {

[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);

#define CHECK_MPI(call)                                                          \
  do {                                                                           \
    const int triada_mpi_rc_ = (call);                                           \
    if (triada_mpi_rc_ != MPI_SUCCESS)                                           \
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

// For a host that may find MPI started or not (the Python module: mpi4py starts it on
// import): starts it as Environment does (but at MPI_THREAD_SERIALIZED: the host may call
// from any thread, one at a time) unless it runs; true if this call started it. Throws
// mpi_error if MPI was finalized (it cannot start again).
bool start_if_needed();
// Throws mpi_error unless this thread may call MPI: MPI runs at MPI_THREAD_SERIALIZED or
// above, or this is the thread that started it (a host serialises its calls itself).
void require_callable_thread();
// Throws mpi_error naming the problem unless a library job can run on `comm`: MPI started
// and not finalized, a communicator (not MPI_COMM_NULL), an intracommunicator. A job's
// first check, before any collective call (a bad handle aborted the whole job).
void require_usable(MPI_Comm comm);
// MPI_Finalize unless MPI is finalized or was never started (the host's exit hook).
void finalize_if_started() noexcept;
// The communicator of a Fortran handle (mpi4py's Comm.py2f()); the caller keeps it.
MPI_Comm comm_from_fortran(std::int64_t handle);
// The MPI library's own name and version (MPI_Get_library_version), its first line only
// (MPICH appends configure details); callable before MPI starts.
std::string library_version();

// A communicator; frees it on destruction unless it is a predefined one.
class Comm {
 public:
  Comm() = default;
  static Comm world() { return Comm(MPI_COMM_WORLD, false); }
  static Comm self() { return Comm(MPI_COMM_SELF, false); }
  static Comm adopt(MPI_Comm c) { return Comm(c, true); }    // takes ownership
  static Comm borrow(MPI_Comm c) { return Comm(c, false); }  // the caller keeps it
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
  // The ranks sharing this rank's node memory (MPI_COMM_TYPE_SHARED), ordered by key.
  Comm split_shared(int key) const;
  Comm dup() const;

 private:
  Comm(MPI_Comm c, bool owned) : comm_(c), owned_(owned) {}
  void release() noexcept {
    if (owned_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_NULL;
  }
  MPI_Comm comm_ = MPI_COMM_NULL;
  bool owned_ = false;
};

// The MPI datatype of an element type with a name in MPI (typed calls below).
template <class T>
MPI_Datatype datatype() {
  if constexpr (std::is_same_v<T, int>)
    return MPI_INT;
  else if constexpr (std::is_same_v<T, char>)
    return MPI_CHAR;
  else if constexpr (std::is_same_v<T, std::int64_t>)
    return MPI_INT64_T;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return MPI_UINT64_T;
  else if constexpr (std::is_same_v<T, long long>)
    return MPI_LONG_LONG;
  else if constexpr (std::is_same_v<T, long>)
    return MPI_LONG;
  else if constexpr (std::is_same_v<T, double>)
    return MPI_DOUBLE;
  else if constexpr (std::is_same_v<T, std::byte>)
    return MPI_BYTE;
  else
    static_assert(sizeof(T) == 0, "no MPI datatype for this type: use the *_bytes calls");
}

// An MPI element count; throws mpi_error past INT_MAX (MPI's int counts).
int count_of(std::size_t n, const char* what);

// A pending non-blocking operation. Move-only; wait() or test() completes it. The
// destructor is a safety net only: it waits for a request still pending unless an
// exception is unwinding (then a peer may never match it; the run ends by MPI_Abort).
class Request {
 public:
  Request() = default;
  explicit Request(MPI_Request r) : req_(r) {}
  ~Request() { release(); }
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&& o) noexcept : req_(std::exchange(o.req_, MPI_REQUEST_NULL)) {}
  Request& operator=(Request&& o) noexcept {
    if (this != &o) {
      release();
      req_ = std::exchange(o.req_, MPI_REQUEST_NULL);
    }
    return *this;
  }
  bool pending() const { return req_ != MPI_REQUEST_NULL; }
  void wait();
  bool test();  // true once complete (then no longer pending)
  MPI_Request release_handle() { return std::exchange(req_, MPI_REQUEST_NULL); }

 private:
  void release() noexcept;
  MPI_Request req_ = MPI_REQUEST_NULL;
};

// A batch of pending operations completed together (MPI_Waitall); same safety net.
class Requests {
 public:
  Requests() = default;
  ~Requests() { release(); }
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  Requests(Requests&& o) noexcept : reqs_(std::move(o.reqs_)) { o.reqs_.clear(); }
  Requests& operator=(Requests&& o) noexcept {
    if (this != &o) {
      release();
      reqs_ = std::move(o.reqs_);
      o.reqs_.clear();
    }
    return *this;
  }
  void add(Request r) { reqs_.push_back(r.release_handle()); }
  bool empty() const { return reqs_.empty(); }
  std::size_t size() const { return reqs_.size(); }
  void wait_all();  // completes every request, then the batch is empty
  // The same, polling every 100 us asleep instead of spinning: for a rank with nothing
  // else to do, whose core the others may need.
  void wait_all_asleep();

 private:
  void release() noexcept;
  std::vector<MPI_Request> reqs_;
};

enum class Op { sum, max, min };
MPI_Op op_of(Op op);

// Element-wise reduction of `in` into `out` on every rank (same length).
template <class T>
void allreduce(MPI_Comm comm, std::span<const T> in, std::span<T> out, Op op) {
  if (in.size() != out.size()) throw mpi_error("allreduce: buffers of different lengths");
  CHECK_MPI(MPI_Allreduce(in.data(), out.data(), count_of(in.size(), "allreduce"), datatype<T>(),
                          op_of(op), comm));
}
template <class T>
void allreduce(MPI_Comm comm, const std::vector<T>& in, std::vector<T>& out, Op op) {
  out.resize(in.size());
  allreduce<T>(comm, std::span<const T>(in), std::span<T>(out), op);
}
// In place: every rank's `data` becomes the reduction.
template <class T>
void allreduce_in_place(MPI_Comm comm, std::span<T> data, Op op) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, data.data(), count_of(data.size(), "allreduce"),
                          datatype<T>(), op_of(op), comm));
}
// One value.
template <class T>
T allreduce(MPI_Comm comm, T value, Op op) {
  T out{};
  CHECK_MPI(MPI_Allreduce(&value, &out, 1, datatype<T>(), op_of(op), comm));
  return out;
}
template <class T>
T max_of(MPI_Comm comm, T value) {
  return allreduce(comm, value, Op::max);
}
template <class T>
T min_of(MPI_Comm comm, T value) {
  return allreduce(comm, value, Op::min);
}
template <class T>
T sum_of(MPI_Comm comm, T value) {
  return allreduce(comm, value, Op::sum);
}

// Broadcast of typed elements (a named datatype), and of any trivially copyable objects
// as bytes: n * sizeof(T) bytes in messages of at most `piece` bytes (MPI counts are ints:
// a matrix of 2 GiB or more takes several).
inline constexpr std::size_t kMaxBcastBytes = std::size_t{1} << 30;
template <class T>
void bcast(MPI_Comm comm, std::span<T> data, int root) {
  CHECK_MPI(MPI_Bcast(data.data(), count_of(data.size(), "bcast"), datatype<T>(), root, comm));
}
template <class T>
void bcast_bytes(MPI_Comm comm, std::span<T> data, int root, std::size_t piece = kMaxBcastBytes) {
  static_assert(std::is_trivially_copyable_v<T>);
  auto* bytes = reinterpret_cast<std::byte*>(data.data());
  std::size_t at = 0;
  do {
    const std::size_t n = std::min(piece, data.size_bytes() - at);
    CHECK_MPI(MPI_Bcast(bytes + at, count_of(n, "bcast"), MPI_BYTE, root, comm));
    at += n;
  } while (at < data.size_bytes());
}
template <class T>
Request ibcast_bytes(MPI_Comm comm, std::span<T> data, int root) {
  static_assert(std::is_trivially_copyable_v<T>);
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK_MPI(
      MPI_Ibcast(data.data(), count_of(data.size_bytes(), "ibcast"), MPI_BYTE, root, comm, &r));
  return Request(r);
}
// A vector from root: its length (int64), then its elements as bytes if there are any;
// every other rank's vector is resized to match.
template <class T>
void bcast(MPI_Comm comm, std::vector<T>& v, int root) {
  std::int64_t n = static_cast<std::int64_t>(v.size());
  bcast(comm, std::span<std::int64_t>(&n, 1), root);
  v.resize(static_cast<std::size_t>(n));
  if (n > 0) bcast_bytes(comm, std::span<T>(v), root);
}

// Every rank's `mine` (the same length on all) in rank order, on root; empty elsewhere.
template <class T>
std::vector<T> gather(MPI_Comm comm, std::span<const T> mine, int root) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  std::vector<T> all(rank == root ? mine.size() * static_cast<std::size_t>(size) : 0);
  const int n = count_of(mine.size(), "gather");
  CHECK_MPI(MPI_Gather(mine.data(), n, datatype<T>(), all.data(), n, datatype<T>(), root, comm));
  return all;
}
// Displacements of consecutive blocks of these counts.
std::vector<int> displacements(const std::vector<int>& counts);
// Every rank's `mine` (counts[r] elements from rank r; counts read on root) back to back
// in rank order, on root; empty elsewhere.
template <class T>
std::vector<T> gatherv(MPI_Comm comm, std::span<const T> mine, const std::vector<int>& counts,
                       int root) {
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  const std::vector<int> displs = rank == root ? displacements(counts) : std::vector<int>{};
  std::size_t total = 0;
  if (rank == root)
    for (int c : counts) total += static_cast<std::size_t>(c);
  std::vector<T> all(total);
  CHECK_MPI(MPI_Gatherv(mine.data(), count_of(mine.size(), "gatherv"), datatype<T>(), all.data(),
                        rank == root ? counts.data() : nullptr,
                        rank == root ? displs.data() : nullptr, datatype<T>(), root, comm));
  return all;
}
// Every rank's `mine` (counts[r] elements from rank r, counts known to all) back to back in
// rank order into `all`, on every rank.
template <class T>
void allgatherv(MPI_Comm comm, std::span<const T> mine, std::span<T> all,
                const std::vector<int>& counts) {
  const std::vector<int> displs = displacements(counts);
  CHECK_MPI(MPI_Allgatherv(mine.data(), count_of(mine.size(), "allgatherv"), datatype<T>(),
                           all.data(), counts.data(), displs.data(), datatype<T>(), comm));
}

// Point to point. A send's buffer must stay untouched until its request completes.
template <class T>
Request isend(MPI_Comm comm, const T& value, int dest, int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Isend(&value, 1, datatype<T>(), dest, tag, comm, &r));
  return Request(r);
}
Request isend_bytes(MPI_Comm comm, const void* data, std::size_t bytes, int dest, int tag);
template <class T>
T recv(MPI_Comm comm, int source, int tag) {
  T value{};
  CHECK_MPI(MPI_Recv(&value, 1, datatype<T>(), source, tag, comm, MPI_STATUS_IGNORE));
  return value;
}
// The next message from source with tag, whatever its length, into buf (storage reused).
void recv_bytes(MPI_Comm comm, int source, int tag, std::vector<std::byte>& buf);
// The next message from source with tag, of exactly `bytes` bytes, into data.
void recv_bytes(MPI_Comm comm, int source, int tag, void* data, std::size_t bytes);

int rank(MPI_Comm comm);
int size(MPI_Comm comm);
void barrier(MPI_Comm comm);
Request ibarrier(MPI_Comm comm);
// A barrier that waits asleep (ibarrier polled every millisecond) instead of spinning,
// for ranks idle while one rank times something alone.
void sleepy_barrier(MPI_Comm comm);
// Balanced factors of n over 3 axes (MPI_Dims_create), non-increasing.
std::array<int, 3> dims_create(int n);
double wtime();
// Ends every rank of comm (MPI_Abort) with this exit code.
void abort(MPI_Comm comm, int code) noexcept;

// Collective agreement on an error: every rank passes the message it would throw
// (empty if fine); if any rank has one, every rank throws the same input/config error
// (the message of the lowest failing rank). Lets validation fail on all ranks at once,
// so no rank hangs in a later collective and the message is printed once.
// A `cancelled` run (mesh/cancel.hpp) is agreed like an error.
enum class ErrorKind { none = 0, config = 1, input = 2, other = 3, cancelled = 4 };
void agree_on_error(MPI_Comm comm, ErrorKind kind, const std::string& message);

// The same agreement for a host with errors of its own (the Python module's exception
// classes): the lowest rank that failed and its message, on every rank (rank -1: none).
struct Failure {
  int rank = -1;
  std::string message;
};
Failure first_failure(MPI_Comm comm, bool failed, const std::string& message);

// True while an error that agree_on_error threw over a communicator holding every rank of
// `comm` unwinds this rank's stack: each of those ranks unwinds the same error, so a
// collective clean-up on `comm` (closing parallel files) meets all of them, however late a
// loaded machine lets one come. False when nothing unwinds and while a failure of this rank
// alone does (its peers are elsewhere, maybe in another collective, and the program's main
// ends the job with MPI_Abort): a clean-up must then not enter a collective call. Decided
// from what this rank knows, never by waiting: the last agreement it threw (cleared by the
// next) and the exceptions in flight.
bool unwinding_agreed_error(MPI_Comm comm) noexcept;

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
  } catch (const cancelled& e) {
    kind = ErrorKind::cancelled;
    msg = e.what();
  } catch (const std::exception& e) {
    kind = ErrorKind::other;
    msg = e.what();
  }
  agree_on_error(comm, kind, msg);
}

// Broadcast a string from root.
std::string bcast_string(MPI_Comm comm, const std::string& s, int root);

// Every rank's string (up to INT_MAX bytes in all) in rank order, on root; empty elsewhere.
std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root);

}  // namespace triada::mpi
