#include "jobs/job_entry.hpp"

#include "core/error.hpp"
#include "mesh/mpi.hpp"

namespace triada {

namespace {
std::recursive_mutex& job_mutex() {
  static std::recursive_mutex m;
  return m;
}
}  // namespace

JobEntry::JobEntry(MPI_Comm comm, const Fields& fields, const std::string& what)
    : lock_(job_mutex(), std::try_to_lock) {
  if (!lock_.owns_lock())
    throw mpi_error(
        "another thread of this process is running a job: the library runs one job at a time "
        "in a process, and every rank runs its jobs in the same order (doc/cpp.md \"Threads\")");
  mpi::require_usable(comm);
  mpi::require_callable_thread();
  agree_on(comm, fields, what);
}

}  // namespace triada
