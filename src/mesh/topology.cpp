#include "mesh/topology.hpp"

namespace triada {

Topology::Topology(const Plan& plan, MPI_Comm world) : plan_(plan) {
  MPI_Comm dup = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(world, &dup));
  world_ = mpi::Comm::adopt(dup);
  world_rank_ = world_.rank();
  if (world_.size() != plan.ranks.world_size)
    throw mpi_error("plan made for " + std::to_string(plan.ranks.world_size) + " ranks, run has " +
                    std::to_string(world_.size()));
  // Brick ranks are world ranks 0 .. n_bricks-1 (key = world rank keeps the order).
  const bool brick = world_rank_ < plan.ranks.n_bricks;
  mpi::Comm flat = world_.split(brick ? 0 : MPI_UNDEFINED, world_rank_);
  if (!brick) return;
  brick_rank_ = world_rank_;
  MPI_Comm cart = MPI_COMM_NULL;
  const std::array<int, 3> periods{0, 0, 0};
  std::array<int, 3> dims = plan.ranks.grid;
  CHECK_MPI(MPI_Cart_create(flat.get(), 3, dims.data(), periods.data(), 0, &cart));
  bricks_ = mpi::Comm::adopt(cart);
  CHECK_MPI(MPI_Cart_coords(cart, bricks_.rank(), 3, coords_.data()));
  if (coords_ != plan.brick_coords(brick_rank_))
    throw mpi_error("Cartesian coordinates disagree with the plan's row-major layout");
  cells_ = plan.brick_cells(brick_rank_);
  for (int a = 1; a <= 3; ++a) {
    std::array<int, 3> remain{0, 0, 0};
    remain[a - 1] = 1;
    MPI_Comm sub = MPI_COMM_NULL;
    CHECK_MPI(MPI_Cart_sub(cart, remain.data(), &sub));
    lines_[a - 1] = mpi::Comm::adopt(sub);
    MPI_Comm node = MPI_COMM_NULL;
    CHECK_MPI(MPI_Comm_split_type(sub, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    mpi::Comm node_comm = mpi::Comm::adopt(node);
    line_shared_[a - 1] = node_comm.size() == lines_[a - 1].size();
  }
}

}  // namespace triada
