#include "mesh/app_support.hpp"

#include <unistd.h>

#include "mesh/mpi.hpp"

namespace triada::mpi {

int rank_of(MPI_Comm comm) {
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  return rank;
}

int size_of(MPI_Comm comm) {
  int size = 1;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  return size;
}

std::array<int, 3> balanced_dims(int nodes) {
  std::array<int, 3> dims{0, 0, 0};
  CHECK_MPI(MPI_Dims_create(nodes, 3, dims.data()));
  return dims;
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

void allreduce_max(MPI_Comm comm, const double* in, double* out, int n) {
  CHECK_MPI(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MAX, comm));
}

void allreduce_sum(MPI_Comm comm, const double* in, double* out, int n) {
  CHECK_MPI(MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm));
}

double allreduce_max(MPI_Comm comm, double v) {
  double out = 0;
  allreduce_max(comm, &v, &out, 1);
  return out;
}

double allreduce_sum(MPI_Comm comm, double v) {
  double out = 0;
  allreduce_sum(comm, &v, &out, 1);
  return out;
}

std::int64_t allreduce_sum(MPI_Comm comm, std::int64_t v) {
  std::int64_t out = 0;
  CHECK_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_SUM, comm));
  return out;
}

void gather(MPI_Comm comm, const std::int64_t* mine, int n, std::int64_t* all, int root) {
  CHECK_MPI(MPI_Gather(mine, n, MPI_INT64_T, all, n, MPI_INT64_T, root, comm));
}

void gatherv(MPI_Comm comm, const std::vector<double>& mine, double* all, const int* counts,
             const int* displs, int root) {
  CHECK_MPI(MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all, counts, displs,
                        MPI_DOUBLE, root, comm));
}

void bcast_bytes(MPI_Comm comm, void* data, std::size_t bytes, int root) {
  CHECK_MPI(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, comm));
}

void abort_world(int code) noexcept {
  MPI_Abort(MPI_COMM_WORLD, code);
}

}  // namespace triada::mpi
