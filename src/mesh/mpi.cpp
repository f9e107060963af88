#include "mesh/mpi.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>

#include "core/signal_cleanup.hpp"

namespace triada::mpi {

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw mpi_error(std::string("MPI call failed: ") + call + " at " + source_line(file, line) +
                  ": " + std::string(text, static_cast<size_t>(len)));
}

namespace {
// Open MPI 4 roots the session directories of a user's processes on a host at one
// <TMPDIR>/ompi.<host>.<uid>, which a process started without a launcher (a singleton)
// creates and, ending, removes: singletons that start or end at once race on it (mkdir
// "File exists", orte_session_dir failed), as the concurrent runs of a sweep do. A
// singleton takes a root of its own, removed after MPI_Finalize or by a fatal signal
// (core/signal_cleanup.hpp); a user's OMPI_MCA_orte_tmpdir_base wins. Set for MPI_Init
// only: child processes inherit nothing.
std::string own_session_root;

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(v)) return true;
  return false;
}

void take_own_session_root() {
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
  if (launched_by_mpi() || std::getenv("OMPI_MCA_orte_tmpdir_base")) return;
  const char* tmp = std::getenv("TMPDIR");
  std::string root = std::string(tmp && *tmp ? tmp : "/tmp") + "/triada-ompi.XXXXXX";
  if (!mkdtemp(root.data())) return;  // Open MPI's shared root then
  own_session_root = root;
  signal_cleanup::add(root, true);
  setenv("OMPI_MCA_orte_tmpdir_base", root.c_str(), 1);
#endif
}

// Runs `body` with SIGINT, SIGTERM and SIGHUP held back while this process has a session
// root of its own: Open MPI's daemon of a singleton writes into that root while MPI starts
// and stops, so a clean-up handler running then could leave it behind (core/signal_cleanup.hpp).
template <class F>
auto while_signals_wait(F&& body) {
  if (own_session_root.empty()) return body();
  sigset_t fatal, old;
  sigemptyset(&fatal);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&fatal, sig);
  pthread_sigmask(SIG_BLOCK, &fatal, &old);
  auto result = body();
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return result;
}

void remove_own_session_root() noexcept {
  if (own_session_root.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(own_session_root, ignored);
  signal_cleanup::remove(own_session_root);
  own_session_root.clear();
}

// Shared by Environment and start_if_needed (argc/argv may be null for MPI_Init_thread);
// `level` is the thread support asked for.
void start(int* argc, char*** argv, int level) {
  // Open MPI 4.1 backs shared windows (osc sm) and its shared-memory transport (btl
  // vader) in /dev/shm by default. shmem_mmap_relocate_backing_file, once set here, moved
  // nothing that was on disk but took vader's segments off the list mpirun cleans up: a
  // run ended by a signal left one 4 MiB file per rank in /dev/shm (tests/cli/test_faults.sh).
  // MPI-IO through ROMIO, not Open MPI 4.1's OMPIO: OMPIO's collective writer (write data
  // sieving in fbtl/posix, fcoll vulcan) corrupts small multi-rank HDF5 writes under CPU
  // contention, drops ENOSPC (H5Dwrite returns success on a full disk) and overflows a
  // fixed buffer in its sharedfp component on paths of about 240 characters. ROMIO
  // writes correctly, reports I/O errors and takes any path Linux takes. "^ompio" picks
  // whatever other io component the installation has (romio321 in 4.1, romio341 in 5.0).
  // A user's own OMPI_MCA_io wins (doc/scaling.md "Parallel layout").
  setenv("OMPI_MCA_io", "^ompio", 0);
  take_own_session_root();
  int provided = 0;
  const int code =
      while_signals_wait([&] { return MPI_Init_thread(argc, argv, level, &provided); });
  if (!own_session_root.empty()) unsetenv("OMPI_MCA_orte_tmpdir_base");
  if (code != MPI_SUCCESS) remove_own_session_root();
  CHECK_MPI(code);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}
}  // namespace

Environment::Environment(int& argc, char**& argv) {
  start(&argc, &argv, MPI_THREAD_FUNNELED);
}

Environment::~Environment() {
  finalize_if_started();
}

bool start_if_needed() {
  int running = 0, finalized = 0;
  CHECK_MPI(MPI_Finalized(&finalized));
  if (finalized)
    throw mpi_error(
        "MPI was finalized in this process (MPI_Finalize, e.g. mpi4py's MPI.Finalize()) and "
        "cannot start again");
  CHECK_MPI(MPI_Initialized(&running));
  if (running) return false;
  start(nullptr, nullptr, MPI_THREAD_SERIALIZED);  // the host may call from any thread
  return true;
}

void require_callable_thread() {
  int level = MPI_THREAD_SINGLE, main = 0;
  CHECK_MPI(MPI_Query_thread(&level));
  if (level >= MPI_THREAD_SERIALIZED) return;
  CHECK_MPI(MPI_Is_thread_main(&main));
  if (!main)
    throw mpi_error(std::string("MPI runs at ") +
                    (level == MPI_THREAD_SINGLE ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED") +
                    ": only the thread that started it may call it (MPI_THREAD_SERIALIZED "
                    "or above lets any thread call, one at a time)");
}

void require_usable(MPI_Comm comm) {
  int started = 0, finalized = 0, inter = 0;
  CHECK_MPI(MPI_Initialized(&started));
  CHECK_MPI(MPI_Finalized(&finalized));
  if (!started)
    throw mpi_error("MPI is not started: call MPI_Init (or MPI_Init_thread) before a job runs");
  if (finalized) throw mpi_error("MPI was finalized in this process: a job cannot run after it");
  if (comm == MPI_COMM_NULL) throw mpi_error("the communicator is MPI_COMM_NULL");
  CHECK_MPI(MPI_Comm_test_inter(comm, &inter));
  if (inter)
    throw mpi_error(
        "an intercommunicator: a job runs on an intracommunicator (its ranks one group)");
}

void finalize_if_started() noexcept {
  int started = 0, finalized = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finalized);
  while_signals_wait([&] {
    if (started && !finalized) MPI_Finalize();
    remove_own_session_root();
    return 0;
  });
}

MPI_Comm comm_from_fortran(std::int64_t handle) {
  const MPI_Comm c = MPI_Comm_f2c(static_cast<MPI_Fint>(handle));
  if (c == MPI_COMM_NULL)
    throw mpi_error("not a communicator (Fortran handle " + std::to_string(handle) + ")");
  return c;  // its error handler stays the caller's (mpi4py's returns errors as codes)
}

std::string library_version() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  CHECK_MPI(MPI_Get_library_version(buf, &len));
  std::string v(buf, static_cast<std::size_t>(std::max(0, len)));
  v = v.substr(0, v.find('\n'));
  while (!v.empty() && (v.back() == ' ' || v.back() == '\r' || v.back() == '\0')) v.pop_back();
  return v;
}

int Comm::rank() const {
  int r = 0;
  CHECK_MPI(MPI_Comm_rank(comm_, &r));
  return r;
}
int Comm::size() const {
  int s = 0;
  CHECK_MPI(MPI_Comm_size(comm_, &s));
  return s;
}
void Comm::barrier() const {
  CHECK_MPI(MPI_Barrier(comm_));
}

Comm Comm::split(int color, int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split(comm_, color, key, &out));
  if (out == MPI_COMM_NULL) return Comm();
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  return Comm::adopt(out);
}

Comm Comm::split_shared(int key) const {
  MPI_Comm out = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, &out));
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  return Comm::adopt(out);
}

Comm Comm::dup() const {
  MPI_Comm out = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(comm_, &out));
  return Comm::adopt(out);
}

int count_of(std::size_t n, const char* what) {
  if (n > static_cast<std::size_t>(INT_MAX))
    throw mpi_error(std::string(what) + ": " + std::to_string(n) +
                    " elements exceed MPI's int count");
  return static_cast<int>(n);
}

void Request::wait() {
  if (req_ == MPI_REQUEST_NULL) return;
  CHECK_MPI(MPI_Wait(&req_, MPI_STATUS_IGNORE));
  req_ = MPI_REQUEST_NULL;
}

bool Request::test() {
  if (req_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  CHECK_MPI(MPI_Test(&req_, &done, MPI_STATUS_IGNORE));
  if (done) req_ = MPI_REQUEST_NULL;
  return done != 0;
}

void Request::release() noexcept {
  if (req_ != MPI_REQUEST_NULL && std::uncaught_exceptions() == 0)
    MPI_Wait(&req_, MPI_STATUS_IGNORE);
  req_ = MPI_REQUEST_NULL;
}

void Requests::wait_all() {
  if (!reqs_.empty())
    CHECK_MPI(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE));
  reqs_.clear();
}

void Requests::wait_all_asleep() {
  int done = 0;
  while (!reqs_.empty()) {
    CHECK_MPI(
        MPI_Testall(static_cast<int>(reqs_.size()), reqs_.data(), &done, MPI_STATUSES_IGNORE));
    if (done) break;
    usleep(100);
  }
  reqs_.clear();
}

void Requests::release() noexcept {
  if (!reqs_.empty() && std::uncaught_exceptions() == 0)
    MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE);
  reqs_.clear();
}

MPI_Op op_of(Op op) {
  switch (op) {
    case Op::sum:
      return MPI_SUM;
    case Op::max:
      return MPI_MAX;
    case Op::min:
      return MPI_MIN;
  }
  return MPI_OP_NULL;
}

std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> displs(counts.size());
  int off = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = off;
    off += counts[r];
  }
  return displs;
}

Request isend_bytes(MPI_Comm comm, const void* data, std::size_t bytes, int dest, int tag) {
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Isend(data, count_of(bytes, "isend"), MPI_BYTE, dest, tag, comm, &r));
  return Request(r);
}

void recv_bytes(MPI_Comm comm, int source, int tag, std::vector<std::byte>& buf) {
  MPI_Status status;
  CHECK_MPI(MPI_Probe(source, tag, comm, &status));
  int bytes = 0;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &bytes));
  buf.resize(static_cast<size_t>(bytes));
  CHECK_MPI(MPI_Recv(buf.data(), bytes, MPI_BYTE, source, tag, comm, MPI_STATUS_IGNORE));
}

void recv_bytes(MPI_Comm comm, int source, int tag, void* data, std::size_t bytes) {
  MPI_Status status;
  CHECK_MPI(MPI_Recv(data, count_of(bytes, "recv"), MPI_BYTE, source, tag, comm, &status));
  int got = 0;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &got));
  if (static_cast<std::size_t>(got) != bytes)
    throw mpi_error("recv: " + std::to_string(got) + " bytes from rank " + std::to_string(source) +
                    ", expected " + std::to_string(bytes));
}

int rank(MPI_Comm comm) {
  int r = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &r));
  return r;
}
int size(MPI_Comm comm) {
  int s = 1;
  CHECK_MPI(MPI_Comm_size(comm, &s));
  return s;
}
void barrier(MPI_Comm comm) {
  CHECK_MPI(MPI_Barrier(comm));
}

Request ibarrier(MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Ibarrier(comm, &r));
  return Request(r);
}

void sleepy_barrier(MPI_Comm comm) {
  MPI_Request req = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Ibarrier(comm, &req));
  int flag = 0;
  while (true) {
    CHECK_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (flag) break;
    usleep(1000);
  }
}

std::array<int, 3> dims_create(int n) {
  std::array<int, 3> dims{0, 0, 0};
  CHECK_MPI(MPI_Dims_create(n, 3, dims.data()));
  return dims;
}

double wtime() {
  return MPI_Wtime();
}

void abort(MPI_Comm comm, int code) noexcept {
  MPI_Abort(comm, code);
}

std::string bcast_string(MPI_Comm comm, const std::string& s, int root) {
  int n = static_cast<int>(std::min<size_t>(s.size(), INT_MAX));
  CHECK_MPI(MPI_Bcast(&n, 1, MPI_INT, root, comm));
  std::string out(static_cast<size_t>(n), '\0');
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  if (rank == root) out = s.substr(0, static_cast<size_t>(n));
  if (n > 0) CHECK_MPI(MPI_Bcast(out.data(), n, MPI_CHAR, root, comm));
  return out;
}

std::vector<std::string> gather_strings(MPI_Comm comm, const std::string& mine, int root) {
  const int n = count_of(mine.size(), "gather_strings");
  const std::vector<int> counts = gather(comm, std::span<const int>(&n, 1), root);
  const std::vector<char> all = gatherv(comm, std::span<const char>(mine), counts, root);
  std::vector<std::string> out;
  std::size_t off = 0;
  for (const int c : counts) {
    out.emplace_back(all.data() + off, static_cast<std::size_t>(c));
    off += static_cast<std::size_t>(c);
  }
  return out;
}

namespace {
// The error agree_on_error threw last on this rank: the group of its communicator and the
// number of exceptions in flight while it unwinds (std::uncaught_exceptions()).
struct Agreement {
  MPI_Group group = MPI_GROUP_NULL;
  int in_flight = 0;
};
thread_local Agreement last_agreement;

void forget_agreement() noexcept {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (last_agreement.group != MPI_GROUP_NULL && !finalized) MPI_Group_free(&last_agreement.group);
  last_agreement = {};
}

void remember_agreement(MPI_Comm comm) noexcept {
  forget_agreement();
  if (MPI_Comm_group(comm, &last_agreement.group) != MPI_SUCCESS)
    last_agreement.group = MPI_GROUP_NULL;
  last_agreement.in_flight = std::uncaught_exceptions() + 1;  // with the one thrown next
}
}  // namespace

bool unwinding_agreed_error(MPI_Comm comm) noexcept {
  const int in_flight = std::uncaught_exceptions();
  if (in_flight == 0 || in_flight != last_agreement.in_flight ||
      last_agreement.group == MPI_GROUP_NULL)
    return false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return false;
  // Every rank of comm is in the agreement's group: comm's group minus it is empty.
  MPI_Group mine = MPI_GROUP_NULL, outside = MPI_GROUP_NULL;
  int left = 1;
  if (MPI_Comm_group(comm, &mine) == MPI_SUCCESS &&
      MPI_Group_difference(mine, last_agreement.group, &outside) == MPI_SUCCESS)
    MPI_Group_size(outside, &left);
  if (outside != MPI_GROUP_NULL && outside != MPI_GROUP_EMPTY) MPI_Group_free(&outside);
  if (mine != MPI_GROUP_NULL) MPI_Group_free(&mine);
  return left == 0;
}

Failure first_failure(MPI_Comm comm, bool failed, const std::string& message) {
  int rank = 0, size = 1;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  CHECK_MPI(MPI_Comm_size(comm, &size));
  // Lowest failing rank wins: minimise (failed ? rank : size).
  int mine = failed ? rank : size, first = size;
  CHECK_MPI(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == size) return {};
  return {first, bcast_string(comm, message, first)};
}

void agree_on_error(MPI_Comm comm, ErrorKind kind, const std::string& message) {
  forget_agreement();  // a new phase: an earlier agreement's error was handled or is moot
  // The kind travels as the message's first character.
  const Failure f = first_failure(comm, kind != ErrorKind::none,
                                  static_cast<char>('0' + static_cast<int>(kind)) + message);
  if (f.rank < 0) return;
  const std::string msg = f.message.substr(1);
  remember_agreement(comm);
  switch (static_cast<ErrorKind>(f.message[0] - '0')) {
    case ErrorKind::config:
      throw collective<config_error>(msg);
    case ErrorKind::input:
      throw collective<input_error>(msg);
    case ErrorKind::cancelled:
      throw collective<cancelled>(msg);
    default:
      throw collective<error>(msg);
  }
}

}  // namespace triada::mpi
