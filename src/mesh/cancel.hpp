#pragma once
// Stopping a run early at its caller's request (the Python module's, when a signal's
// Python handler raised during a call). Nothing is decided inside a signal handler: the
// run polls requested() between batches (and the kernels between chunks of a batch). A
// rank whose caller asks tells the other ranks with a message each sees at its next poll;
// from then on every rank skips its remaining computation but still takes part in every
// message and collective of the run, so none is left waiting, and the run reaches its
// last point before publishing within moments. There, last_stop() agrees over all ranks
// and throws `cancelled` on every one of them: nothing is published. A request after that
// point is left to the caller (Python handles the signal when the call returns). Without a
// Scope (the programs, which end by the signal itself) requested() is false at the cost of
// one load.
#include <mpi.h>

#include <chrono>
#include <functional>
#include <vector>

namespace triada::cancel {

// One call that may be stopped, on the calling thread, over `comm` (collective: the scope
// duplicates comm for its messages). `asked` is polled on this thread by requested().
class Scope {
 public:
  Scope(MPI_Comm comm, std::function<bool()> asked);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // The end of the call, collective: every rank's messages are received and, if a rank was
  // asked to stop after the last agreement, every rank throws `cancelled`.
  void finish();

 private:
  friend bool active();
  friend bool requested();
  friend void agree(MPI_Comm comm);
  friend void last_stop(MPI_Comm comm);
  void tell_others();
  void drain() noexcept;

  MPI_Comm comm_;     // the call's
  MPI_Comm notices_;  // its duplicate, for the messages
  std::function<bool()> asked_;
  Scope* outer_;
  bool stopped_ = false, told_ = false, committed_ = false, finished_ = false;
  std::chrono::steady_clock::time_point next_probe_{};
  std::vector<MPI_Request> sends_;
};

// True while a scope is open on this thread; a run's ranks all have one or none.
bool active();

// True once this rank's caller asked to stop or another rank of the scope said so (then
// for the rest of the scope, until last_stop()). False without a scope.
bool requested();

// A point where a run stops if asked, collective over `comm` (the scope's ranks): throws
// `cancelled` on every rank if any was asked to stop. Without a scope, nothing (no
// communication), as for last_stop.
void agree(MPI_Comm comm);
// agree() at the run's last point before it publishes anything; later requests are left to
// the caller.
void last_stop(MPI_Comm comm);

}  // namespace triada::cancel
