#pragma once
// MPI shared-memory windows with explicit fences (a fence is collective over the
// window's communicator, so it is never hidden in a destructor), and the few line
// collectives the fused executor needs, so that src/engine makes no MPI call itself.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace triada::mpi {

// A window somebody else owns (Topology's line windows): fences only.
class WindowRef {
 public:
  WindowRef() = default;
  explicit WindowRef(MPI_Win win) : win_(win) {}
  bool valid() const { return win_ != MPI_WIN_NULL; }
  // Collective over the window: every member's stores before it are seen after it.
  void fence() const;

 private:
  MPI_Win win_ = MPI_WIN_NULL;
};

// An owning shared window: one segment per member of `comm` (all on one node), freed
// (collectively) on destruction; fences are the caller's, explicitly.
class SharedWindow {
 public:
  SharedWindow() = default;
  // Collective over comm: this member's segment of `bytes`.
  SharedWindow(MPI_Comm comm, std::size_t bytes);
  ~SharedWindow();
  SharedWindow(const SharedWindow&) = delete;
  SharedWindow& operator=(const SharedWindow&) = delete;
  SharedWindow(SharedWindow&& o) noexcept;
  SharedWindow& operator=(SharedWindow&& o) noexcept;

  bool valid() const { return win_ != MPI_WIN_NULL; }
  void fence() const { WindowRef(win_).fence(); }
  WindowRef ref() const { return WindowRef(win_); }
  // Member r's segment and its size in bytes.
  std::byte* segment(int member, std::size_t& bytes) const;

 private:
  void release() noexcept;
  MPI_Win win_ = MPI_WIN_NULL;
};

int comm_rank(MPI_Comm comm);
int comm_size(MPI_Comm comm);

// Non-blocking byte broadcasts, completed together by wait_all().
class Requests {
 public:
  Requests() = default;
  Requests(const Requests&) = delete;
  Requests& operator=(const Requests&) = delete;
  Requests(Requests&&) = default;
  Requests& operator=(Requests&&) = default;
  void ibcast(void* buf, int bytes, int root, MPI_Comm comm);
  void wait_all();
  void clear() { reqs_.clear(); }

 private:
  std::vector<MPI_Request> reqs_;
};

int allreduce_max(int v, MPI_Comm comm);
int allreduce_min(int v, MPI_Comm comm);
// Every member's `n` values, member r's at recv + displs[r] (counts[r] of them).
void allgatherv(const std::int64_t* send, int n, std::int64_t* recv, const std::vector<int>& counts,
                const std::vector<int>& displs, MPI_Comm comm);

}  // namespace triada::mpi
