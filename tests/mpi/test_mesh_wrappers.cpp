// The owning MPI wrappers of mesh/mpi.hpp at the rank count this executable runs with:
// typed collectives, move-only requests and point to point. Every rank takes the same
// path through each test case (CHECK only), so none waits alone in a collective.
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mesh/mpi.hpp"
#include "support/catch.hpp"

using namespace triada;

TEST_CASE("typed reductions: arrays, in place and single values", "[mpi][wrappers]") {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int rank = mpi::rank(w), size = mpi::size(w);
  const std::vector<std::uint64_t> mine{static_cast<std::uint64_t>(rank), 1, 7};
  std::vector<std::uint64_t> sum;
  mpi::allreduce(w, mine, sum, mpi::Op::sum);
  CHECK(sum == std::vector<std::uint64_t>{static_cast<std::uint64_t>(size * (size - 1) / 2),
                                          static_cast<std::uint64_t>(size), 7u * size});
  std::vector<double> d{static_cast<double>(rank), -static_cast<double>(rank)};
  mpi::allreduce_in_place(w, std::span<double>(d), mpi::Op::max);
  CHECK(d == std::vector<double>{static_cast<double>(size - 1), 0.0});
  CHECK(mpi::max_of(w, std::int64_t{rank}) == size - 1);
  CHECK(mpi::min_of(w, rank + 3) == 3);
  CHECK(mpi::sum_of(w, 0.5) == 0.5 * size);
}

TEST_CASE("broadcasts of vectors, objects and bytes", "[mpi][wrappers]") {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int rank = mpi::rank(w), size = mpi::size(w);
  const int root = size - 1;
  std::vector<double> v;
  if (rank == root) v = {1.5, -2.0, 3.25};
  mpi::bcast(w, v, root);
  CHECK(v == std::vector<double>{1.5, -2.0, 3.25});
  std::vector<int> none{rank};
  if (rank == 0) none.clear();
  mpi::bcast(w, none, 0);
  CHECK(none.empty());
  struct Facts {
    std::int64_t n;
    double x;
  } facts{rank == 0 ? 42 : 0, rank == 0 ? 0.25 : 0.0};
  mpi::bcast_bytes(w, std::span<Facts>(&facts, 1), 0);
  CHECK(facts.n == 42);
  CHECK(facts.x == 0.25);
  std::vector<std::int64_t> buf(4, rank == 0 ? 9 : 0);
  mpi::Request r = mpi::ibcast_bytes(w, std::span<std::int64_t>(buf), 0);
  mpi::Request moved = std::move(r);
  CHECK_FALSE(r.pending());
  moved.wait();
  CHECK_FALSE(moved.pending());
  CHECK(buf == std::vector<std::int64_t>(4, 9));
  // In pieces (of 3 bytes here; 1 GiB by default, below MPI's int count), every byte sent.
  std::vector<std::uint8_t> bytes(100);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = rank == 0 ? static_cast<std::uint8_t>(i * 7 + 1) : 0;
  mpi::bcast_bytes(w, std::span<std::uint8_t>(bytes), 0, 3);
  for (std::size_t i = 0; i < bytes.size(); ++i)
    CHECK(bytes[i] == static_cast<std::uint8_t>(i * 7 + 1));
}

TEST_CASE("gathers put each rank's part in rank order", "[mpi][wrappers]") {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int rank = mpi::rank(w), size = mpi::size(w);
  const std::vector<long> mine{rank, 10L * rank};
  const std::vector<long> all = mpi::gather<long>(w, mine, 0);
  if (rank == 0) {
    REQUIRE(all.size() == static_cast<size_t>(2 * size));
    for (int r = 0; r < size; ++r) {
      CHECK(all[2 * r] == r);
      CHECK(all[2 * r + 1] == 10L * r);
    }
  } else {
    CHECK(all.empty());
  }
  // Rank r sends r + 1 values r.
  std::vector<int> counts(static_cast<size_t>(size));
  std::iota(counts.begin(), counts.end(), 1);
  const std::vector<double> part(static_cast<size_t>(rank + 1), static_cast<double>(rank));
  std::vector<double> expect;
  for (int r = 0; r < size; ++r) expect.insert(expect.end(), static_cast<size_t>(r + 1), r);
  const std::vector<double> gv = mpi::gatherv<double>(w, part, counts, 0);
  CHECK(gv == (rank == 0 ? expect : std::vector<double>{}));
  std::vector<double> everywhere(expect.size(), -1.0);
  mpi::allgatherv<double>(w, part, everywhere, counts);
  CHECK(everywhere == expect);
  CHECK(mpi::displacements({2, 0, 3}) == std::vector<int>{0, 2, 2});
}

TEST_CASE("gather_strings: every rank's text, of its own length, in rank order on root",
          "[mpi][wrappers]") {
  const int rank = mpi::rank(MPI_COMM_WORLD), size = mpi::size(MPI_COMM_WORLD);
  const int root = size - 1;
  // rank r sends r copies of the letter 'a' + r (rank 0 an empty string)
  const std::string mine(static_cast<size_t>(rank), static_cast<char>('a' + rank % 26));
  const std::vector<std::string> all = mpi::gather_strings(MPI_COMM_WORLD, mine, root);
  if (rank != root) {
    CHECK(all.empty());
    return;
  }
  REQUIRE(all.size() == static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    CHECK(all[static_cast<size_t>(r)] ==
          std::string(static_cast<size_t>(r), static_cast<char>('a' + r % 26)));
}

TEST_CASE("point to point around a ring with a batch of requests", "[mpi][wrappers]") {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int rank = mpi::rank(w), size = mpi::size(w);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  const int token = 100 + rank;
  const std::vector<std::byte> payload(static_cast<size_t>(rank + 1), std::byte{0x5a});
  mpi::Requests reqs;
  reqs.add(mpi::isend(w, token, next, 7));
  reqs.add(mpi::isend_bytes(w, payload.data(), payload.size(), next, 8));
  CHECK(reqs.size() == 2);
  CHECK(mpi::recv<int>(w, prev, 7) == 100 + prev);
  std::vector<std::byte> got;
  mpi::recv_bytes(w, prev, 8, got);
  CHECK(got == std::vector<std::byte>(static_cast<size_t>(prev + 1), std::byte{0x5a}));
  reqs.wait_all();
  CHECK(reqs.empty());
  mpi::Request b = mpi::ibarrier(w);
  while (!b.test()) {
  }
  CHECK_FALSE(b.pending());
  mpi::barrier(w);
}

TEST_CASE("dims_create and counts past MPI's int", "[mpi][wrappers]") {
  const std::array<int, 3> d = mpi::dims_create(12);
  CHECK(d[0] * d[1] * d[2] == 12);
  CHECK(d[0] >= d[1]);
  CHECK(d[1] >= d[2]);
  CHECK(mpi::count_of(5, "x") == 5);
  CHECK_THROWS_AS(mpi::count_of(std::size_t{1} << 31, "x"), mpi_error);
  const double t0 = mpi::wtime();
  CHECK(mpi::wtime() >= t0);
}

namespace {
// Records, when destroyed, what mpi::unwinding_agreed_error says about `comm` then.
struct UnwindProbe {
  MPI_Comm comm;
  bool& seen;
  UnwindProbe(MPI_Comm c, bool& s) : comm(c), seen(s) {}
  UnwindProbe(const UnwindProbe&) = delete;
  UnwindProbe& operator=(const UnwindProbe&) = delete;
  ~UnwindProbe() { seen = mpi::unwinding_agreed_error(comm); }
};

// Rank 0 fails in a collective phase over `agreed`; every rank of it throws the agreed error
// past a probe of `probed`.
bool seen_in_agreed_error(MPI_Comm agreed, MPI_Comm probed) {
  bool seen = false;
  try {
    UnwindProbe probe(probed, seen);
    mpi::collectively(agreed, [&] {
      if (mpi::rank(agreed) == 0) throw input_error("rank 0 fails");
    });
  } catch (const input_error&) {
  }
  return seen;
}
}  // namespace

TEST_CASE("unwinding_agreed_error: an agreed error over the ranks, never a rank's own",
          "[mpi][wrappers]") {
  const MPI_Comm w = MPI_COMM_WORLD;
  const int size = mpi::size(w);
  CHECK(seen_in_agreed_error(w, w));
  CHECK(seen_in_agreed_error(w, MPI_COMM_SELF));  // a part of the agreement's ranks
  // Agreed by each rank alone: the world's other ranks are not unwinding it.
  CHECK(seen_in_agreed_error(MPI_COMM_SELF, w) == (size == 1));
  CHECK_FALSE(mpi::unwinding_agreed_error(w));  // nothing unwinds
  // A rank's own error once a later phase succeeded (which forgets the agreed one).
  mpi::collectively(w, [] {});
  bool seen = true;
  try {
    UnwindProbe probe(w, seen);
    throw std::runtime_error("this rank alone");
  } catch (const std::runtime_error&) {
  }
  CHECK_FALSE(seen);
}

TEST_CASE("a failed MPI call names our source line, not the build machine's folders",
          "[mpi][wrappers]") {
  // It said "at /home/builder/triada/src/mesh/mpi.cpp:123": a library user saw the path of
  // the machine that built it in every MPI error.
  int count = 0;
  try {
    CHECK_MPI(MPI_Comm_size(MPI_COMM_NULL, &count));  // an error code: MPI_ERRORS_RETURN
    FAIL("no error");
  } catch (const mpi_error& e) {
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Matchers::Contains(" at tests/mpi/test_mesh_wrappers.cpp:"));
    CHECK_THAT(what, !Catch::Matchers::Contains(" at /"));
  }
  CHECK(source_line("/a/b/src/mesh/mpi.cpp", 7) == "src/mesh/mpi.cpp:7");
  CHECK(source_line("mpi.cpp", 7) == "mpi.cpp:7");
}
