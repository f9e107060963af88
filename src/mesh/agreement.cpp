#include "mesh/agreement.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <span>
#include <thread>

#include "mesh/mpi.hpp"

namespace triada::mpi {

std::uint64_t fnv1a(const std::string& s, std::uint64_t h) {
  for (const unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

namespace {

// Every rank learns the minimum and the maximum of each value with one MAX reduction:
// max(~v) = ~min(v). Returns the first index whose minimum and maximum differ, or -1.
long first_differing(MPI_Comm comm, const std::vector<std::uint64_t>& values) {
  std::vector<std::uint64_t> both(2 * values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    both[2 * i] = values[i];
    both[2 * i + 1] = ~values[i];
  }
  allreduce_in_place(comm, std::span<std::uint64_t>(both), Op::max);
  for (std::size_t i = 0; i < values.size(); ++i)
    if (both[2 * i] != ~both[2 * i + 1]) return static_cast<long>(i);
  return -1;
}

// Rank 0's `mine`, the lowest rank whose `mine` differs from it, and that rank's.
Disagreement values_of(MPI_Comm comm, const std::string& field, const std::string& mine) {
  Disagreement d;
  d.field = field;
  d.value0 = bcast_string(comm, mine, 0);
  const int size = mpi::size(comm);
  d.rank = min_of(comm, mine != d.value0 ? mpi::rank(comm) : size);
  d.value = bcast_string(comm, mine, d.rank < size ? d.rank : 0);
  return d;
}

}  // namespace

std::optional<Disagreement> first_disagreement(MPI_Comm comm, const std::vector<Field>& fields) {
  const std::uint64_t count = fields.size();
  if (first_differing(comm, {count}) >= 0)
    return values_of(comm, "(the job)", std::to_string(count) + " fields");
  std::vector<std::uint64_t> digests;
  digests.reserve(fields.size());
  for (const Field& f : fields) digests.push_back(fnv1a(f.value, fnv1a(f.name + '\0')));
  const long i = first_differing(comm, digests);
  if (i < 0) return std::nullopt;
  return values_of(comm, fields[static_cast<std::size_t>(i)].name,
                   fields[static_cast<std::size_t>(i)].value);
}

namespace {
bool abandoned = false;  // a barrier of join_within left pending
}  // namespace

void join_within(MPI_Comm comm, double timeout_s) {
  MPI_Request req = MPI_REQUEST_NULL;
  CHECK_MPI(MPI_Ibarrier(comm, &req));
  const auto start = std::chrono::steady_clock::now();
  auto nap = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
    if (done) return;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (timeout_s > 0 && waited >= timeout_s) break;
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(20000));  // late ranks: 20 ms steps
  }
  abandoned = true;
  throw mpi_error("rank " + std::to_string(rank(comm)) + " of " + std::to_string(size(comm)) +
                  ": the other ranks of the call's communicator did not join the call within " +
                  std::to_string(static_cast<long>(timeout_s)) +
                  " s; does every rank pass the same comm (MPI_COMM_SELF on one rank and the "
                  "world on another never meet)? The process ends by MPI_Abort at exit");
}

void abort_if_abandoned() noexcept {
  if (abandoned) MPI_Abort(MPI_COMM_WORLD, 1);
}

}  // namespace triada::mpi
