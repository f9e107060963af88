#include "mesh/kernel_path.hpp"

#include <array>
#include <span>
#include <string>

#include "core/error.hpp"
#include "kernels/isa.hpp"
#include "mesh/mpi.hpp"

namespace triada {

void agree_on_kernel_path(MPI_Comm comm) {
  using kernels::Isa;
  int mine = 0, chosen = 0;
  mpi::collectively(comm, [&] {
    mine = static_cast<int>(kernels::isa());
    chosen = kernels::isa_source() == kernels::IsaSource::variable ||
                     kernels::isa_source() == kernels::IsaSource::program
                 ? 1
                 : 0;
  });
  // One reduction: the lowest and highest path, and whether any rank chose its own.
  std::array<int, 3> v{-mine, mine, chosen};
  mpi::allreduce_in_place(comm, std::span<int>(v), mpi::Op::max);
  const int lo = -v[0], hi = v[1];
  if (lo == hi) return;
  const std::string range = std::string(kernels::to_string(static_cast<Isa>(lo))) + " to " +
                            kernels::to_string(static_cast<Isa>(hi));
  if (v[2] != 0)
    throw collective<config_error>(
        "TRIADA_ISA: the ranks chose different kernel paths (" + range +
        "); set TRIADA_ISA to one path every rank's CPU runs, the same on every rank");
  // Only the CPUs differ: the best path they all run (every rank's best is at least lo).
  mpi::collectively(comm,
                    [&] { kernels::set_isa(static_cast<Isa>(lo), kernels::IsaSource::ranks); });
}

}  // namespace triada
