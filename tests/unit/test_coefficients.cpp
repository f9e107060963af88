// Coefficient matrices (doc/design.md §4) against FFTW with numpy/scipy scaling, and the
// test oracle itself on hand-computable cases.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/error.hpp"
#include "support/catch.hpp"
#include "support/oracle.hpp"

namespace {

using triada::CoeffMatrix;
using triada::cplx;
using triada::index_t;
using triada::Norm;
using triada::TransformKind;
using lcplx = std::complex<long double>;

constexpr std::array<Norm, 3> kNorms{Norm::ortho, Norm::backward, Norm::forward};
constexpr std::array<TransformKind, 4> kBuiltIns{TransformKind::dft, TransformKind::dct,
                                                 TransformKind::dht, TransformKind::wht};

// y[k] = sum_n x[n] C(n, k), one stage of doc/design.md §3, accumulated in long double.
std::vector<cplx> apply_matrix(const CoeffMatrix& c, const std::vector<cplx>& x) {
  std::vector<cplx> y(static_cast<std::size_t>(c.cols));
  for (index_t k = 0; k < c.cols; ++k) {
    lcplx acc(0.0L, 0.0L);
    for (index_t n = 0; n < c.rows; ++n) {
      const cplx xv = x[static_cast<std::size_t>(n)];
      acc += lcplx(xv.real(), xv.imag()) * lcplx(c(n, k).real(), c(n, k).imag());
    }
    y[static_cast<std::size_t>(k)] =
        cplx(static_cast<double>(acc.real()), static_cast<double>(acc.imag()));
  }
  return y;
}

// max |(A * B)(i, j) - [i == j]| with B = b or b^H, accumulated in long double.
double distance_from_identity(const CoeffMatrix& a, const CoeffMatrix& b, bool adjoint_b) {
  double worst = 0.0;
  for (index_t i = 0; i < a.rows; ++i) {
    for (index_t j = 0; j < (adjoint_b ? b.rows : b.cols); ++j) {
      lcplx acc(0.0L, 0.0L);
      for (index_t m = 0; m < a.cols; ++m) {
        const cplx bv = adjoint_b ? std::conj(b(j, m)) : b(m, j);
        acc += lcplx(a(i, m).real(), a(i, m).imag()) * lcplx(bv.real(), bv.imag());
      }
      acc -= lcplx(i == j ? 1.0L : 0.0L, 0.0L);
      worst = std::max(worst, static_cast<double>(std::abs(acc)));
    }
  }
  return worst;
}

// The 1D FFTW reference: the oracle on shape (N, 1, 1); the size-1 axes use dft, which
// is the identity at size 1 in both norms.
std::vector<cplx> fftw_reference(TransformKind kind, const std::vector<cplx>& x, Norm norm,
                                 bool inverse) {
  const triada::ext3 shape{static_cast<index_t>(x.size()), 1, 1};
  return triada::test::oracle_transform(x, shape, {kind, TransformKind::dft, TransformKind::dft},
                                        norm, inverse);
}

void check_matches_fftw(TransformKind kind) {
  for (const index_t n : {1, 2, 5, 7, 12, 16, 31, 997}) {
    for (const Norm norm : kNorms) {
      for (const bool inverse : {false, true}) {
        INFO(triada::to_string(kind)
             << " N=" << n << " norm=" << triada::to_string(norm) << " inverse=" << inverse);
        const auto x = triada::test::random_tensor({n, 1, 1}, 1000 + static_cast<std::uint64_t>(n),
                                                   0.0, true, false);
        const CoeffMatrix c = triada::make_coefficients(kind, n, norm, inverse, "test");
        const auto got = apply_matrix(c, x);
        const auto ref = fftw_reference(kind, x, norm, inverse);
        CHECK(triada::test::max_rel_error(got, ref) <= 1e-13);
      }
    }
  }
}

}  // namespace

TEST_CASE("dft matrices reproduce FFTW's DFT in numpy scaling", "[coefficients]") {
  check_matches_fftw(TransformKind::dft);
}

TEST_CASE("dct matrices reproduce FFTW's DCT-II and its inverse in scipy scaling",
          "[coefficients]") {
  check_matches_fftw(TransformKind::dct);
}

TEST_CASE("dht matrices reproduce FFTW's DHT in numpy-style scaling", "[coefficients]") {
  check_matches_fftw(TransformKind::dht);
}

TEST_CASE("dft entries are exact at the quarter turns and conjugate-symmetric", "[coefficients]") {
  const index_t n = 12;
  const CoeffMatrix c =
      triada::make_coefficients(TransformKind::dft, n, Norm::backward, false, "t");
  CHECK(c.is_complex);
  for (index_t r = 0; r < n; ++r) {
    for (index_t k = 0; k < n; ++k) {
      const index_t m = (r * k) % n;
      if (m == 0) CHECK(c(r, k) == cplx(1.0, 0.0));
      if (m == 3) CHECK(c(r, k) == cplx(0.0, -1.0));
      if (m == 6) CHECK(c(r, k) == cplx(-1.0, 0.0));
      if (m == 9) CHECK(c(r, k) == cplx(0.0, 1.0));
      // exp(-2 pi i r (N-k)/N) == conj(exp(-2 pi i r k/N)), bit for bit.
      if (k > 0) CHECK(c(r, n - k) == std::conj(c(r, k)));
    }
  }
}

TEST_CASE("dht and dct entries are exactly zero where cas and cos vanish", "[coefficients]") {
  // ESOP skips zero coefficients, so a zero of the transform must not come out as 1e-17.
  // cas(2 pi m/8) = 0 for m = 3, 7.
  const CoeffMatrix h = triada::make_coefficients(TransformKind::dht, 8, Norm::ortho, false, "t");
  for (index_t n = 0; n < 8; ++n) {
    for (index_t k = 0; k < 8; ++k) {
      const index_t m = (n * k) % 8;
      if (m == 3 || m == 7) CHECK(h(n, k) == cplx(0.0, 0.0));
      if (m == 0) CHECK(h(n, k) == cplx(std::sqrt(0.125), 0.0));  // correctly rounded
    }
  }
  CHECK_FALSE(h.is_complex);
  // cos(pi (2n+1) k / 2N) = 0 when (2n+1) k = N (mod 2N): N = 3, n = 1, k = 1.
  const CoeffMatrix d =
      triada::make_coefficients(TransformKind::dct, 3, Norm::backward, false, "t");
  CHECK(d(1, 1) == cplx(0.0, 0.0));
  CHECK(d(0, 0) == cplx(2.0, 0.0));
  CHECK_FALSE(d.is_complex);
}

TEST_CASE("wht backward entries are exactly (-1)^popcount(n & k)", "[coefficients]") {
  for (const index_t n : {1, 2, 4, 8, 64}) {
    for (const bool inverse : {false, true}) {
      INFO("N=" << n << " inverse=" << inverse);
      const CoeffMatrix c =
          triada::make_coefficients(TransformKind::wht, n, Norm::backward, inverse, "t");
      const double mag = inverse ? 1.0 / static_cast<double>(n) : 1.0;
      CHECK_FALSE(c.is_complex);
      for (index_t r = 0; r < n; ++r) {
        for (index_t k = 0; k < n; ++k) {
          const bool odd = std::popcount(static_cast<std::uint64_t>(r & k)) % 2 != 0;
          REQUIRE(c(r, k) == cplx(odd ? -mag : mag, 0.0));
        }
      }
    }
  }
}

TEST_CASE("forward-norm matrices move backward's scale from the inverse to the forward",
          "[coefficients]") {
  // numpy/scipy norm="forward": the forward is the backward forward / s and the inverse the
  // backward inverse * s, s = N (dft, dht, wht) or 2N (scipy's dct).
  for (const TransformKind kind : kBuiltIns) {
    for (const index_t n : {1, 2, 4, 5, 8, 12}) {
      if (kind == TransformKind::wht && !std::has_single_bit(static_cast<std::uint64_t>(n))) {
        continue;
      }
      const double s = static_cast<double>(kind == TransformKind::dct ? 2 * n : n);
      for (const bool inverse : {false, true}) {
        INFO(triada::to_string(kind) << " N=" << n << " inverse=" << inverse);
        const CoeffMatrix f = triada::make_coefficients(kind, n, Norm::forward, inverse, "t");
        const CoeffMatrix b = triada::make_coefficients(kind, n, Norm::backward, inverse, "t");
        const double factor = inverse ? s : 1.0 / s;
        double worst = 0.0;
        for (size_t i = 0; i < f.data.size(); ++i)
          worst = std::max(worst, std::abs(f.data[i] - b.data[i] * factor));
        CHECK(worst <= 1e-15 * (inverse ? s : 1.0));
        CHECK(f.is_complex == b.is_complex);
      }
    }
  }
}

TEST_CASE("wht ortho matrices have orthonormal rows", "[coefficients]") {
  for (const index_t n : {1, 2, 4, 8, 64}) {
    INFO("N=" << n);
    const CoeffMatrix c = triada::make_coefficients(TransformKind::wht, n, Norm::ortho, false, "t");
    CHECK(distance_from_identity(c, c, true) <= 1e-13);
  }
}

TEST_CASE("wht of a size that is not a power of two is an input error", "[coefficients]") {
  REQUIRE_THROWS_AS(triada::make_coefficients(TransformKind::wht, 12, Norm::ortho, false, "axis 2"),
                    triada::input_error);
  REQUIRE_THROWS_WITH(
      triada::make_coefficients(TransformKind::wht, 12, Norm::ortho, false, "axis 2"),
      Catch::Contains("axis 2") && Catch::Contains("power-of-two") && Catch::Contains("12"));
}

TEST_CASE("a transform size below 1 is an input error", "[coefficients]") {
  REQUIRE_THROWS_AS(triada::make_coefficients(TransformKind::dft, 0, Norm::ortho, false, "t"),
                    triada::input_error);
}

TEST_CASE("gemt matrices are not built in", "[coefficients]") {
  REQUIRE_THROWS_AS(triada::make_coefficients(TransformKind::gemt, 4, Norm::ortho, false, "t"),
                    triada::config_error);
}

TEST_CASE("forward matrix times inverse matrix is the identity for every kind and norm",
          "[coefficients]") {
  for (const TransformKind kind : kBuiltIns) {
    for (const Norm norm : kNorms) {
      for (const index_t n : {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 31, 32}) {
        if (kind == TransformKind::wht && !std::has_single_bit(static_cast<std::uint64_t>(n))) {
          continue;
        }
        INFO(triada::to_string(kind) << " N=" << n << " norm=" << triada::to_string(norm));
        const CoeffMatrix f = triada::make_coefficients(kind, n, norm, false, "t");
        const CoeffMatrix g = triada::make_coefficients(kind, n, norm, true, "t");
        CHECK(distance_from_identity(f, g, false) <= 1e-13);
      }
    }
  }
}

TEST_CASE("ortho matrices are unitary", "[coefficients]") {
  for (const TransformKind kind : kBuiltIns) {
    for (const bool inverse : {false, true}) {
      for (const index_t n : {1, 2, 3, 4, 7, 8, 12, 16, 31}) {
        if (kind == TransformKind::wht && !std::has_single_bit(static_cast<std::uint64_t>(n))) {
          continue;
        }
        INFO(triada::to_string(kind) << " N=" << n << " inverse=" << inverse);
        const CoeffMatrix c = triada::make_coefficients(kind, n, Norm::ortho, inverse, "t");
        CHECK(distance_from_identity(c, c, true) <= 1e-13);
      }
    }
  }
}

namespace {

// A random diagonally dominant (so well-conditioned) n x n matrix.
CoeffMatrix dominant_matrix(index_t n, std::uint64_t seed, bool complex_values) {
  CoeffMatrix a;
  a.rows = n;
  a.cols = n;
  a.is_complex = complex_values;
  a.data = triada::test::random_tensor({n, n, 1}, seed, 0.0, complex_values, false);
  for (index_t i = 0; i < n; ++i) a(i, i) += static_cast<double>(n) + 1.0;
  return a;
}

}  // namespace

TEST_CASE("invert gives the inverse of a well-conditioned complex matrix", "[coefficients]") {
  for (const index_t n : {1, 2, 5, 17, 40}) {
    INFO("N=" << n);
    const CoeffMatrix a = dominant_matrix(n, 7 + static_cast<std::uint64_t>(n), true);
    const CoeffMatrix inv = triada::invert(a, "t");
    CHECK(inv.is_complex);
    CHECK(distance_from_identity(a, inv, false) <= 1e-12);
  }
}

TEST_CASE("invert gives the inverse of a well-conditioned real matrix", "[coefficients]") {
  for (const index_t n : {1, 3, 8, 33}) {
    INFO("N=" << n);
    const CoeffMatrix a = dominant_matrix(n, 99 + static_cast<std::uint64_t>(n), false);
    const CoeffMatrix inv = triada::invert(a, "t");
    CHECK_FALSE(inv.is_complex);
    CHECK(distance_from_identity(a, inv, false) <= 1e-12);
    for (const cplx& v : inv.data) REQUIRE(v.imag() == 0.0);
  }
}

TEST_CASE("invert needs row pivoting when the leading entry is zero", "[coefficients]") {
  CoeffMatrix a;
  a.rows = a.cols = 2;
  a.data = {0.0, 1.0, 1.0, 0.0};
  const CoeffMatrix inv = triada::invert(a, "t");
  CHECK(distance_from_identity(a, inv, false) == 0.0);
}

TEST_CASE("invert rejects a singular matrix", "[coefficients]") {
  CoeffMatrix a;
  a.rows = a.cols = 3;
  a.data = {1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0};  // rank 2
  REQUIRE_THROWS_AS(triada::invert(a, "c.h5:/C1"), triada::input_error);
  REQUIRE_THROWS_WITH(triada::invert(a, "c.h5:/C1"),
                      Catch::Contains("c.h5:/C1") && Catch::Contains("singular"));
  CoeffMatrix z;
  z.rows = z.cols = 2;
  z.data.assign(4, cplx(0.0, 0.0));
  REQUIRE_THROWS_AS(triada::invert(z, "t"), triada::input_error);
}

TEST_CASE("invert rejects a non-square matrix", "[coefficients]") {
  CoeffMatrix a;
  a.rows = 2;
  a.cols = 3;
  a.data.assign(6, cplx(1.0, 0.0));
  REQUIRE_THROWS_AS(triada::invert(a, "t"), triada::input_error);
  REQUIRE_THROWS_WITH(triada::invert(a, "t"), Catch::Contains("not square (2x3)"));
}

TEST_CASE("parse_transform rejects an unknown word with a config error", "[coefficients]") {
  REQUIRE_THROWS_AS(triada::parse_transform("foo"), triada::config_error);
  REQUIRE_THROWS_WITH(triada::parse_transform("foo"), Catch::Contains("'foo'"));
  REQUIRE_THROWS_AS(triada::parse_norm("unitary"), triada::config_error);
  REQUIRE_THROWS_WITH(triada::parse_norm("unitary"), Catch::Contains("ortho, backward or forward"));
}

TEST_CASE("transform and norm names round-trip through parse and to_string", "[coefficients]") {
  for (const TransformKind k : {TransformKind::dft, TransformKind::dct, TransformKind::dht,
                                TransformKind::wht, TransformKind::gemt}) {
    CHECK(triada::parse_transform(triada::to_string(k)) == k);
  }
  for (const Norm n : kNorms) CHECK(triada::parse_norm(triada::to_string(n)) == n);
}

// ---- The oracle itself, on cases small enough to work out by hand. ----

TEST_CASE("oracle dft backward of [a, b] along axis 1 is [a+b, a-b]", "[oracle]") {
  const std::vector<cplx> x{{3.0, 1.0}, {5.0, -2.0}};
  const auto y = triada::test::oracle_transform(
      x, {2, 1, 1}, {TransformKind::dft, TransformKind::dft, TransformKind::dft}, Norm::backward,
      false);
  REQUIRE(y.size() == 2);
  CHECK(y[0] == cplx(8.0, -1.0));
  CHECK(y[1] == cplx(-2.0, 3.0));
}

TEST_CASE("oracle dft backward inverse of size 4 divides by N", "[oracle]") {
  // numpy.fft.ifft([4, 0, 0, 0]) == [1, 1, 1, 1]
  const std::vector<cplx> x{4.0, 0.0, 0.0, 0.0};
  const auto y = triada::test::oracle_transform(
      x, {1, 4, 1}, {TransformKind::dft, TransformKind::dft, TransformKind::dft}, Norm::backward,
      true);
  for (const cplx& v : y) CHECK(std::abs(v - cplx(1.0, 0.0)) <= 1e-15);
}

TEST_CASE("oracle wht along axis 3 of size 2 is [a+b, a-b], scaled by 1/sqrt2 in ortho",
          "[oracle]") {
  const std::vector<cplx> x{{2.0, 1.0}, {6.0, 0.0}};
  const std::array<TransformKind, 3> kinds{TransformKind::dft, TransformKind::dft,
                                           TransformKind::wht};
  const auto b = triada::test::oracle_transform(x, {1, 1, 2}, kinds, Norm::backward, false);
  CHECK(b[0] == cplx(8.0, 1.0));
  CHECK(b[1] == cplx(-4.0, 1.0));
  const auto o = triada::test::oracle_transform(x, {1, 1, 2}, kinds, Norm::ortho, false);
  const double s = 1.0 / std::sqrt(2.0);
  CHECK(std::abs(o[0] - cplx(8.0, 1.0) * s) <= 1e-15);
  CHECK(std::abs(o[1] - cplx(-4.0, 1.0) * s) <= 1e-15);
}

TEST_CASE("oracle dct backward of size 2 is scipy's [2(a+b), sqrt2 (a-b)]", "[oracle]") {
  const std::vector<cplx> x{{1.0, 2.0}, {3.0, -1.0}};
  const auto y = triada::test::oracle_transform(
      x, {1, 2, 1}, {TransformKind::dft, TransformKind::dct, TransformKind::dft}, Norm::backward,
      false);
  CHECK(std::abs(y[0] - cplx(8.0, 2.0)) <= 1e-14);
  CHECK(std::abs(y[1] - std::sqrt(2.0) * cplx(-2.0, 3.0)) <= 1e-14);
  // scipy.fft.idct undoes it.
  const auto back = triada::test::oracle_transform(
      y, {1, 2, 1}, {TransformKind::dft, TransformKind::dct, TransformKind::dft}, Norm::backward,
      true);
  CHECK(triada::test::max_rel_error(back, x) <= 1e-15);
}

TEST_CASE("oracle dht of size 4 is the cas sum", "[oracle]") {
  // cas(2 pi nk/4) for n, k in 0..3: rows [1 1 1 1], [1 1 -1 -1], [1 -1 1 -1], [1 -1 -1 1].
  const std::vector<cplx> x{1.0, 2.0, 3.0, 4.0};
  const auto y = triada::test::oracle_transform(
      x, {4, 1, 1}, {TransformKind::dht, TransformKind::dft, TransformKind::dft}, Norm::backward,
      false);
  const std::vector<cplx> want{10.0, -4.0, -2.0, 0.0};
  CHECK(triada::test::max_rel_error(y, want) <= 1e-15);
}

TEST_CASE("oracle transforms every axis of a 3D tensor", "[oracle]") {
  // A constant 2x2x2 tensor of ones: backward dft along all axes gives 8 at the origin.
  const std::vector<cplx> x(8, cplx(1.0, 0.0));
  const auto y = triada::test::oracle_transform(
      x, {2, 2, 2}, {TransformKind::dft, TransformKind::wht, TransformKind::dht}, Norm::backward,
      false);
  std::vector<cplx> want(8, cplx(0.0, 0.0));
  want[0] = 8.0;
  CHECK(triada::test::max_rel_error(y, want) <= 1e-15);
}

TEST_CASE("oracle_gemt computes the 3-mode product of hand-sized matrices", "[oracle]") {
  // X of shape (2,1,1) = [1, 2]; C1 = [[1, 0, 2], [3, 1, 0]] (2x3), C2 = [[2]], C3 = [[-1, 1]].
  CoeffMatrix c1;
  c1.rows = 2;
  c1.cols = 3;
  c1.data = {1.0, 0.0, 2.0, 3.0, 1.0, 0.0};
  CoeffMatrix c2;
  c2.rows = c2.cols = 1;
  c2.data = {2.0};
  CoeffMatrix c3;
  c3.rows = 1;
  c3.cols = 2;
  c3.data = {-1.0, cplx(0.0, 1.0)};
  const std::vector<cplx> x{1.0, 2.0};
  const auto y = triada::test::oracle_gemt(x, {2, 1, 1}, {&c1, &c2, &c3});
  // stage 1: [7, 2, 2]; stage 2: [14, 4, 4]; stage 3: each v -> [-v, i v].
  const std::vector<cplx> want{-14.0, {0.0, 14.0}, -4.0, {0.0, 4.0}, -4.0, {0.0, 4.0}};
  REQUIRE(y.size() == want.size());
  for (std::size_t i = 0; i < y.size(); ++i) CHECK(y[i] == want[i]);
}

TEST_CASE("max_rel_error against an all-zero reference is the largest |got|", "[oracle]") {
  CHECK(triada::test::max_rel_error({cplx(0.0, 0.0), cplx(3.0, 4.0)}, {0.0, 0.0}) == 5.0);
  CHECK(triada::test::max_rel_error({1.0, 2.0}, {1.0, 4.0}) == 0.5);
  CHECK_THROWS_AS(triada::test::max_rel_error({1.0}, {1.0, 2.0}), std::logic_error);
}

TEST_CASE("random_tensor is deterministic and honours its options", "[oracle]") {
  const triada::ext3 shape{4, 5, 6};
  const auto a = triada::test::random_tensor(shape, 42, 0.5, false, true);
  CHECK(a == triada::test::random_tensor(shape, 42, 0.5, false, true));
  CHECK(a != triada::test::random_tensor(shape, 43, 0.5, false, true));
  std::size_t zeros = 0;
  for (const cplx& v : a) {
    CHECK(v.imag() == 0.0);
    CHECK(v.real() == std::round(v.real()));
    CHECK(std::abs(v.real()) <= 8.0);
    if (v == cplx(0.0, 0.0)) ++zeros;
  }
  CHECK(zeros >= 40);  // about 60 of 120 expected (half zeroed, plus integer zeros)
  const auto c = triada::test::random_tensor(shape, 1, 0.0, true, false);
  bool any_imag = false;
  for (const cplx& v : c) any_imag = any_imag || v.imag() != 0.0;
  CHECK(any_imag);
}
