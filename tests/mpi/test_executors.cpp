// The fused executor against the reference executor (doc/design.md §10.4: every optimised
// executor is tested against the reference, never against itself): bitwise equal outputs
// and exactly equal per-step counters over a randomized matrix of cases, and on every
// kernel path this CPU runs (kernels/isa.hpp).
#include <mpi.h>

#include <limits>
#include <random>

#include "actuator/coefficients.hpp"
#include "kernels/isa.hpp"
#include "mesh/mpi.hpp"
#include "support/catch.hpp"
#include "support/engine_run.hpp"
#include "support/oracle.hpp"

using namespace triada;
using namespace triada::test;

namespace {

struct Case {
  ext3 shape;
  std::array<TransformKind, 3> kinds;
  ext3 k;  // gemt output extents (ignored for built-in transforms)
  Norm norm;
  std::array<int, 3> order;
  Mode mode;
  double zeros;
  bool complex_in;
  std::uint64_t shuffle;
};

CoeffMatrix sparse_matrix(index_t n, index_t k, std::mt19937_64& gen, double zeros) {
  std::uniform_real_distribution<double> u(-1, 1), z(0, 1);
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.data.resize(static_cast<size_t>(n * k));
  for (auto& v : c.data) v = z(gen) < zeros ? cplx{} : cplx{u(gen), 0.0};
  return c;
}

// The fused run's output and per-step counters against the reference run's.
template <class T>
void check_same(const GlobalRun<T>& ref, const GlobalRun<T>& fused) {
  CHECK(same_bits(ref.y, fused.y));
  REQUIRE(ref.rc.steps.size() == fused.rc.steps.size());
  for (size_t i = 0; i < ref.rc.steps.size(); ++i) {
    CAPTURE(i);
    CHECK(ref.rc.steps[i].stage == fused.rc.steps[i].stage);
    CHECK(ref.rc.steps[i].pivot == fused.rc.steps[i].pivot);
    CHECK(ref.rc.steps[i].busiest == fused.rc.steps[i].busiest);
    for (int c = 0; c < kCounters; ++c) {
      CAPTURE(kCounterTable[c].name);
      CHECK(ref.rc.steps[i].n[c] == fused.rc.steps[i].n[c]);
    }
  }
}

template <class T>
void compare(const std::vector<T>& x, const ext3& shape, RunSpec spec) {
  spec.executor = Executor::reference;
  const GlobalRun<T> ref = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
  spec.executor = Executor::fused;
  check_same(ref, run_global<T>(MPI_COMM_WORLD, x, shape, spec));
}

// The kernel paths every rank runs (each rank's list is a tail of avx512, avx2, portable).
std::vector<kernels::Isa> paths_of_all_ranks() {
  const std::vector<kernels::Isa> mine = kernels::available_isas();
  const int n = mpi::min_of(MPI_COMM_WORLD, static_cast<int>(mine.size()));
  return {mine.end() - n, mine.end()};
}

// The reference run once, then the fused executor on every kernel path: each against the
// reference, and each path's output against the first path's.
template <class T>
void compare_paths(const std::vector<T>& x, const ext3& shape, RunSpec spec) {
  spec.executor = Executor::reference;
  const GlobalRun<T> ref = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
  spec.executor = Executor::fused;
  std::vector<T> first;
  for (const kernels::Isa isa : paths_of_all_ranks()) {
    CAPTURE(kernels::to_string(isa));
    kernels::ScopedIsa forced(isa);
    const GlobalRun<T> fused = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
    check_same(ref, fused);
    if (first.empty()) first = fused.y;
    CHECK(same_bits(first, fused.y));
  }
}

}  // namespace

TEST_CASE("fused and reference executors agree bit for bit and count for count", "[executors]") {
  std::mt19937_64 gen(2026);
  const TransformKind all[] = {TransformKind::dft, TransformKind::dct, TransformKind::dht,
                               TransformKind::gemt};
  const std::array<int, 3> orders[] = {{3, 1, 2}, {1, 2, 3}, {2, 3, 1}, {2, 1, 3}};
  for (int n = 0; n < 24; ++n) {
    Case c;
    std::uniform_int_distribution<int> ext(1, 19), pick(0, 3), coin(0, 1);
    c.shape = {ext(gen), ext(gen), ext(gen)};
    c.k = {ext(gen), ext(gen), ext(gen)};
    for (auto& kk : c.kinds) kk = all[pick(gen)];
    if (n % 6 == 0) {  // power-of-two shapes exercise full register blocks and wht
      c.shape = {16, 8, 32};
      c.kinds = {TransformKind::wht, TransformKind::dct, TransformKind::wht};
    }
    c.norm = coin(gen) ? Norm::ortho : Norm::backward;
    c.order = orders[pick(gen)];
    c.mode = n % 4 == 3 ? Mode::dense : Mode::esop;
    c.zeros = std::uniform_real_distribution<double>(0.0, 0.97)(gen);
    c.complex_in = n % 5 == 4;
    c.shuffle = n % 3 == 2 ? 99 + n : 0;
    CAPTURE(n, to_string(c.shape), to_string(c.order), c.zeros, c.complex_in, c.shuffle,
            c.mode == Mode::esop);
    RunSpec spec;
    spec.mode = c.mode;
    spec.order = c.order;
    spec.shuffle = c.shuffle;
    spec.batch_bytes = n % 2 ? 64 : 0;  // many small batches, or automatic
    // Pivot planes by broadcast (in batches) or read in place through shared memory.
    spec.transport = n % 2 ? PivotTransport::broadcast : PivotTransport::automatic;
    if (n % 3 == 1) {  // a folded mesh: fewer physical cells than the problem needs
      ext3 need;
      for (int a = 0; a < 3; ++a)
        need[a] = std::max(c.shape[a], c.kinds[a] == TransformKind::gemt ? c.k[a] : c.shape[a]);
      spec.mesh = ext3{std::max<index_t>(1, need[0] / 3), std::max<index_t>(2, need[1] / 2),
                       std::max<index_t>(1, (need[2] + 1) / 2)};
      for (int a = 0; a < 3; ++a) (*spec.mesh)[a] = std::min((*spec.mesh)[a], need[a]);
    }
    bool cx = c.complex_in;
    for (int a = 0; a < 3; ++a) {
      if (c.kinds[a] == TransformKind::gemt)
        spec.c[a] = sparse_matrix(c.shape[a], c.k[a], gen, c.zeros / 2);
      else
        spec.c[a] = make_coefficients(c.kinds[a], c.shape[a], c.norm, coin(gen) == 1, "test");
      cx |= spec.c[a].is_complex;
    }
    auto x = random_tensor(c.shape, 1000 + n, c.zeros, c.complex_in, false);
    // Structured zeros too: every third (i1, i2) line.
    for (index_t l = 0; l < c.shape[0] * c.shape[1]; l += 3)
      for (index_t i = 0; i < c.shape[2]; ++i) x[l * c.shape[2] + i] = 0;
    if (cx)
      compare<cplx>(x, c.shape, spec);
    else
      compare<double>(convert<double>(x), c.shape, spec);
  }
}

TEST_CASE("executors agree on Inf and NaN inputs (ESOP skips exactly what the cell rule skips)",
          "[executors]") {
  const ext3 shape{9, 8, 10};
  auto x = convert<double>(random_tensor(shape, 5, 0.5, false, false));
  x[3] = std::numeric_limits<double>::infinity();
  x[100] = std::numeric_limits<double>::quiet_NaN();
  x[200] = -std::numeric_limits<double>::infinity();
  std::mt19937_64 gen(7);
  for (Mode mode : {Mode::esop, Mode::dense}) {
    RunSpec spec;
    spec.mode = mode;
    spec.c = {sparse_matrix(9, 9, gen, 0.5), sparse_matrix(8, 5, gen, 0.5),
              sparse_matrix(10, 12, gen, 0.5)};
    compare<double>(x, shape, spec);
  }
  // Axis 1 longest, so two or three brick ranks split it: the stage along axis 1 packs its
  // planes in shared memory, meets the Inf/NaN stage 3 spread, and redoes itself exactly.
  const ext3 tall{24, 7, 9};
  auto y = convert<double>(random_tensor(tall, 6, 0.4, false, false));
  y[5] = std::numeric_limits<double>::quiet_NaN();
  y[900] = std::numeric_limits<double>::infinity();
  for (const auto& order : {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{1, 2, 3}}) {
    CAPTURE(to_string(order));
    RunSpec spec;
    spec.order = order;
    spec.c = {sparse_matrix(24, 24, gen, 0.3), sparse_matrix(7, 7, gen, 0.3),
              sparse_matrix(9, 9, gen, 0.3)};
    compare<double>(y, tall, spec);
  }
}

TEST_CASE("executors agree on a larger dense DCT with full register blocks", "[executors]") {
  const ext3 shape{24, 20, 32};
  RunSpec spec;
  for (int a = 0; a < 3; ++a)
    spec.c[a] = make_coefficients(TransformKind::dct, shape[a], Norm::ortho, false, "test");
  compare<double>(convert<double>(random_tensor(shape, 8, 0.0, false, false)), shape, spec);
  spec.mode = Mode::dense;
  spec.batch_bytes = 4096;
  compare<double>(convert<double>(random_tensor(shape, 9, 0.9, false, false)), shape, spec);
}

TEST_CASE("executors agree in every cell mode and cycles count the mode's sub-steps",
          "[executors][precision]") {
  const ext3 shape{10, 9, 12};
  std::mt19937_64 gen(11);
  for (int i = 0; i < kCellModes; ++i) {
    const CellMode m = static_cast<CellMode>(i);
    CAPTURE(to_string(m));
    RunSpec spec;
    spec.cell_mode = m;
    spec.c = {sparse_matrix(10, 10, gen, 0.3), sparse_matrix(9, 7, gen, 0.3),
              sparse_matrix(12, 12, gen, 0.3)};
    if (m == CellMode::m3xu_fp32c) {
      spec.c[1] = make_coefficients(TransformKind::dft, 9, Norm::ortho, false, "test");
      compare<cplx>(random_tensor(shape, 70 + i, 0.4, true, false), shape, spec);
    } else {
      compare<double>(convert<double>(random_tensor(shape, 70 + i, 0.4, false, false)), shape,
                      spec);
    }
    spec.executor = Executor::fused;
    spec.c[1] = sparse_matrix(9, 7, gen, 0.3);
    const auto r = run_global<double>(
        MPI_COMM_WORLD, convert<double>(random_tensor(shape, 5, 0.0, false, false)), shape, spec);
    CHECK(r.rc.total_cycles() == r.rc.total_steps() * static_cast<std::uint64_t>(substeps(m)));
  }
}

TEST_CASE("zero lines and planes reaching a later stage leave its W at +0 (reused buffers)",
          "[executors]") {
  // Scaled cyclic permutations on the first two stages move the input's zeros without
  // filling them, so the last stage sees whole zero lines and panels at places where its
  // reused W buffer still holds non-zeros of an earlier tensor.
  const ext3 shape{9, 20, 17};
  std::mt19937_64 gen(99);
  auto identity = [](index_t n) {  // a permutation: row i -> column (i + 1) mod n, times 2
    CoeffMatrix c;
    c.rows = c.cols = n;
    c.data.assign(static_cast<size_t>(n * n), cplx{});
    for (index_t i = 0; i < n; ++i) c(i, (i + 1) % n) = cplx{2.0, 0.0};
    return c;
  };
  auto x = random_tensor(shape, 123, 0.0, false, false);
  for (index_t i = 0; i < shape[0]; ++i)
    for (index_t j = 0; j < shape[1]; ++j)
      for (index_t l = 0; l < shape[2]; ++l)
        if ((i * shape[1] + j) % 3 == 0 || j == 4 || j == 5 || i == 2 || l == 7)
          x[(i * shape[1] + j) * shape[2] + l] =
              0;  // zero lines, i2 planes, an i1 plane, an i3 plane
  for (const auto& order :
       {std::array<int, 3>{1, 2, 3}, std::array<int, 3>{2, 1, 3}, std::array<int, 3>{3, 2, 1},
        std::array<int, 3>{2, 3, 1}, std::array<int, 3>{1, 3, 2}, std::array<int, 3>{3, 1, 2}}) {
    CAPTURE(to_string(order));
    RunSpec spec;
    spec.order = order;
    for (int a = 0; a < 3; ++a) spec.c[a] = identity(shape[a]);
    spec.c[order[2] - 1] = sparse_matrix(shape[order[2] - 1], shape[order[2] - 1], gen, 0.2);
    compare<double>(convert<double>(x), shape, spec);
  }
}

TEST_CASE("sparse lines along axis 3 accumulate in streaming order, not plane order",
          "[executors]") {
  // Long lines along axis 3 with ~88% zeros: many lines hold 2..11 non-zeros and take the
  // one-line-at-a-time path; a shuffled stream then visits their planes out of order, and
  // the fma chain must follow the stream, as the cell rule does. Dense and zero lines mix in.
  const ext3 shape{6, 11, 96};
  auto x = convert<double>(random_tensor(shape, 31, 0.88, false, false));
  for (index_t i = 0; i < shape[2]; ++i) x[5 * shape[2] + i] = 0.5 + static_cast<double>(i);
  for (index_t i = 0; i < shape[2]; ++i) x[7 * shape[2] + i] = 0;
  std::mt19937_64 gen(5);
  for (std::uint64_t shuffle : {std::uint64_t{0}, std::uint64_t{17}, std::uint64_t{4242}}) {
    CAPTURE(shuffle);
    RunSpec spec;
    spec.shuffle = shuffle;
    spec.c = {make_coefficients(TransformKind::dct, shape[0], Norm::ortho, false, "test"),
              sparse_matrix(shape[1], 9, gen, 0.2), sparse_matrix(shape[2], 40, gen, 0.1)};
    compare<double>(x, shape, spec);
    spec.transport = PivotTransport::broadcast;  // planes received (gathered rows) on a line
    spec.batch_bytes = 2048;
    compare<double>(x, shape, spec);
  }
}

TEST_CASE("a caller's spare register changes no bit, whatever it held before", "[executors]") {
  // The fused kernels write W without reading it when a stage is one batch, so a reused
  // register's stale values (here NaN, then a previous run's result) must never show.
  const ext3 shape{20, 12, 33};
  auto x = convert<double>(random_tensor(shape, 77, 0.6, false, false));
  for (index_t l = 0; l < shape[0] * shape[1]; l += 4)
    for (index_t i = 0; i < shape[2]; ++i) x[l * shape[2] + i] = 0;  // zero lines
  std::mt19937_64 gen(3);
  for (const auto& order : {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{1, 2, 3}}) {
    CAPTURE(to_string(order));
    RunSpec spec;
    spec.order = order;
    spec.c = {sparse_matrix(shape[0], shape[0], gen, 0.3),
              make_coefficients(TransformKind::dct, shape[1], Norm::ortho, false, "test"),
              sparse_matrix(shape[2], 17, gen, 0.3)};
    const Plan plan = plan_for(MPI_COMM_WORLD, shape, spec);
    Topology topo(plan, MPI_COMM_WORLD, sizeof(double));
    const Brick in_box = topo.cells().intersect(whole(shape));
    std::vector<double> in(static_cast<size_t>(in_box.count()));
    for (index_t i = in_box.lo[0]; i < in_box.hi[0]; ++i)
      for (index_t j = in_box.lo[1]; j < in_box.hi[1]; ++j)
        for (index_t l = in_box.lo[2]; l < in_box.hi[2]; ++l)
          in[in_box.local_offset(i, j, l)] = x[(i * shape[1] + j) * shape[2] + l];
    EngineOptions opt;
    opt.coefficients = [&](int axis) { return spec.c[axis - 1]; };
    const EngineResult<double> plain = run_engine<double>(topo, opt, in);
    std::vector<double> spare = spare_register<double>(topo);
    std::fill(spare.begin(), spare.end(), std::numeric_limits<double>::quiet_NaN());
    for (int run = 0; run < 2; ++run) {
      CAPTURE(run);
      const EngineResult<double> r = run_engine<double>(topo, opt, in, &spare);
      CHECK(same_bits(plain.out, r.out));
      CHECK(plain.counters.total(Counter::macs) == r.counters.total(Counter::macs));
      if (topo.is_brick()) CHECK(spare.capacity() > 0);  // handed back for the next run
    }
  }
}

TEST_CASE("every kernel path gives the reference's bits and counters", "[executors][isa]") {
  // Odd and non-cubic shapes, a full-block one, real and complex, ESOP and dense, planes
  // broadcast or shared (packed in shared memory along axes 1 and 2 where lines share a
  // node), one batch or many.
  const ext3 shapes[] = {{13, 7, 29}, {30, 5, 9}, {16, 16, 16}, {1, 23, 6}, {9, 31, 2}};
  std::mt19937_64 gen(404);
  int n = 0;
  for (const ext3& shape : shapes)
    for (const Mode mode : {Mode::esop, Mode::dense}) {
      RunSpec spec;
      spec.mode = mode;
      spec.transport = n % 2 ? PivotTransport::broadcast : PivotTransport::automatic;
      spec.batch_bytes = n % 3 == 1 ? 512 : 0;
      spec.order = n % 2 ? std::array<int, 3>{1, 2, 3} : std::array<int, 3>{3, 1, 2};
      spec.c = {sparse_matrix(shape[0], shape[0] + 2, gen, 0.3),
                make_coefficients(TransformKind::dct, shape[1], Norm::ortho, false, "test"),
                sparse_matrix(shape[2], std::max<index_t>(1, shape[2] - 3), gen, 0.4)};
      CAPTURE(to_string(shape), mode == Mode::esop, n);
      auto x = random_tensor(shape, 500 + n, 0.5, false, false);
      for (index_t l = 0; l < shape[0] * shape[1]; l += 4)  // zero lines
        for (index_t i = 0; i < shape[2]; ++i) x[l * shape[2] + i] = 0;
      compare_paths<double>(convert<double>(x), shape, spec);
      if (n % 2 == 0) {  // complex: the exact path, on every path too
        spec.c[1] = make_coefficients(TransformKind::dft, shape[1], Norm::ortho, false, "test");
        compare_paths<cplx>(random_tensor(shape, 600 + n, 0.5, true, false), shape, spec);
      }
      ++n;
    }
}
