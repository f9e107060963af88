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

int comm_rank(MPI_Comm comm) {
  int r = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &r));
  return r;
}

int comm_size(MPI_Comm comm) {
  int n = 1;
  CHECK_MPI(MPI_Comm_size(comm, &n));
  return n;
}

void Requests::ibcast(void* buf, int bytes, int root, MPI_Comm comm) {
  reqs_.emplace_back();
  CHECK_MPI(MPI_Ibcast(buf, bytes, MPI_BYTE, root, comm, &reqs_.back()));
}

void Requests::wait_all() {
  if (!reqs_.empty())
    CHECK_MPI(MPI_Waitall(static_cast<int>(reqs_.size()), reqs_.data(), MPI_STATUSES_IGNORE));
}

int allreduce_max(int v, MPI_Comm comm) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comm));
  return v;
}

int allreduce_min(int v, MPI_Comm comm) {
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, comm));
  return v;
}

void allgatherv(const std::int64_t* send, int n, std::int64_t* recv, const std::vector<int>& counts,
                const std::vector<int>& displs, MPI_Comm comm) {
  CHECK_MPI(
      MPI_Allgatherv(send, n, MPI_INT64_T, recv, counts.data(), displs.data(), MPI_INT64_T, comm));
}

}  // namespace triada::mpi
