#pragma once
// The start of every job's collective call (doc/cpp.md "Ranks that disagree", "Threads"):
// one job at a time in the process, a communicator a job can run on, and its ranks agreeing
// on what they run, each refused with one exception before any other collective call.
#include <mpi.h>

#include <mutex>
#include <string>

#include "jobs/config_fields.hpp"

namespace triada {

class JobEntry {
 public:
  // Throws mpi_error if another thread of this process is inside a job (the library's MPI
  // and HDF5 sections are not reentrant, and calls that waited could pair with another
  // rank's other job) or `comm` cannot run one (mpi::require_usable), or this thread may not call
  // MPI (mpi::require_callable_thread: MPI below MPI_THREAD_SERIALIZED, not its main thread);
  // config_error on every rank if the ranks' `fields` differ (agree_on; `what` names the struct).
  JobEntry(MPI_Comm comm, const Fields& fields, const std::string& what);

 private:
  std::unique_lock<std::recursive_mutex> lock_;
};

}  // namespace triada
