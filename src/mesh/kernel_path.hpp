#pragma once
// One kernel path (kernels/isa.hpp) for every rank of a run: ranks of one node read each
// other's packed pivot panels (engine/fused/), whose layout is the path's, and a run's
// report names one path.
#include <mpi.h>

namespace triada {

// Collective over `comm`. Each rank chooses its path (TRIADA_ISA, or the best its CPU
// runs); a bad TRIADA_ISA is a config_error on every rank. Where the choices differ: if
// none was explicit (only the CPUs differ), every rank takes the best they all run; else
// every rank throws the same config_error, asking for one TRIADA_ISA everywhere.
void agree_on_kernel_path(MPI_Comm comm);

}  // namespace triada
