#pragma once
// The MPI calls the programs (apps/) need beyond mpi.hpp: rank and size, the balanced
// brick grid, typed reductions and gathers, a byte broadcast, a barrier that sleeps, and
// the abort of the world. Each is one MPI call (or one poll loop), so the programs send
// exactly the messages they sent when they called MPI themselves.
#include <mpi.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "mesh/mpi.hpp"  // barrier

namespace triada::mpi {

int rank_of(MPI_Comm comm);
int size_of(MPI_Comm comm);

// MPI_Dims_create(nodes, 3): the most balanced 3-factor grid of `nodes` (no communication).
std::array<int, 3> balanced_dims(int nodes);

// A barrier that waits asleep (MPI_Ibarrier polled every millisecond) instead of spinning,
// for ranks idle while one rank times something alone.
void sleepy_barrier(MPI_Comm comm);

// Element-wise reductions to every rank (MPI_Allreduce).
void allreduce_max(MPI_Comm comm, const double* in, double* out, int n);
void allreduce_sum(MPI_Comm comm, const double* in, double* out, int n);
double allreduce_max(MPI_Comm comm, double v);
double allreduce_sum(MPI_Comm comm, double v);
std::int64_t allreduce_sum(MPI_Comm comm, std::int64_t v);

// MPI_Gather of `n` values per rank into `all` (size n * ranks, significant on root).
void gather(MPI_Comm comm, const std::int64_t* mine, int n, std::int64_t* all, int root);
// MPI_Gatherv of doubles: `counts`, `displs` and `all` significant on root.
void gatherv(MPI_Comm comm, const std::vector<double>& mine, double* all, const int* counts,
             const int* displs, int root);

// MPI_Bcast of `bytes` raw bytes (plain data only).
void bcast_bytes(MPI_Comm comm, void* data, std::size_t bytes, int root);

// Ends every rank of the world with `code` (MPI_Abort).
void abort_world(int code) noexcept;

}  // namespace triada::mpi
