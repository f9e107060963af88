#include "mesh/node_memory.hpp"

#include <sys/statvfs.h>

#include "geometry/memory_model.hpp"
#include "mesh/mpi.hpp"
#include "mesh/topology.hpp"

namespace triada {

static_assert(kWindowScratchBytes == Topology::kLineScratchBytes,
              "the memory model must count the windows' packing scratch");

namespace {

mpi::Comm node_of(MPI_Comm comm) {
  int rank = 0;
  CHECK_MPI(MPI_Comm_rank(comm, &rank));
  MPI_Comm node = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
  MPI_Comm_set_errhandler(node, MPI_ERRORS_RETURN);
  return mpi::Comm::adopt(node);
}

// Sum of `mine` over the ranks of the node (in double: it cannot wrap, and a few ulps do
// not matter against the gigabytes in question).
double node_sum(const mpi::Comm& node, std::uint64_t mine) {
  const double m = static_cast<double>(mine);
  double sum = 0;
  CHECK_MPI(MPI_Allreduce(&m, &sum, 1, MPI_DOUBLE, MPI_SUM, node.get()));
  return sum;
}

}  // namespace

void require_node_shared_memory(MPI_Comm comm, std::uint64_t mine, const std::string& what) {
  const mpi::Comm node = node_of(comm);
  const double sum = node_sum(node, mine);
  mpi::collectively(comm, [&] {
    struct statvfs fs {};
    if (sum == 0 || ::statvfs("/dev/shm", &fs) != 0) return;
    const double room = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize);
    if (sum > room)
      throw input_error(what + ": the shared windows of this node need " + format_bytes(sum) +
                        ", /dev/shm has " + format_bytes(room) + " free");
  });
}

bool on_one_node(MPI_Comm comm) {
  int size = 0;
  CHECK_MPI(MPI_Comm_size(comm, &size));
  return node_of(comm).size() == size;
}

void require_node_memory(MPI_Comm comm, std::uint64_t mine, const std::string& what) {
  const mpi::Comm node = node_of(comm);
  const double sum = node_sum(node, mine);
  std::uint64_t most = 0;
  CHECK_MPI(MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, node.get()));
  const int n = node.size();
  mpi::collectively(comm, [&] {
    const AvailableMemory a = available_memory();
    if (sum <= static_cast<double>(a.bytes)) return;
    std::string need = format_bytes(most) + " per rank";
    if (n > 1)
      need += " (" + format_bytes(sum) + " for the " + std::to_string(n) + " ranks on one node)";
    throw input_error(what + ": needs " + need + ", " + format_bytes(a.bytes) + " available (" +
                      a.source + ")");
  });
}

}  // namespace triada
