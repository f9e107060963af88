// The 3D mesh engine under MPI: every promise of doc/design.md §3 checked at the rank count
// this executable was started with (ctest runs it at several), against independent
// oracles (FFTW, direct per-axis evaluation) and against a one-rank run of itself for the
// bitwise rank-count promise.
#include <mpi.h>

#include <random>

#include "actuator/coefficients.hpp"
#include "support/catch.hpp"
#include "support/engine_run.hpp"
#include "support/oracle.hpp"

using namespace triada;
using namespace triada::test;

namespace {

int world_size() {
  int s = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

std::array<CoeffMatrix, 3> builtin(const std::array<TransformKind, 3>& kinds, const ext3& shape,
                                   Norm norm, bool inverse) {
  std::array<CoeffMatrix, 3> c;
  for (int a = 0; a < 3; ++a) c[a] = make_coefficients(kinds[a], shape[a], norm, inverse, "test");
  return c;
}

CoeffMatrix random_matrix(index_t n, index_t k, std::uint64_t seed, bool complex_values,
                          double zero_fraction = 0.0, bool integers = false) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), z(0.0, 1.0);
  std::uniform_int_distribution<int> iv(-3, 3);
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.is_complex = complex_values;
  c.data.resize(static_cast<size_t>(n * k));
  for (auto& v : c.data) {
    const double re = integers ? iv(gen) : u(gen);
    const double im = complex_values ? (integers ? iv(gen) : u(gen)) : 0.0;
    v = z(gen) < zero_fraction ? cplx{} : cplx{re, im};
  }
  return c;
}

// Runs on the world and on MPI_COMM_SELF; the two must agree bit for bit (the output does
// not depend on the rank count). Returns the world run.
template <class T>
GlobalRun<T> run_checked(const std::vector<T>& x, const ext3& shape, const RunSpec& spec) {
  GlobalRun<T> w = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
  if (world_size() > 1) {
    RunSpec single = spec;
    single.grid.reset();
    GlobalRun<T> s = run_global<T>(MPI_COMM_SELF, x, shape, single);
    CHECK(same_bits(w.y, s.y));
    CHECK(w.rc.total(Counter::macs) == s.rc.total(Counter::macs));
    CHECK(w.rc.total_steps() == s.rc.total_steps());
  }
  return w;
}

const std::array<TransformKind, 3> kAll[] = {
    {TransformKind::dft, TransformKind::dft, TransformKind::dft},
    {TransformKind::dct, TransformKind::dct, TransformKind::dct},
    {TransformKind::dht, TransformKind::dht, TransformKind::dht},
    {TransformKind::wht, TransformKind::wht, TransformKind::wht},
    {TransformKind::dft, TransformKind::dct, TransformKind::wht},
};

ext3 shape_for(const std::array<TransformKind, 3>& k) {
  // Non-cubic, non-power-of-two wherever the transform allows.
  ext3 s{7, 12, 5};
  for (int a = 0; a < 3; ++a)
    if (k[a] == TransformKind::wht) s[a] = a == 0 ? 8 : a == 1 ? 4 : 16;
  return s;
}

std::string name_of(const std::array<TransformKind, 3>& k) {
  return to_string(k[0]) + "," + to_string(k[1]) + "," + to_string(k[2]);
}

}  // namespace

TEST_CASE("every transform matches its oracle forward and inverse, real and complex input",
          "[engine][oracle]") {
  for (const auto& kinds : kAll)
    for (Norm norm : {Norm::ortho, Norm::backward})
      for (bool inverse : {false, true})
        for (bool complex_in : {false, true}) {
          const ext3 shape = shape_for(kinds);
          CAPTURE(name_of(kinds), to_string(norm), inverse, complex_in);
          const auto x = random_tensor(shape, 11, 0.3, complex_in, false);
          RunSpec spec;
          spec.c = builtin(kinds, shape, norm, inverse);
          const bool cx =
              complex_in || spec.c[0].is_complex || spec.c[1].is_complex || spec.c[2].is_complex;
          const auto ref = oracle_transform(x, shape, kinds, norm, inverse);
          double err = 0;
          if (cx)
            err = max_rel_error(run_checked<cplx>(x, shape, spec).y, ref);
          else
            err =
                max_rel_error(to_cplx(run_checked<double>(convert<double>(x), shape, spec).y), ref);
          CHECK(err <= 1e-12);
        }
}

TEST_CASE("gemt with non-square matrices (expansion and compression) matches direct evaluation",
          "[engine][gemt]") {
  const ext3 shape{7, 12, 5};
  for (bool complex_c : {false, true})
    for (const auto& order :
         {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{1, 2, 3}, std::array<int, 3>{2, 3, 1},
          std::array<int, 3>{1, 3, 2}, std::array<int, 3>{2, 1, 3}, std::array<int, 3>{3, 2, 1}}) {
      CAPTURE(complex_c, to_string(order));
      RunSpec spec;
      spec.c = {random_matrix(7, 3, 1, complex_c), random_matrix(12, 15, 2, complex_c),
                random_matrix(5, 5, 3, complex_c)};
      spec.order = order;
      const auto x = random_tensor(shape, 5, 0.2, false, false);
      const auto ref = oracle_gemt(x, shape, {&spec.c[0], &spec.c[1], &spec.c[2]});
      GlobalRun<cplx> r = run_checked<cplx>(x, shape, spec);
      CHECK(r.plan.out_shape == ext3{3, 15, 5});
      CHECK(max_rel_error(r.y, ref) <= 1e-12);
    }
}

TEST_CASE("inverse of forward gives the input back for every transform and norm",
          "[engine][roundtrip]") {
  for (const auto& kinds : kAll)
    for (Norm norm : {Norm::ortho, Norm::backward}) {
      const ext3 shape = shape_for(kinds);
      CAPTURE(name_of(kinds), to_string(norm));
      const auto x = random_tensor(shape, 21, 0.1, true, false);
      RunSpec fwd, inv;
      fwd.c = builtin(kinds, shape, norm, false);
      inv.c = builtin(kinds, shape, norm, true);
      const auto y = run_checked<cplx>(x, shape, fwd).y;
      const auto back = run_checked<cplx>(y, shape, inv).y;
      CHECK(max_rel_error(back, x) <= 1e-12);
    }
  SECTION("gemt with a square invertible matrix per axis") {
    const ext3 shape{6, 5, 7};
    RunSpec fwd, inv;
    for (int a = 0; a < 3; ++a) {
      CoeffMatrix c = random_matrix(shape[a], shape[a], 40 + a, a == 1);
      for (index_t i = 0; i < shape[a]; ++i) c(i, i) += cplx(double(shape[a]), 0.0);
      fwd.c[a] = c;
      inv.c[a] = invert(c, "test");
    }
    const auto x = random_tensor(shape, 22, 0.0, false, false);
    const auto back = run_checked<cplx>(run_checked<cplx>(x, shape, fwd).y, shape, inv).y;
    CHECK(max_rel_error(back, x) <= 1e-12);
  }
}

TEST_CASE("dense runs take N1+N2+N3 steps and count what the closed form says",
          "[engine][counters]") {
  const ext3 shape{7, 12, 5};
  RunSpec spec;
  spec.mode = Mode::dense;
  spec.c = {random_matrix(7, 4, 1, false), random_matrix(12, 12, 2, false),
            random_matrix(5, 9, 3, false)};
  const auto x = convert<double>(random_tensor(shape, 3, 0.5, false, false));
  const GlobalRun<double> r = run_checked<double>(x, shape, spec);
  CHECK(r.rc.total_steps() == 7 + 12 + 5);
  const auto closed = dense_counters(r.plan);
  REQUIRE(closed.size() == r.rc.stages.size());
  for (size_t s = 0; s < closed.size(); ++s) {
    CAPTURE(s);
    CHECK(r.rc.stages[s].steps == closed[s].steps);
    CHECK(r.rc.stages[s].cycles == closed[s].cycles);
    for (int c = 0; c < kCounters; ++c) {
      CAPTURE(kCounterTable[c].name);
      CHECK(r.rc.stages[s].n[c] == closed[s].n[c]);
    }
  }
  // And the closed form's macs_dense is the doc/design.md §3.7 formula, spelled out here.
  const std::uint64_t by_hand = 7ull * 12 * 5 * 9 /*axis 3: N1 N2 * K3 N3*/ +
                                12ull * 9 * 4 * 7 /*axis 1: N2 K3 * K1 N1*/ +
                                4ull * 9 * 12 * 12 /*axis 2: K1 K3 * K2 N2*/;
  CHECK(macs_dense(r.plan) == by_hand);
}

namespace {
// Direct evaluation of one stage on a whole tensor (exact for the integer data used).
std::vector<double> apply_stage(const std::vector<double>& v, const ext3& s, int axis,
                                const CoeffMatrix& c, ext3& out) {
  out = s;
  out[axis - 1] = c.cols;
  std::vector<double> w(static_cast<size_t>(out[0] * out[1] * out[2]), 0.0);
  for (index_t i = 0; i < s[0]; ++i)
    for (index_t j = 0; j < s[1]; ++j)
      for (index_t l = 0; l < s[2]; ++l) {
        const ext3 g{i, j, l};
        const double val = v[(i * s[1] + j) * s[2] + l];
        for (index_t k = 0; k < c.cols; ++k) {
          ext3 o = g;
          o[axis - 1] = k;
          w[(o[0] * out[1] + o[1]) * out[2] + o[2]] += val * c(g[axis - 1], k).real();
        }
      }
  return w;
}
}  // namespace

TEST_CASE(
    "ESOP counters equal the doc/design.md formulas on sparse data, and ESOP and dense agree "
    "bit for bit",
    "[engine][esop]") {
  const ext3 shape{9, 8, 6};
  // Integer data and matrices: every intermediate is exact, so its zeros are known.
  auto xc = random_tensor(shape, 77, 0.6, false, true);
  // Structured zeros: an (i1, i2) line and an i1 plane.
  for (index_t l = 0; l < shape[2]; ++l) xc[(2 * shape[1] + 3) * shape[2] + l] = 0;
  for (index_t j = 0; j < shape[1]; ++j)
    for (index_t l = 0; l < shape[2]; ++l) xc[(5 * shape[1] + j) * shape[2] + l] = 0;
  const auto x = convert<double>(xc);
  for (const auto& order : {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{2, 1, 3}}) {
    CAPTURE(to_string(order));
    RunSpec spec;
    spec.order = order;
    spec.c = {random_matrix(9, 7, 5, false, 0.5, true), random_matrix(8, 8, 6, false, 0.7, true),
              random_matrix(6, 10, 7, false, 0.4, true)};
    // An all-zero row: ESOP skips its step.
    for (index_t k = 0; k < 8; ++k) spec.c[1](3, k) = 0;
    const GlobalRun<double> esop = run_checked<double>(x, shape, spec);
    RunSpec dense_spec = spec;
    dense_spec.mode = Mode::dense;
    const GlobalRun<double> dense = run_checked<double>(x, shape, dense_spec);
    CHECK(same_bits(esop.y, dense.y));

    // Independent expectation, stage by stage.
    std::vector<double> v = x;
    ext3 s = shape;
    std::uint64_t zero_rows = 0;
    for (size_t st = 0; st < 3; ++st) {
      const int axis = order[st];
      const CoeffMatrix& c = spec.c[axis - 1];
      const index_t n = s[axis - 1], k = c.cols;
      const index_t lines = s[0] * s[1] * s[2] / n;
      std::uint64_t steps = 0, macs = 0, ysend = 0, yrecv = 0, waits = 0, xsend = 0;
      for (index_t t = 0; t < n; ++t) {
        std::uint64_t row = 0;
        for (index_t kk = 0; kk < k; ++kk) row += c(t, kk) != cplx{} ? 1 : 0;
        if (row == 0) {
          ++zero_rows;
          continue;
        }
        const bool diag = t < k && c(t, t) != cplx{};
        std::uint64_t pivots = 0;
        for (index_t i = 0; i < s[0]; ++i)
          for (index_t j = 0; j < s[1]; ++j)
            for (index_t l = 0; l < s[2]; ++l) {
              const ext3 g{i, j, l};
              if (g[axis - 1] == t && v[(i * s[1] + j) * s[2] + l] != 0) ++pivots;
            }
        ++steps;
        macs += pivots * row;
        ysend += pivots;
        xsend += row + (diag ? 0 : 1);
        yrecv += pivots * (row - (diag ? 1 : 0));
        waits += (static_cast<std::uint64_t>(lines) - pivots) * (row - (diag ? 1 : 0));
      }
      const StageTotals& got = esop.rc.stages[st];
      CAPTURE(st, axis);
      CHECK(got.steps == steps);
      CHECK(got[Counter::macs] == macs);
      CHECK(got[Counter::y_bus_sends] == ysend);
      CHECK(got[Counter::y_bus_receives] == yrecv);
      CHECK(got[Counter::waits] == waits);
      CHECK(got[Counter::x_bus_sends] == xsend);
      ext3 out;
      v = apply_stage(v, s, axis, c, out);
      s = out;
    }
    // Steps: N1+N2+N3 less exactly the all-zero rows.
    CHECK(esop.rc.total_steps() == 9 + 8 + 6 - zero_rows);
    CHECK(zero_rows >= 1);
    CHECK(dense.rc.total_steps() == 9 + 8 + 6);
    // The result itself is exact on this integer data.
    CHECK(same_bits(esop.y, v));
  }
}

TEST_CASE("a shuffled streaming order gives the same counters and the same result",
          "[engine][shuffle]") {
  SECTION("wht on integer data: exact") {
    const ext3 shape{8, 4, 16};
    RunSpec spec;
    spec.c = builtin({TransformKind::wht, TransformKind::wht, TransformKind::wht}, shape,
                     Norm::backward, false);
    const auto x = convert<double>(random_tensor(shape, 9, 0.5, false, true));
    const auto a = run_checked<double>(x, shape, spec);
    spec.shuffle = 12345;
    const auto b = run_checked<double>(x, shape, spec);
    CHECK(same_bits(a.y, b.y));
    for (int c = 0; c < kCounters; ++c)
      CHECK(a.rc.total(static_cast<Counter>(c)) == b.rc.total(static_cast<Counter>(c)));
    // The rows really were streamed in another order.
    bool permuted = false;
    for (size_t i = 0; i < a.rc.steps.size(); ++i)
      permuted |= a.rc.steps[i].pivot != b.rc.steps[i].pivot;
    CHECK(permuted);
  }
  SECTION("dct on real data: within rounding, counters exact") {
    const ext3 shape{7, 12, 5};
    RunSpec spec;
    spec.c = builtin({TransformKind::dct, TransformKind::dct, TransformKind::dct}, shape,
                     Norm::ortho, false);
    const auto x = convert<double>(random_tensor(shape, 10, 0.4, false, false));
    const auto a = run_checked<double>(x, shape, spec);
    spec.shuffle = 777;
    const auto b = run_checked<double>(x, shape, spec);
    CHECK(max_rel_error(to_cplx(a.y), to_cplx(b.y)) <= 1e-12);
    for (size_t s = 0; s < 3; ++s)
      for (int c = 0; c < kCounters; ++c) CHECK(a.rc.stages[s].n[c] == b.rc.stages[s].n[c]);
  }
}

TEST_CASE("every brick grid that fits gives the same bits", "[engine][grid]") {
  const int nb = brick_rank_count(world_size(), ActuatorPlacement::automatic);
  const ext3 shape{7, 6, 5};
  RunSpec spec;
  spec.c = builtin({TransformKind::dct, TransformKind::dht, TransformKind::dft}, shape, Norm::ortho,
                   false);
  const auto x = random_tensor(shape, 31, 0.3, true, false);
  const auto one = run_global<cplx>(MPI_COMM_SELF, x, shape, spec).y;
  for (int g1 = 1; g1 <= nb; ++g1)
    for (int g2 = 1; g1 * g2 <= nb; ++g2) {
      if (nb % (g1 * g2) != 0) continue;
      const int g3 = nb / (g1 * g2);
      if (g1 > shape[0] || g2 > shape[1] || g3 > shape[2]) continue;
      CAPTURE(g1, g2, g3);
      spec.grid = std::array<int, 3>{g1, g2, g3};
      CHECK(same_bits(run_global<cplx>(MPI_COMM_WORLD, x, shape, spec).y, one));
    }
}

TEST_CASE("dedicated and co-located actuators send the same messages and give the same bits",
          "[engine][actuators]") {
  const int np = world_size();
  if (np < 4) return;  // dedicated actuator ranks exist only with >= 4 ranks
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const ext3 shape{7, 12, 5};
  RunSpec spec;
  spec.c = builtin({TransformKind::dft, TransformKind::dct, TransformKind::dht}, shape, Norm::ortho,
                   false);
  spec.c[2] = random_matrix(5, 5, 8, false, 0.3);  // a sparse C3 so ESOP skips work
  const auto x = random_tensor(shape, 41, 0.5, true, false);
  const auto dedicated = run_global<cplx>(MPI_COMM_WORLD, x, shape, spec);
  REQUIRE(dedicated.plan.ranks.dedicated_actuators);
  // The same bricks, with the actuators inside them: the first np - 3 ranks.
  MPI_Comm sub = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, rank < np - 3 ? 0 : MPI_UNDEFINED, rank, &sub);
  int ok = 1;
  if (sub != MPI_COMM_NULL) {
    RunSpec co = spec;
    co.placement = ActuatorPlacement::colocated;
    co.grid = dedicated.plan.ranks.grid;
    const auto colocated = run_global<cplx>(sub, x, shape, co);
    ok = colocated.plan.ranks.dedicated_actuators ? 0 : 1;
    ok &= same_bits(colocated.y, dedicated.y) ? 1 : 0;
    for (size_t s = 0; s < 3; ++s)
      for (int c = 0; c < kCounters; ++c)
        ok &= colocated.rc.stages[s].n[c] == dedicated.rc.stages[s].n[c] ? 1 : 0;
    const MpiTraffic a = colocated.rc.mpi_total(), b = dedicated.rc.mpi_total();
    ok &= (a.messages == b.messages && a.bytes == b.bytes) ? 1 : 0;
    MPI_Comm_free(&sub);
  }
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  CHECK(all == 1);
}

TEST_CASE("a folded mesh gives the unfolded bits and counters, in more cycles", "[engine][fold]") {
  const ext3 shape{20, 12, 18};
  RunSpec spec;
  spec.c = builtin({TransformKind::dct, TransformKind::dft, TransformKind::dht}, shape, Norm::ortho,
                   false);
  const auto x = random_tensor(shape, 51, 0.4, false, false);
  const auto flat = run_global<cplx>(MPI_COMM_WORLD, x, shape, spec);
  // unfolded: one step a cycle of each of the complex fp64 MAC's four sub-steps (FMAs)
  CHECK(flat.rc.total_cycles() == 4 * flat.rc.total_steps());
  spec.mesh = ext3{5, 6, 6};  // folds 4 x 2 x 3
  const auto folded = run_checked<cplx>(x, shape, spec);
  CHECK(folded.plan.fold == ext3{4, 2, 3});
  CHECK(same_bits(folded.y, flat.y));
  for (int c = 0; c < kCounters; ++c)
    CHECK(folded.rc.total(static_cast<Counter>(c)) == flat.rc.total(static_cast<Counter>(c)));
  CHECK(folded.rc.total_steps() == flat.rc.total_steps());
  CHECK(folded.rc.total_cycles() > folded.rc.total_steps());
  // Dense: every step keeps each physical cell busy with its whole block of 4*2*3 cells.
  spec.mode = Mode::dense;
  const auto dense = run_checked<cplx>(x, shape, spec);
  CHECK(dense.rc.total_steps() == 20 + 12 + 18);
  CHECK(dense.rc.total_cycles() == (20 + 12 + 18) * 4 * 2 * 3 * 4);  // x 4 FMAs a complex MAC
  // Non-square, folded, dense: every stage's cycles equal the closed form.
  RunSpec g;
  g.mode = Mode::dense;
  g.mesh = ext3{3, 5, 4};
  g.c = {random_matrix(20, 7, 1, false), random_matrix(12, 15, 2, false),
         random_matrix(18, 2, 3, false)};
  const auto gd = run_checked<double>(convert<double>(x), shape, g);
  const auto closed = dense_counters(gd.plan);
  for (size_t s = 0; s < 3; ++s) CHECK(gd.rc.stages[s].cycles == closed[s].cycles);
}

TEST_CASE("MPI messages and bytes of a dense fused run follow the closed form", "[engine][mpi]") {
  const ext3 shape{9, 10, 7};
  RunSpec spec;
  spec.mode = Mode::dense;
  // The same accounting whether planes are broadcast or read through shared memory.
  spec.transport = GENERATE(PivotTransport::automatic, PivotTransport::broadcast);
  spec.c = {random_matrix(9, 5, 1, false), random_matrix(10, 12, 2, false),
            random_matrix(7, 7, 3, false)};
  const auto r = run_global<double>(
      MPI_COMM_WORLD, convert<double>(random_tensor(shape, 3, 0.3, false, false)), shape, spec);
  const Plan& p = r.plan;
  const std::uint64_t nb = static_cast<std::uint64_t>(p.ranks.n_bricks);
  REQUIRE(r.rc.mpi_stages.size() == 3);
  for (size_t s = 0; s < 3; ++s) {
    const StagePlan& sp = p.stages[s];
    const std::uint64_t n = static_cast<std::uint64_t>(sp.n()),
                        width = static_cast<std::uint64_t>(std::max(sp.n(), sp.k())),
                        ga = static_cast<std::uint64_t>(p.ranks.grid[sp.axis - 1]),
                        groups = nb / ga, lines = static_cast<std::uint64_t>(sp.lines());
    CAPTURE(s, sp.axis, nb, ga);
    // Actuator: one message per brick per step plus the end of stage; each carries a
    // 16-byte header and the brick's planes of the tagged vector (24-byte entries).
    CHECK(r.rc.mpi_stages[s].x.messages == (n + 1) * nb);
    CHECK(r.rc.mpi_stages[s].x.bytes == n * (nb * 16 + groups * width * 24) + nb * 16);
    // Pivot planes: the owner sends its part of the plane to the other ga - 1 bricks of
    // its line group; a group whose bricks hold no line of the tensor sends nothing.
    std::uint64_t live_groups = 0;
    for (int b = 0; b < p.ranks.n_bricks; ++b) {
      if (p.brick_coords(b)[sp.axis - 1] != 0) continue;
      ext3 probe = sp.in_shape;
      probe[sp.axis - 1] = p.virtual_cells[sp.axis - 1];  // the whole line along the axis
      live_groups += p.brick_cells(b).intersect(whole(probe)).empty() ? 0 : 1;
    }
    CHECK(live_groups <= groups);
    CHECK(r.rc.mpi_stages[s].y.messages == n * live_groups * (ga - 1));
    CHECK(r.rc.mpi_stages[s].y.bytes == n * lines * 8 * (ga - 1));
  }
  CHECK(r.rc.mpi_control.messages == 2);
  CHECK(r.rc.mpi_control.bytes == 2 * sizeof(int));
}
