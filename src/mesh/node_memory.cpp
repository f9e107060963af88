#include "mesh/node_memory.hpp"

#include <sys/statvfs.h>

#include <span>

#include "geometry/memory_model.hpp"
#include "mesh/mpi.hpp"
#include "mesh/topology.hpp"

namespace triada {

static_assert(kWindowScratchBytes == Topology::kLineScratchBytes,
              "the memory model must count the windows' packing scratch");

namespace {

mpi::Comm node_of(MPI_Comm comm) {
  return mpi::Comm::borrow(comm).split_shared(mpi::rank(comm));
}

// Sum of `mine` over the ranks of the node (in double: it cannot wrap, and a few ulps do
// not matter against the gigabytes in question).
double node_sum(const mpi::Comm& node, std::uint64_t mine) {
  return mpi::sum_of(node.get(), static_cast<double>(mine));
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
  return node_of(comm).size() == mpi::size(comm);
}

std::vector<int> node_of_ranks(MPI_Comm comm) {
  const int leader = mpi::min_of(node_of(comm).get(), mpi::rank(comm));
  const int n = mpi::size(comm);
  std::vector<int> all(static_cast<std::size_t>(n));
  mpi::allgatherv(comm, std::span<const int>(&leader, 1), std::span<int>(all),
                  std::vector<int>(static_cast<std::size_t>(n), 1));
  return all;
}

NodeMemory node_memory(MPI_Comm comm, std::uint64_t mine) {
  const mpi::Comm node = node_of(comm);
  NodeMemory m;
  m.need = node_sum(node, mine);
  m.most = mpi::max_of(node.get(), mine);
  m.ranks = node.size();
  mpi::collectively(comm, [&] { m.available = available_memory(); });
  return m;
}

void require_node_memory(MPI_Comm comm, std::uint64_t mine, const std::string& what) {
  const NodeMemory m = node_memory(comm, mine);
  mpi::collectively(comm, [&] {
    if (m.fits()) return;
    std::string need = format_bytes(m.most) + " per rank";
    if (m.ranks > 1)
      need += " (" + format_bytes(m.need) + " for the " + std::to_string(m.ranks) +
              " ranks on one node)";
    throw input_error(what + ": needs " + need + ", " + format_bytes(m.available.bytes) +
                      " available (" + m.available.source + ")");
  });
}

}  // namespace triada
