#include "mesh/shared_window.hpp"

#include <utility>

#include "mesh/mpi.hpp"

namespace triada::mpi {

void WindowRef::fence() const {
  CHECK_MPI(MPI_Win_fence(0, win_));
}

SharedWindow::SharedWindow(MPI_Comm comm, std::size_t bytes) {
  std::byte* mine = nullptr;
  CHECK_MPI(
      MPI_Win_allocate_shared(static_cast<MPI_Aint>(bytes), 1, MPI_INFO_NULL, comm, &mine, &win_));
}

SharedWindow::~SharedWindow() {
  release();
}

SharedWindow::SharedWindow(SharedWindow&& o) noexcept : win_(std::exchange(o.win_, MPI_WIN_NULL)) {}

SharedWindow& SharedWindow::operator=(SharedWindow&& o) noexcept {
  if (this != &o) {
    release();
    win_ = std::exchange(o.win_, MPI_WIN_NULL);
  }
  return *this;
}

void SharedWindow::release() noexcept {
  if (win_ != MPI_WIN_NULL) MPI_Win_free(&win_);  // collective over the window
}

std::byte* SharedWindow::segment(int member, std::size_t& bytes) const {
  MPI_Aint size = 0;
  int disp = 0;
  std::byte* base = nullptr;
  CHECK_MPI(MPI_Win_shared_query(win_, member, &size, &disp, &base));
  bytes = static_cast<std::size_t>(size);
  return base;
}

}  // namespace triada::mpi
