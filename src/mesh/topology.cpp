#include "mesh/topology.hpp"

#include <algorithm>
#include <cstring>

#include "mesh/kernel_path.hpp"

namespace triada {

Topology::Topology(const Plan& plan, MPI_Comm world, std::size_t element_bytes) : plan_(plan) {
  MPI_Comm dup = MPI_COMM_NULL;
  CHECK_MPI(MPI_Comm_dup(world, &dup));
  world_ = mpi::Comm::adopt(dup);
  world_rank_ = world_.rank();
  // The members of a line read each other's packed panels: one kernel path for all.
  agree_on_kernel_path(world_.get());
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
    // The executors take a line's size and ranks from the plan (BrickStage).
    if (lines_[a - 1].size() != plan.ranks.grid[a - 1] || lines_[a - 1].rank() != coords_[a - 1])
      throw mpi_error("line communicator disagrees with the plan's brick grid");
    line_shared_[a - 1] = lines_[a - 1].split_shared(0).size() == lines_[a - 1].size();
  }
  element_bytes_ = element_bytes;
  if (element_bytes == 0) return;
  for (int a = 1; a <= 3; ++a) {
    const int n = lines_[a - 1].size();
    if (!line_shared_[a - 1] || n < 2) continue;
    std::size_t bytes = 0;
    // V segments are read in place (so mapped now) only where a stage along the axis
    // needs them whatever its data: complex or axis-3 stages, folded lines. Otherwise the
    // binary64 kernels pack through the scratch and the segments stay unmapped (a brick
    // of resident memory less, per member of the line); a rare stage that still reads
    // them in place (an Inf or NaN pivot, another cell mode) maps them as it goes.
    bool touch_v = element_bytes > sizeof(double) || a == 3;
    for (int d = 0; d < 3; ++d)
      if (d != a - 1 && plan.fold[d] > 1) touch_v = true;
    for (const StagePlan& sp : plan.stages)
      if (sp.axis == a)
        bytes =
            std::max(bytes, static_cast<std::size_t>(cells_.intersect(whole(sp.in_shape)).count()) *
                                element_bytes);
    LineWindow& lw = windows_[a - 1];
    std::byte* mine = nullptr;
    // V segment rounded to 64 bytes, then the scratch (segments are contiguous, so every
    // member's scratch is 64-byte aligned).
    const std::size_t total = (bytes + 63) / 64 * 64 + kLineScratchBytes;
    CHECK_MPI(MPI_Win_allocate_shared(static_cast<MPI_Aint>(total), 1, MPI_INFO_NULL,
                                      lines_[a - 1].get(), &mine, &lw.win));
    const std::size_t v_seg = total - kLineScratchBytes;
    std::memset(mine + (touch_v ? 0 : v_seg), 0, touch_v ? total : kLineScratchBytes);
    CHECK_MPI(MPI_Win_fence(0, lw.win));
    for (int r = 0; r < n; ++r) {
      MPI_Aint size = 0;
      int disp = 0;
      std::byte* base = nullptr;
      CHECK_MPI(MPI_Win_shared_query(lw.win, r, &size, &disp, &base));
      // Map the other members' pages now rather than on the first read in a stage.
      volatile std::byte sink{};
      const MPI_Aint first = touch_v ? 0 : size - static_cast<MPI_Aint>(kLineScratchBytes);
      for (MPI_Aint off = first; off < size; off += 4096) sink = base[off];
      (void)sink;
      lw.bases.push_back(base);
      lw.sizes.push_back(static_cast<std::size_t>(size) - kLineScratchBytes);
    }
  }
}

Topology::~Topology() {
  for (auto& lw : windows_)
    if (lw.win != MPI_WIN_NULL) MPI_Win_free(&lw.win);  // collective over the line
}

std::byte* Topology::line_scratch(int axis, int member, std::size_t& bytes) const {
  const LineWindow& lw = windows_[axis - 1];
  if (lw.win == MPI_WIN_NULL) return nullptr;
  bytes = kLineScratchBytes;
  return lw.bases[static_cast<size_t>(member)] + lw.sizes[static_cast<size_t>(member)];
}

std::byte* Topology::line_window(int axis, int member, std::size_t& bytes) const {
  const LineWindow& lw = windows_[axis - 1];
  if (lw.win == MPI_WIN_NULL) return nullptr;
  bytes = lw.sizes[static_cast<size_t>(member)];
  return lw.bases[static_cast<size_t>(member)];
}

}  // namespace triada
