#pragma once
// The up-front memory check of a run: the ranks that share one node's memory
// (MPI_COMM_TYPE_SHARED) must together fit in what that node has available
// (geometry/memory_model.hpp: available_memory()).
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "geometry/memory_model.hpp"

namespace triada {

// What the ranks of this rank's node need together (the sum of their `mine`), how many they
// are, the most one of them needs, and what the node has available. Collective over comm.
struct NodeMemory {
  double need = 0;
  int ranks = 1;
  std::uint64_t most = 0;
  AvailableMemory available;
  bool fits() const { return need <= static_cast<double>(available.bytes); }
};
NodeMemory node_memory(MPI_Comm comm, std::uint64_t mine);

// Collective over comm. `mine` is what this rank will add to its node's memory. If the
// ranks of some node together need more than available_memory(), every rank throws the
// same input_error: "<what>: needs X per rank[ (Y for the N ranks on one node)], Z
// available (source)".
void require_node_memory(MPI_Comm comm, std::uint64_t mine, const std::string& what);

// Collective over comm, like require_node_memory, for the shared windows: they are files
// in /dev/shm (Open MPI's osc sm default), so a node's total `mine` must fit its free
// space there.
void require_node_shared_memory(MPI_Comm comm, std::uint64_t mine, const std::string& what);

// True if every rank of comm shares one node's memory.
bool on_one_node(MPI_Comm comm);
// The node of every rank of comm, named by its lowest rank there (MemoryModelOptions::
// node_of_rank). Collective.
std::vector<int> node_of_ranks(MPI_Comm comm);

}  // namespace triada
