#pragma once
// Ranks that must agree (doc/cpp.md "Ranks that disagree"): a job's description as named
// words, compared over its communicator by digest before any work, so that a config or an
// argument that differs between ranks is named on every rank instead of giving a silently
// wrong result or a hang.
#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace triada::mpi {

// One named part of a description: a config's field ("norm") and its value as words.
struct Field {
  std::string name, value;
};

// The first field (in the description's order) whose value is not the same on every rank,
// with rank 0's value and that of the lowest rank that differs from it.
struct Disagreement {
  std::string field;
  int rank = 0;
  std::string value0, value;
};

// Collective over `comm`: none where every rank's fields are equal, else the first that is
// not. Two small reductions when they agree (the count, then a 64-bit digest per field);
// two broadcasts more to fetch the values when they do not. Ranks whose descriptions have
// different lengths (different jobs) disagree on the field "(the job)".
std::optional<Disagreement> first_disagreement(MPI_Comm comm, const std::vector<Field>& fields);

// Collective over `comm`: returns once every rank of it has entered this call, or throws
// mpi_error after `timeout_s` seconds (0: waits as long as it takes). A rank that passed
// another communicator (MPI_COMM_SELF where the others pass the world) never joins: without
// a limit its peers wait forever. Polls a non-blocking barrier; one abandoned at the limit
// cannot be cancelled, so the process must end by abort_if_abandoned.
void join_within(MPI_Comm comm, double timeout_s);
// MPI_Abort of the world if join_within gave up (MPI_Finalize would wait for the ranks it
// waited for); a host's exit hook calls it before finalizing.
void abort_if_abandoned() noexcept;

// FNV-1a over the bytes of `s`, continuing from `h` (a digest's building block).
std::uint64_t fnv1a(const std::string& s, std::uint64_t h = 14695981039346656037ull);

}  // namespace triada::mpi
