#pragma once
// MPI shared-memory windows with explicit fences: a fence is collective over the window's
// communicator, so it is never hidden in a destructor.
#include <mpi.h>

#include <cstddef>

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

}  // namespace triada::mpi
