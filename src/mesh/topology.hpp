#pragma once
// The MPI side of a plan: who is a brick rank, the Cartesian communicator of the brick
// ranks and its H/L/F line communicators (one per axis), and a private duplicate of the
// world communicator for actuator traffic.
#include <array>
#include <cstddef>
#include <vector>

#include "geometry/plan.hpp"
#include "mesh/mpi.hpp"

namespace triada {

class Topology {
 public:
  // element_bytes > 0: also set up, once, a shared-memory window on every line that lives
  // on one node, big enough for the V brick of the stage along that line (elements of that
  // size), touched so that its pages are mapped before any stage runs.
  Topology(const Plan& plan, MPI_Comm world, std::size_t element_bytes = 0);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const Plan& plan() const { return plan_; }
  int world_rank() const { return world_rank_; }
  bool is_brick() const { return brick_rank_ >= 0; }
  int brick_rank() const { return brick_rank_; }  // -1 on a dedicated actuator rank
  const std::array<int, 3>& coords() const { return coords_; }
  const Brick& cells() const { return cells_; }      // empty on actuator ranks
  MPI_Comm world() const { return world_.get(); }    // duplicate of the world
  MPI_Comm bricks() const { return bricks_.get(); }  // Cartesian, brick ranks only
  // Line communicator along `axis` (1..3): the brick ranks whose bricks share the other
  // two coordinates; its rank equals the grid coordinate along `axis`.
  MPI_Comm line(int axis) const { return lines_[axis - 1].get(); }
  // True if every rank of the line communicator along `axis` shares this node's memory
  // (MPI_COMM_TYPE_SHARED), so pivot planes can be read in place.
  bool line_shares_memory(int axis) const { return line_shared_[axis - 1]; }
  // The line's shared window (collective over the line), if set up: a member's segment
  // for its V brick and the segment's size in bytes; nullptr if there is none.
  std::byte* line_window(int axis, int member, std::size_t& bytes) const;
  // A member's scratch in the same window, after its V segment (64-byte aligned): room
  // for kernels to share packed pivots (kLineScratchBytes); nullptr if there is none.
  static constexpr std::size_t kLineScratchBytes = std::size_t{3} << 20;
  std::byte* line_scratch(int axis, int member, std::size_t& bytes) const;
  MPI_Win line_window_handle(int axis) const { return windows_[axis - 1].win; }
  // The element size the windows were sized for (0: no windows).
  std::size_t line_window_element_bytes() const { return element_bytes_; }
  bool hosts_actuator(int axis) const { return plan_.ranks.actuator_rank[axis - 1] == world_rank_; }

 private:
  Plan plan_;
  int world_rank_ = 0;
  int brick_rank_ = -1;
  std::array<int, 3> coords_{-1, -1, -1};
  Brick cells_;
  mpi::Comm world_;
  mpi::Comm bricks_;
  std::array<mpi::Comm, 3> lines_;
  std::array<bool, 3> line_shared_{false, false, false};
  struct LineWindow {
    MPI_Win win = MPI_WIN_NULL;
    std::vector<std::byte*> bases;
    std::vector<std::size_t> sizes;  // V segment bytes of each member (scratch follows)
  };
  std::array<LineWindow, 3> windows_;
  std::size_t element_bytes_ = 0;
};

}  // namespace triada
