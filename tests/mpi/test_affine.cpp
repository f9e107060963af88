// The affine form Y = Y0 + X x1 C1 x2 C2 x3 C3 (TriADA paper Eq. 1 with "+="; doc/design.md
// §3.1): the last stage's W registers start at Y0 and accumulate onto it in streaming
// order. Checked bit for bit against a direct streaming-order oracle (tests/support), with
// both executors, both transports, ESOP and dense, several stage orders, at the rank count
// ctest started (1, 2, 3, 4, 5, 7); the counters must be those of the run without Y0.
#include <mpi.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "actuator/coefficients.hpp"
#include "support/catch.hpp"
#include "support/engine_run.hpp"
#include "support/oracle.hpp"

using namespace triada;
using namespace triada::test;

namespace {

// A real or complex matrix from raw generator bits (the same with every standard library);
// a `zeros` fraction of its entries exactly zero.
CoeffMatrix test_matrix(index_t n, index_t k, std::uint64_t seed, double zeros,
                        bool complex_values) {
  std::mt19937_64 gen(seed);
  const auto unit = [&gen] { return static_cast<double>(gen() >> 11) * 0x1p-53; };
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.is_complex = complex_values;
  c.data.resize(static_cast<size_t>(n * k));
  for (auto& v : c.data) {
    const bool zero = unit() < zeros;
    const double re = 2 * unit() - 1, im = complex_values ? 2 * unit() - 1 : 0.0;
    v = zero ? cplx{} : cplx{re, im};
  }
  return c;
}

std::array<const CoeffMatrix*, 3> ptrs(const RunSpec& spec) {
  return {&spec.c[0], &spec.c[1], &spec.c[2]};
}

ext3 out_shape(const RunSpec& spec) {
  return {spec.c[0].cols, spec.c[1].cols, spec.c[2].cols};
}

// Equal bits, or both NaN (an Inf or NaN input's NaN payload is the FMA unit's choice).
template <class T>
bool same_bits_or_nan(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  const auto one = [](double x, double y) {
    return (std::isnan(x) && std::isnan(y)) || std::memcmp(&x, &y, sizeof x) == 0;
  };
  for (size_t i = 0; i < a.size(); ++i) {
    if constexpr (is_complex_v<T>) {
      if (!one(a[i].real(), b[i].real()) || !one(a[i].imag(), b[i].imag())) return false;
    } else if (!one(a[i], b[i])) {
      return false;
    }
  }
  return true;
}

// Every per-step counter, the busiest cell and the MPI traffic of two runs.
void check_same_counters(const RunCounters& a, const RunCounters& b) {
  REQUIRE(a.steps.size() == b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    CAPTURE(i);
    CHECK(a.steps[i].pivot == b.steps[i].pivot);
    CHECK(a.steps[i].busiest == b.steps[i].busiest);
    for (int c = 0; c < kCounters; ++c) CHECK(a.steps[i].n[c] == b.steps[i].n[c]);
  }
  CHECK(a.mpi_total().messages == b.mpi_total().messages);
  CHECK(a.mpi_total().bytes == b.mpi_total().bytes);
}

// Runs with Y0 under both executors and both transports (many small batches, or planes read
// in place), ESOP and dense: each result bitwise equal to the oracle of its mode, and
// every counter equal to the run without Y0. Returns the ESOP and dense results (fused).
template <class T>
std::array<std::vector<T>, 2> check_affine(const std::vector<T>& x, const ext3& shape, RunSpec spec,
                                           const std::vector<T>& y0) {
  std::array<std::vector<T>, 2> out;
  for (Mode mode : {Mode::esop, Mode::dense}) {
    spec.mode = mode;
    StreamingOptions so;
    so.order = spec.order;
    so.esop = mode == Mode::esop;
    so.fp32 = spec.cell_mode == CellMode::fp32;
    const std::vector<T> want = oracle_streaming(x, shape, ptrs(spec), so, &y0);
    for (Executor ex : {Executor::reference, Executor::fused})
      for (int batches = 0; batches < 2; ++batches) {
        CAPTURE(so.esop, to_string(ex), batches, to_string(spec.order));
        spec.executor = ex;
        spec.transport = batches ? PivotTransport::broadcast : PivotTransport::automatic;
        spec.batch_bytes = batches ? 64 : 0;
        const GlobalRun<T> with = run_global<T>(MPI_COMM_WORLD, x, shape, spec, &y0);
        const GlobalRun<T> without = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
        CHECK(same_bits_or_nan(with.y, want));
        check_same_counters(with.rc, without.rc);
        if (ex == Executor::fused) out[mode == Mode::esop ? 0 : 1] = with.y;
      }
  }
  return out;
}

// Sparse test data: a zero fraction and every third (i1, i2) line zero.
std::vector<cplx> sparse_tensor(const ext3& shape, std::uint64_t seed, double zeros, bool cx) {
  auto x = random_tensor(shape, seed, zeros, cx, false);
  for (index_t l = 0; l < shape[0] * shape[1]; l += 3)
    for (index_t i = 0; i < shape[2]; ++i) x[l * shape[2] + i] = 0;
  return x;
}

}  // namespace

TEST_CASE("the affine form accumulates onto Y0 bit for bit: gemt, non-square, sparse", "[affine]") {
  const ext3 shape{7, 5, 9};
  RunSpec spec;
  // Expansion and compression; a zero column of C2 leaves some outputs at Y0 under ESOP.
  spec.c = {test_matrix(7, 4, 11, 0.3, false), test_matrix(5, 8, 12, 0.3, false),
            test_matrix(9, 6, 13, 0.3, false)};
  for (index_t n = 0; n < 5; ++n) spec.c[1](n, 2) = 0;
  const auto x = convert<double>(sparse_tensor(shape, 21, 0.5, false));
  const auto y0 = convert<double>(random_tensor(out_shape(spec), 22, 0.2, false, false));
  for (const auto& order :
       {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{1, 2, 3}, std::array<int, 3>{2, 3, 1}}) {
    spec.order = order;
    check_affine<double>(x, shape, spec, y0);
  }
  spec.mesh = ext3{3, 4, 5};  // a folded mesh: physical cells hold blocks of virtual ones
  check_affine<double>(x, shape, spec, y0);
}

TEST_CASE("the affine form with a built-in transform (dct, wht) on odd shapes", "[affine]") {
  const ext3 shape{9, 6, 11};
  RunSpec spec;
  for (int a = 0; a < 3; ++a)
    spec.c[a] = make_coefficients(TransformKind::dct, shape[a], Norm::ortho, false, "test");
  const auto x = convert<double>(sparse_tensor(shape, 31, 0.7, false));
  const auto y0 = convert<double>(random_tensor(shape, 32, 0.0, false, false));
  spec.order = {2, 1, 3};  // the last stage along axis 3: the left kernels
  check_affine<double>(x, shape, spec, y0);
  const ext3 pow2{8, 4, 16};
  for (int a = 0; a < 3; ++a)
    spec.c[a] = make_coefficients(TransformKind::wht, pow2[a], Norm::backward, false, "test");
  spec.order = {3, 2, 1};
  check_affine<double>(convert<double>(sparse_tensor(pow2, 33, 0.3, false)), pow2, spec,
                       convert<double>(random_tensor(pow2, 34, 0.5, false, true)));
}

TEST_CASE("the affine form of a complex transform (dft) with a complex Y0", "[affine]") {
  const ext3 shape{5, 6, 7};
  RunSpec spec;
  for (int a = 0; a < 3; ++a)
    spec.c[a] = make_coefficients(TransformKind::dft, shape[a], Norm::ortho, false, "test");
  const auto x = sparse_tensor(shape, 41, 0.4, true);
  const auto y0 = random_tensor(shape, 42, 0.1, true, false);
  for (const auto& order : {std::array<int, 3>{3, 1, 2}, std::array<int, 3>{2, 3, 1}}) {
    spec.order = order;
    check_affine<cplx>(x, shape, spec, y0);
  }
}

TEST_CASE("the affine form in fp32 and m3xu-fp32 cells: Y0 is loaded as binary32", "[affine]") {
  const ext3 shape{6, 7, 5};
  RunSpec spec;
  spec.c = {test_matrix(6, 6, 51, 0.3, false), test_matrix(7, 3, 52, 0.3, false),
            test_matrix(5, 8, 53, 0.3, false)};
  for (index_t n = 0; n < 5; ++n) spec.c[2](n, 4) = 0;  // outputs k3 = 4 stay at Y0 (ESOP)
  const auto x = convert<double>(sparse_tensor(shape, 54, 0.4, false));
  // Values with more bits than binary32 holds: a W that is never updated must still show
  // the binary32 rounding of its Y0.
  auto y0 = convert<double>(random_tensor(out_shape(spec), 55, 0.0, false, false));
  for (double& v : y0) v += 0x1p-40;
  spec.order = {1, 2, 3};
  spec.cell_mode = CellMode::fp32;
  const auto out = check_affine<double>(x, shape, spec, y0);
  for (double v : out[0]) CHECK(v == static_cast<double>(static_cast<float>(v)));
  // An m3xu-fp32 cell adds each exact product to its binary32 W with one rounding: the
  // same oracle (std::fmaf per update), bit for bit, in both executors.
  spec.cell_mode = CellMode::m3xu_fp32;
  spec.mode = Mode::esop;
  StreamingOptions so;
  so.order = spec.order;
  so.fp32 = true;
  const std::vector<double> want = oracle_streaming(x, shape, ptrs(spec), so, &y0);
  for (Executor ex : {Executor::reference, Executor::fused}) {
    spec.executor = ex;
    CHECK(same_bits_or_nan(run_global<double>(MPI_COMM_WORLD, x, shape, spec, &y0).y, want));
  }
}

TEST_CASE("a Y0 holding -0: the executors agree, and ESOP keeps a -0 where dense adds +0",
          "[affine][esop]") {
  const ext3 shape{6, 5, 7};
  RunSpec spec;
  spec.c = {test_matrix(6, 6, 61, 0.3, false), test_matrix(5, 5, 62, 0.3, false),
            test_matrix(7, 7, 63, 0.3, false)};
  for (index_t n = 0; n < 5; ++n) spec.c[1](n, 1) = 0;  // a zero column in the last stage
  const auto x = convert<double>(sparse_tensor(shape, 64, 0.5, false));
  std::vector<double> y0(static_cast<size_t>(6 * 5 * 7), -0.0);
  for (size_t i = 0; i < y0.size(); i += 3) y0[i] = 0.25 * static_cast<double>(i);
  const auto out = check_affine<double>(x, shape, spec, y0);  // order 312: last along axis 2
  // Numerically equal; bitwise they differ only by the sign of zeros: ESOP skips the zero
  // products, dense adds them and -0 + +0 = +0.
  REQUIRE(out[0].size() == out[1].size());
  size_t neg_zero_kept = 0;
  for (size_t i = 0; i < out[0].size(); ++i) {
    CHECK(out[0][i] == out[1][i]);
    if (std::memcmp(&out[0][i], &out[1][i], sizeof(double)) == 0) continue;
    CHECK((out[0][i] == 0.0 && std::signbit(out[0][i]) && !std::signbit(out[1][i])));
    ++neg_zero_kept;
  }
  CHECK(neg_zero_kept > 0);
}

TEST_CASE("the affine form with Inf and NaN: in Y0, and in X (the fused kernels redo exactly)",
          "[affine]") {
  const ext3 shape{8, 6, 5};
  RunSpec spec;
  spec.c = {test_matrix(8, 8, 71, 0.3, false), test_matrix(6, 6, 72, 0.3, false),
            test_matrix(5, 5, 73, 0.3, false)};
  auto x = convert<double>(sparse_tensor(shape, 74, 0.5, false));
  auto y0 = convert<double>(random_tensor(shape, 75, 0.2, false, false));
  y0[4] = std::numeric_limits<double>::infinity();
  y0[50] = std::numeric_limits<double>::quiet_NaN();
  check_affine<double>(x, shape, spec, y0);
  y0[4] = 1.5;
  y0[50] = -2.0;
  x[7] = -std::numeric_limits<double>::infinity();
  spec.order = {3, 2, 1};
  check_affine<double>(x, shape, spec, y0);
}
