#pragma once
// Work a job leaves to rank 0 while the other ranks wait.
#include <exception>
#include <utility>

#include "mesh/mpi.hpp"

namespace triada {

// Runs `body` on rank 0 of `comm` while the others wait asleep; an error of rank 0 is
// then thrown by every rank (mpi::collectively). For work not worth splitting.
template <class F>
void on_rank0(MPI_Comm comm, F&& body) {
  mpi::collectively(comm, [&] {
    std::exception_ptr failure;
    if (mpi::rank(comm) == 0) try {
        body();
      } catch (...) {
        failure = std::current_exception();
      }
    mpi::sleepy_barrier(comm);
    if (failure) std::rethrow_exception(failure);
  });
}

}  // namespace triada
