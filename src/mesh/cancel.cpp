#include "mesh/cancel.hpp"

#include <chrono>
#include <exception>
#include <string>

#include "core/error.hpp"
#include "mesh/mpi.hpp"

namespace triada::cancel {

namespace {
thread_local Scope* current = nullptr;
constexpr int kStopTag = 1;
constexpr auto kProbeInterval = std::chrono::milliseconds(5);

void agree_on_stop(MPI_Comm comm, bool stop) {
  mpi::collectively(comm, [&] {
    if (stop) throw cancelled("interrupted (rank " + std::to_string(mpi::rank(comm)) + ")");
  });
}
}  // namespace

Scope::Scope(MPI_Comm comm, std::function<bool()> asked)
    : comm_(comm), notices_(MPI_COMM_NULL), asked_(std::move(asked)), outer_(current) {
  CHECK_MPI(MPI_Comm_dup(comm, &notices_));
  MPI_Comm_set_errhandler(notices_, MPI_ERRORS_RETURN);
  current = this;
}

Scope::~Scope() {
  if (current == this) current = outer_;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finished_ || finalized) return;
  // Every rank unwinds the same agreed error (or none): they all come here. A failure of
  // this rank alone leaves its peers elsewhere, so the duplicate is let go.
  if (std::uncaught_exceptions() == 0 || mpi::unwinding_agreed_error(comm_)) drain();
}

void Scope::tell_others() {
  const int me = mpi::rank(notices_), n = mpi::size(notices_);
  for (int r = 0; r < n; ++r) {
    if (r == me) continue;
    sends_.push_back(MPI_REQUEST_NULL);
    CHECK_MPI(MPI_Isend(nullptr, 0, MPI_BYTE, r, kStopTag, notices_, &sends_.back()));
  }
  told_ = true;
}

// Receives the messages of every rank that told the others, then frees the duplicate.
void Scope::drain() noexcept {
  int told = told_ ? 1 : 0, tellers = 0;
  MPI_Allreduce(&told, &tellers, 1, MPI_INT, MPI_SUM, notices_);
  for (int k = told; k < tellers; ++k)
    MPI_Recv(nullptr, 0, MPI_BYTE, MPI_ANY_SOURCE, kStopTag, notices_, MPI_STATUS_IGNORE);
  if (!sends_.empty())
    MPI_Waitall(static_cast<int>(sends_.size()), sends_.data(), MPI_STATUSES_IGNORE);
  sends_.clear();
  MPI_Comm_free(&notices_);
}

void Scope::finish() {
  finished_ = true;
  if (current == this) current = outer_;
  drain();
  agree_on_stop(comm_, stopped_ && !committed_);
}

bool active() {
  return current != nullptr && !current->committed_;
}

bool requested() {
  Scope* s = current;
  if (!s || s->committed_) return false;
  if (s->stopped_) return true;
  if (s->asked_ && s->asked_()) {
    s->stopped_ = true;
    s->tell_others();
    return true;
  }
  // Another rank's message, looked for every few milliseconds at most: MPI_Iprobe drives
  // MPI's progress engine, dearer than this rank's own poll.
  const auto now = std::chrono::steady_clock::now();
  if (now < s->next_probe_) return false;
  s->next_probe_ = now + kProbeInterval;
  int seen = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, kStopTag, s->notices_, &seen, MPI_STATUS_IGNORE);
  s->stopped_ = seen != 0;
  return s->stopped_;
}

void agree(MPI_Comm comm) {
  if (current) agree_on_stop(comm, requested());
}

void last_stop(MPI_Comm comm) {
  Scope* s = current;
  if (!s) return;
  const bool stop = requested();
  s->committed_ = true;  // from here a request waits for the caller
  agree_on_stop(comm, stop);
}

}  // namespace triada::cancel
