// The numeric TCU algorithms (Theorems 7-11) against independent oracles: a radix-2 FFT in
// long double for the DFT, direct iteration in long double for stencils, GMP for integer
// products, Horner for polynomials. The floating-point results are held to worst-case
// rounding-error bounds derived below (the "bounds" namespace), independently of the
// library's own (src/mxu/tcu_error_bounds.cpp), which the runs' self-checks use and which
// the tests compare with these.
#include <gmp.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_numeric.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

const std::int64_t kUnitSizes[] = {4, 16, 64, 256};

// ---- Worst-case rounding-error bounds (Higham, "Accuracy and Stability of Numerical
// Algorithms", 2nd ed.): fl(x op y) = (x op y)(1 + d), |d| <= u; gamma_k = k u / (1 - k u);
// a sum of k products in any order within gamma_k sum |x_i y_i| (Sec. 3.1); a complex
// product within sqrt(2) gamma_2 |x||y| (Lemma 3.5). cos and sin (binary64) within 1 ulp,
// cosl and sinl within 2 (glibc documents at most 1 for both). Underflow is not modelled.
namespace bounds {

const double kU = std::ldexp(1.0, -53);
const double kUL = std::numeric_limits<long double>::epsilon() / 2;

double gam(double k, double u = kU) {
  return k * u / (1.0 - k * u);
}
double grow(double e, double k) {  // (1 + e)^k - 1
  return std::expm1(k * std::log1p(e));
}
index_t levels(index_t n, index_t s) {
  index_t d = 0;
  for (index_t v = 1; v < n; v *= s) ++d;
  return d;
}
index_t power_at_least(index_t v, index_t s) {
  index_t L = s;
  while (L < v) L *= s;
  return L;
}
// A twiddle cos + i sin of the angle (2 pi) e / n: the angle within gamma_3 2 pi, each part
// within 2 pi gamma_3 + ulps u.
double twiddle(double u, double ulps) {
  return std::sqrt(2.0) * (2.0 * std::numbers::pi * gam(3, u) + ulps * u);
}

// One level of the TCU DFT (s-point DFTs by the unit, then twiddles). An output of the s-point
// DFT sums 2s real products per part (4 real unit products, accumulated): within
// sqrt(2) gamma_2s (1 + mu) ||v||_1, plus mu ||v||_1 from W_s's entries (eD); a twiddle
// product: sqrt(2) gamma_2 (1 + mu) + mu (eT).
struct Level {
  double d, t;
};
Level level(index_t s) {
  const double mu = twiddle(kU, 1);
  return {std::sqrt(2.0) * gam(2.0 * static_cast<double>(s)) * (1 + mu) + mu,
          std::sqrt(2.0) * gam(2) * (1 + mu) + mu};
}
// Componentwise: the levels' matrices have entries of modulus 1 and one path joins each input
// to each output, so |y_hat_k - y_k| <= ((1 + e)^d - 1) ||x||_1, e = (1 + eD)(1 + eT) - 1.
double dft_componentwise(index_t n, index_t s) {
  const Level e = level(s);
  return grow((1 + e.d) * (1 + e.t) - 1, static_cast<double>(levels(n, s)));
}
// 2-norm: a block's error sqrt(s) eD ||v||_1 <= s eD ||v||_2 = sqrt(s) eD ||F_s v||_2, and each
// level is sqrt(s) times a unitary matrix: ||y_hat - y||_2 <= ((1 + e)^d - 1) ||y||_2 with
// e = (1 + sqrt(s) eD)(1 + eT) - 1 (Higham, proof of Theorem 24.2).
double dft_norm(index_t n, index_t s) {
  const Level e = level(s);
  const double es = (1 + std::sqrt(static_cast<double>(s)) * e.d) * (1 + e.t) - 1;
  return grow(es, static_cast<double>(levels(n, s)));
}
// The long double radix-2 oracle: Higham Theorem 24.2, t = log2 n levels,
// ||y_hat - y||_2 / ||y||_2 <= t eta / (1 - t eta), eta = mu + gamma_4 (sqrt(2) + mu).
double radix2(index_t n) {
  const double mu = twiddle(kUL, 2), t = static_cast<double>(levels(n, 2));
  const double eta = mu + gam(4, kUL) * (std::sqrt(2.0) + mu);
  return t * eta / (1 - t * eta);
}

// A 2D DFT of side L (2 log_s L levels): per entry delta ||f||_1, in the 2-norm beta.
std::pair<double, double> dft2(index_t L, index_t s) {
  const Level e = level(s);
  const auto lv = static_cast<double>(2 * levels(L, s));
  return {grow((1 + e.d) * (1 + e.t) - 1, lv),
          grow((1 + std::sqrt(static_cast<double>(s)) * e.d) * (1 + e.t) - 1, lv)};
}
// Lemma 2: E_u >= ||W_hat_u - P^u||_1 along P^u = (P^h)^2 P^(u mod 2), h = u / 2, p = ||P||_1.
// Squaring f_hat = P^h + D by DFTs of side L >= 2d - 1 (d = 2h + 1): (f_hat)^2 - f^2 = D (2f + D)
// gives E_h (2 p^h + E_h) (Young's inequality); the spectrum A_hat within delta F per entry
// (F = p^h + E_h >= ||f_hat||_1, |A| <= F), its square within c F^2 per entry,
// c = (1 + delta)^2 (1 + sqrt(2) gamma_2) - 1, so L c F^2 in the 2-norm; the inverse DFT adds
// beta L ||S_hat||_2 <= beta L^2 (1 + c) F^2 and the 1/L^2 scaling one rounding:
// ||g_hat - f_hat^2||_2 <= (c + beta (1 + c))(1 + u) F^2, and ||.||_1 <= (2d - 1) ||.||_2 on the
// kept (2d - 1)^2 entries. The odd step (9 products per entry): p E + gamma_9 p (p^(2h) + E).
double weights(index_t u, index_t s, double p) {
  if (u <= 1) return 0.0;
  const index_t h = u / 2, out = 4 * h + 1;
  const double eh = weights(h, s, p), ah = std::pow(p, h), F = ah + eh;
  const auto [delta, beta] = dft2(power_at_least(out, s), s);
  const double c = (1 + delta) * (1 + delta) * (1 + std::sqrt(2.0) * gam(2)) - 1;
  const double e2 =
      eh * (2 * ah + eh) + static_cast<double>(out) * (c + beta * (1 + c)) * (1 + kU) * F * F;
  return u % 2 == 0 ? e2 : p * e2 + gam(9) * p * (std::pow(p, 2 * h) + e2);
}
// Lemma 1: one circular convolution of side L >= 3k per k x k block a (3k x 3k neighbourhood)
// with W_hat (||W_hat - W||_1 <= E, ||W_hat||_1 <= om): Young gives ||a||_2 E; the spectrum of
// W_hat scaled by 1/L^2 within dw om per entry, dw = (1 + delta)(1 + u) - 1; F a within
// beta L ||a||_2; the point-wise products within sqrt(2) gamma_2: the product spectrum within
// tau om ||a||_2 / L, tau = beta (1 + dw) + dw + sqrt(2) gamma_2 (1 + beta)(1 + dw); the inverse
// DFT adds beta (1 + tau) om ||a||_2. Each entry of A is in at most 9 neighbourhoods:
// ||A_k_hat - A_k||_F <= 3 (E + om (tau + beta (1 + tau))) ||A||_F.
double convolutions(index_t k, index_t s, double E, double om) {
  const auto [delta, beta] = dft2(power_at_least(3 * k, s), s);
  const double dw = (1 + delta) * (1 + kU) - 1;
  const double tau = beta * (1 + dw) + dw + std::sqrt(2.0) * gam(2) * (1 + beta) * (1 + dw);
  return 3 * (E + om * (tau + beta * (1 + tau)));
}
// k sweeps of direct iteration (9 products per entry) in unit roundoff u: by Young,
// ((1 + gamma_9)^k - 1) p^k, relative to ||A||_F (or to 1 for W unrolled from 1).
double iteration(index_t k, double p, double u) {
  return grow(gam(9, u), static_cast<double>(k)) * std::pow(p, k);
}

}  // namespace bounds

using lcplx = std::complex<long double>;

// Radix-2 decimation-in-time FFT in long double (n a power of 2): y_k = sum_j x_j e^{-2 pi i jk/n}.
void fft_ld(std::vector<lcplx>& a) {
  const size_t n = a.size();
  if (n == 1) return;
  std::vector<lcplx> even(n / 2), odd(n / 2);
  for (size_t i = 0; i < n / 2; ++i) {
    even[i] = a[2 * i];
    odd[i] = a[2 * i + 1];
  }
  fft_ld(even);
  fft_ld(odd);
  const long double pi = std::numbers::pi_v<long double>;
  for (size_t k = 0; k < n / 2; ++k) {
    const long double th = -2.0L * pi * static_cast<long double>(k) / static_cast<long double>(n);
    const lcplx t = lcplx(std::cos(th), std::sin(th)) * odd[k];
    a[k] = even[k] + t;
    a[k + n / 2] = even[k] - t;
  }
}

long double norm2(const std::vector<lcplx>& v) {
  long double s = 0;
  for (const lcplx& z : v) s += std::norm(z);
  return std::sqrt(s);
}

// Direct iteration on the window padded by k zeros per side (the whole-plane stencil), in
// long double.
std::vector<long double> stencil_by_iteration(const std::vector<double>& A, index_t N, index_t k,
                                              const StencilKernel& w) {
  const index_t G = N + 2 * k;
  std::vector<long double> cur(static_cast<size_t>(G * G), 0.0L), nxt(cur.size(), 0.0L);
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) cur[(i + k) * G + j + k] = A[i * N + j];
  for (index_t t = 0; t < k; ++t) {
    for (index_t i = 1; i + 1 < G; ++i)
      for (index_t j = 1; j + 1 < G; ++j) {
        long double acc = 0;
        for (index_t a = 0; a < 3; ++a)
          for (index_t b = 0; b < 3; ++b) acc += w[a * 3 + b] * cur[(i + a - 1) * G + j + b - 1];
        nxt[i * G + j] = acc;
      }
    cur.swap(nxt);
  }
  std::vector<long double> out(static_cast<size_t>(N * N));
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) out[i * N + j] = cur[(i + k) * G + j + k];
  return out;
}

// W = P^k by k multiplications by the 3 x 3 kernel, in long double: (2k+1) x (2k+1).
std::vector<long double> weights_by_unrolling(const StencilKernel& w, index_t k) {
  std::vector<long double> cur{1.0L};
  for (index_t d = 1; d < 2 * k + 1; d += 2) {
    std::vector<long double> nxt(static_cast<size_t>((d + 2) * (d + 2)), 0.0L);
    for (index_t i = 0; i < d; ++i)
      for (index_t j = 0; j < d; ++j)
        for (index_t a = 0; a < 3; ++a)
          for (index_t b = 0; b < 3; ++b)
            nxt[(i + a) * (d + 2) + j + b] += cur[i * d + j] * w[a * 3 + b];
    cur.swap(nxt);
  }
  return cur;
}

// sum |x - ref| (p = 1) or the 2-norm of x - ref (p = 2).
double norm_diff(const std::vector<double>& x, const std::vector<long double>& ref, int p) {
  long double acc = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double d = std::fabs(x[i] - ref[i]);
    acc += p == 1 ? d : d * d;
  }
  return static_cast<double>(p == 1 ? acc : std::sqrt(acc));
}

std::vector<std::uint64_t> random_words(std::mt19937_64& gen, index_t bits) {
  std::vector<std::uint64_t> w(static_cast<size_t>((bits + 63) / 64));
  for (auto& v : w) v = gen();
  if (bits % 64) w.back() &= (std::uint64_t{1} << (bits % 64)) - 1;
  w[(bits - 1) / 64] |= std::uint64_t{1} << ((bits - 1) % 64);
  return w;
}

// a * b by GMP, as |a| + |b| little-endian words.
std::vector<std::uint64_t> gmp_product(const std::vector<std::uint64_t>& a,
                                       const std::vector<std::uint64_t>& b) {
  mpz_t x, y, z;
  mpz_inits(x, y, z, nullptr);
  mpz_import(x, a.size(), -1, sizeof(std::uint64_t), 0, 0, a.data());
  mpz_import(y, b.size(), -1, sizeof(std::uint64_t), 0, 0, b.data());
  mpz_mul(z, x, y);
  std::vector<std::uint64_t> c(a.size() + b.size(), 0);
  size_t count = 0;
  mpz_export(c.data(), &count, -1, sizeof(std::uint64_t), 0, 0, z);
  mpz_clears(x, y, z, nullptr);
  return c;
}

// Model time of a verified run and the theorem's n (details.theorem_n, else the size).
std::pair<double, double> model_time(TcuRun (*run)(TensorUnit&, const TcuProblem&), std::int64_t m,
                                     std::int64_t l, index_t size) {
  TensorUnit unit(m, l);
  const TcuRun r = run(unit, TcuProblem{size, 3, ""});
  REQUIRE(r.verified);
  return {static_cast<double>(unit.cost().model_time()),
          r.details.value("theorem_n", static_cast<double>(size))};
}

}  // namespace

TEST_CASE("dft is within its error bounds of a long double FFT for every power of sqrt(m)",
          "[tcu][dft]") {
  for (const std::int64_t m : kUnitSizes) {
    TensorUnit unit(m, 5);
    const index_t s = unit.side();
    for (index_t n = 1; n <= 4096; n *= s) {
      std::mt19937_64 gen(static_cast<std::uint64_t>(m + n));
      std::uniform_real_distribution<double> d(-1, 1);
      std::vector<cplx> x(static_cast<size_t>(n));
      for (auto& v : x) v = {d(gen), d(gen)};
      const std::vector<cplx> y = tcu_dft_vector(unit, x);
      std::vector<lcplx> ref(x.begin(), x.end()), diff(x.size());
      fft_ld(ref);
      long double x1 = 0, worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        x1 += std::abs(lcplx(x[i]));
        diff[i] = lcplx(y[i]) - ref[i];
        worst = std::max(worst, std::abs(diff[i]));
      }
      // ||y_hat - ref|| <= ||y_hat - y|| + ||y - ref|| and ||y|| <= ||ref|| / (1 - R).
      const double R = bounds::radix2(n), B2 = bounds::dft_norm(n, s);
      const double Bc = bounds::dft_componentwise(n, s);
      const auto yn = static_cast<double>(norm2(ref));
      INFO("m = " << m << ", n = " << n << ": 2-norm error " << norm2(diff) / norm2(ref)
                  << " (bound " << (B2 + R) / (1 - R) << "), worst output " << worst / x1
                  << " ||x||_1 (bound " << Bc << ")");
      CHECK(static_cast<double>(norm2(diff)) <= (B2 + R) / (1 - R) * yn);
      CHECK(static_cast<double>(worst) <= Bc * static_cast<double>(x1) + R / (1 - R) * yn);
      // The runs' self-checks use the library's bounds: the same numbers.
      CHECK(tcu_dft_error_bound(n, s) == Approx(Bc).epsilon(1e-12));
      CHECK(tcu_dft_norm_bound(n, s) == Approx(B2).epsilon(1e-12));
    }
  }
}

TEST_CASE("dft runs verify themselves against their error bound and report their levels",
          "[tcu][dft]") {
  TensorUnit unit(16, 10);
  const TcuRun r = tcu_dft(unit, TcuProblem{4096, 7, ""});
  CHECK(r.verified);
  CHECK(r.details["levels"] == 6);
  CHECK(r.details["max_rel_error"].get<double>() <= r.details["max_rel_error_bound"].get<double>());
  // 4 real tall products of (n/s) x s per level on a TCU (Theorem 7): 4 (n + l) each level.
  CHECK(unit.cost().calls == 24);
  CHECK(unit.cost().tensor_time == 6 * 4 * (4096 + 10));
}

TEST_CASE("the numeric runs' own checks fail on fp32 cells, which round beyond the fp64 bounds",
          "[tcu][dft][stencil][polyeval]") {
  for (TcuRun (*run)(TensorUnit&, const TcuProblem&) :
       {tcu_dft.run, tcu_stencil.run, tcu_polyeval.run}) {
    TensorUnit fp64(16, 0), fp32(16, 0, false, Mode::esop, CellMode::fp32);
    CHECK(run(fp64, TcuProblem{64, 3, ""}).verified);
    CHECK_FALSE(run(fp32, TcuProblem{64, 3, ""}).verified);
  }
}

TEST_CASE("dft on a weak unit computes the same vector with more, shorter calls", "[tcu][dft]") {
  std::vector<cplx> x(256);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = {static_cast<double>(i % 7), -static_cast<double>(i % 3)};
  TensorUnit tcu(16, 100), weak(16, 100, true);
  const auto a = tcu_dft_vector(tcu, x), b = tcu_dft_vector(weak, x);
  CHECK(a == b);
  CHECK(weak.cost().calls == 16 * tcu.cost().calls);  // 64 rows per product = 16 chunks
  CHECK(weak.cost().tensor_time - tcu.cost().tensor_time ==
        (weak.cost().calls - tcu.cost().calls) * 100);
}

TEST_CASE("dft refuses lengths that are not powers of sqrt(m)", "[tcu][dft][errors]") {
  TensorUnit unit(16, 0);
  CHECK_THROWS_AS(tcu_dft_vector(unit, std::vector<cplx>(12)), config_error);
  CHECK_THROWS_AS(tcu_dft_vector(unit, std::vector<cplx>(32)), config_error);
  CHECK_THROWS_AS(tcu_dft(unit, TcuProblem{0, 1, ""}), config_error);
  TensorUnit one(1, 0);
  CHECK_THROWS_AS(tcu_dft_vector(one, std::vector<cplx>(4)), config_error);
  CHECK_THROWS_WITH(tcu_dft(unit, TcuProblem{48, 1, ""}),
                    Catch::Contains("48") && Catch::Contains("sqrt(m) = 4"));
}

TEST_CASE("stencil is within its error bounds of direct iteration of the kernel k times",
          "[tcu][stencil]") {
  const StencilKernel w = stencil_default_kernel();
  double p = 0;
  for (const double v : w) p += std::abs(v);
  for (const std::int64_t m : kUnitSizes)
    for (const index_t N : {1, 5, 17, 40})
      for (const index_t k : {index_t{1}, index_t{3}, stencil_default_sweeps(N, m)}) {
        TensorUnit unit(m, 3);
        const index_t s = unit.side();
        std::mt19937_64 gen(static_cast<std::uint64_t>(N * 1000 + m + k));
        std::uniform_real_distribution<double> d(-1, 1);
        std::vector<double> A(static_cast<size_t>(N * N));
        for (auto& v : A) v = d(gen);
        const auto got = tcu_stencil_matrix(unit, A, N, k, w);
        TensorUnit unit2(m, 3);
        const std::vector<double> W = tcu_stencil_weights(unit2, w, k);
        const std::vector<long double> Wref = weights_by_unrolling(w, k);
        const std::vector<long double> zeros(A.size(), 0.0L), wzeros(W.size(), 0.0L);
        // Lemma 2 alone; then Lemma 1 given W_hat's measured error and norm (the oracles'
        // own errors, iteration() in long double, are added).
        const double eW = bounds::weights(k, s, p), oracleW = bounds::iteration(k, p, bounds::kUL);
        const double wErr = norm_diff(W, Wref, 1), wNorm = norm_diff(W, wzeros, 1);
        const double B = bounds::convolutions(k, s, wErr + oracleW, wNorm) +
                         bounds::iteration(k, p, bounds::kUL);
        const double err = norm_diff(got, stencil_by_iteration(A, N, k, w), 2);
        const double normA = norm_diff(A, zeros, 2);
        INFO("m = " << m << ", N = " << N << ", k = " << k << ": ||W_hat - W||_1 " << wErr
                    << " (bound " << eW << "), ||A_k_hat - A_k||_F " << err << " (bound "
                    << B * normA << ")");
        CHECK(wErr <= eW + oracleW);
        CHECK(err <= B * normA);
        // The runs' self-checks use the library's bounds: the same numbers.
        CHECK(tcu_stencil_weights_error_bound(k, s, p) == Approx(eW).epsilon(1e-12).margin(0));
        CHECK(tcu_stencil_error_bound(k, s, wErr, wNorm) ==
              Approx(bounds::convolutions(k, s, wErr, wNorm)).epsilon(1e-12));
        CHECK(unit.cost().calls > 0);
      }
}

TEST_CASE("stencil runs pick an even k whose neighbourhood fits the DFT and verify",
          "[tcu][stencil]") {
  CHECK(stencil_default_sweeps(100, 4) == 2);
  CHECK(stencil_default_sweeps(100, 16) == 4);
  CHECK(stencil_default_sweeps(100, 64) == 20);
  CHECK(stencil_default_sweeps(10, 64) == 2);
  CHECK(stencil_default_sweeps(100, 256) == 84);
  for (const std::int64_t m : kUnitSizes) {
    TensorUnit unit(m, 8);
    const TcuRun r = tcu_stencil(unit, TcuProblem{24, 5, ""});
    INFO("m = " << m);
    CHECK(r.verified);
    const auto k = r.details["k"].get<index_t>();
    CHECK(k % 2 == 0);
    CHECK(3 * k <= r.details["dft_length"].get<index_t>());
    CHECK(r.details["theorem_n"] == 24 * 24);  // Theorem 8's n is the number of entries
  }
  TensorUnit one(1, 0), unit(16, 0);
  CHECK_THROWS_AS(tcu_stencil(one, TcuProblem{8, 1, ""}), config_error);
  CHECK_THROWS_AS(tcu_stencil(unit, TcuProblem{0, 1, ""}), config_error);
}

TEST_CASE("intmul and karatsuba equal GMP on random integers of 1 to 100000 bits",
          "[tcu][intmul]") {
  // Under AddressSanitizer (tests at -O0, about 30x slower) up to 10000 bits: the same code
  // paths; the first pass runs 100000.
#if defined(__SANITIZE_ADDRESS__)
  const std::vector<index_t> sizes{1, 7, 64, 1000, 10000};
#else
  const std::vector<index_t> sizes{1, 7, 64, 1000, 10000, 100000};
#endif
  for (const std::int64_t m : kUnitSizes)
    for (const index_t bits : sizes) {
      std::mt19937_64 gen(static_cast<std::uint64_t>(bits * 7 + m));
      const auto a = random_words(gen, bits), b = random_words(gen, bits);
      const auto ref = gmp_product(a, b);
      TensorUnit u1(m, 4), u2(m, 4);
      INFO("m = " << m << ", bits = " << bits);
      CHECK(tcu_intmul_words(u1, a, b) == ref);
      CHECK(tcu_karatsuba_words(u2, a, b) == ref);
    }
  // Unbalanced operands and zero.
  std::mt19937_64 gen(11);
  const auto a = random_words(gen, 3000), b = random_words(gen, 70);
  TensorUnit unit(16, 0);
  CHECK(tcu_intmul_words(unit, a, b) == gmp_product(a, b));
  CHECK(tcu_karatsuba_words(unit, a, b) == gmp_product(a, b));
  const std::vector<std::uint64_t> zero{0, 0};
  CHECK(tcu_intmul_words(unit, a, zero) == gmp_product(a, zero));
}

TEST_CASE("intmul limbs keep every unit sum exact and its cost is Theorem 9's closed form",
          "[tcu][intmul]") {
  CHECK(intmul_kappa(1) == 26);
  CHECK(intmul_kappa(2) == 26);
  CHECK(intmul_kappa(4) == 25);
  CHECK(intmul_kappa(16) == 24);
  for (const index_t s : {1, 2, 4, 8, 16, 32, 64}) {
    const int kappa = intmul_kappa(s);
    CHECK(std::ldexp(static_cast<double>(s), 2 * kappa) <= std::ldexp(1.0, 53));
  }
  // n' = 10000 / 24 -> 417 limbs: q = 27 columns of B', 2 calls of r = 417 + 15 rows.
  TensorUnit unit(256, 9);
  const TcuRun r = tcu_intmul(unit, TcuProblem{10000, 2, ""});
  CHECK(r.verified);
  CHECK(r.details["kappa"] == 24);
  CHECK(r.details["limbs"] == 417);
  CHECK(unit.cost().calls == 2);
  CHECK(unit.cost().tensor_time == 2 * ((417 + 15) * 16 + 9));
}

TEST_CASE("karatsuba runs recurse to leaves of at most sqrt(m) limbs and verify", "[tcu][intmul]") {
  for (const std::int64_t m : kUnitSizes) {
    TensorUnit unit(m, 2);
    const TcuRun r = tcu_karatsuba(unit, TcuProblem{5000, 4, ""});
    INFO("m = " << m);
    CHECK(r.verified);
    CHECK(r.details["leaf_limbs"].get<index_t>() == std::max<index_t>(3, unit.side()));
    CHECK(unit.cost().calls == r.details["leaves"].get<std::uint64_t>());  // one call per leaf
  }
  TensorUnit unit(16, 0);
  CHECK_THROWS_AS(tcu_intmul(unit, TcuProblem{0, 1, ""}), config_error);
  CHECK_THROWS_AS(tcu_karatsuba(unit, TcuProblem{100001, 1, ""}), config_error);
}

TEST_CASE("polyeval equals Horner, exactly with small integers", "[tcu][polyeval]") {
  for (const std::int64_t m : kUnitSizes) {
    // Exact: integer coefficients in [-3, 3], points in [-2, 2], degree < 40 (< 2^53).
    std::mt19937_64 gen(static_cast<std::uint64_t>(m));
    std::uniform_int_distribution<int> dc(-3, 3), dx(-2, 2);
    for (const index_t n : {1, 5, 16, 39}) {
      std::vector<double> a(static_cast<size_t>(n)), x(static_cast<size_t>(n + 3));
      for (auto& v : a) v = dc(gen);
      for (auto& v : x) v = dx(gen);
      TensorUnit unit(m, 1);
      const auto y = tcu_polyeval_points(unit, a, x);
      for (size_t i = 0; i < x.size(); ++i) {
        double h = 0;
        for (size_t j = a.size(); j-- > 0;) h = h * x[i] + a[j];
        INFO("m = " << m << ", n = " << n << ", x = " << x[i]);
        CHECK(y[i] == h);
      }
    }
    // Real coefficients and points in [-1, 1] against Horner in long double. The term
    // a_h x^h, h = t + j s, meets at most h + s + q roundings (x^t, the unit's s products,
    // x^(j s), one product, q = ceil(n/s) column sums): within gamma_(n-1+s+q) sum |a_h||x|^h;
    // Horner's own 2n roundings (also in the scale) add gamma_2n in long double.
    for (const index_t n : {3, 100, 1000}) {
      std::uniform_real_distribution<double> d(-1, 1);
      std::vector<double> a(static_cast<size_t>(n)), x(static_cast<size_t>(n));
      for (auto& v : a) v = d(gen);
      for (auto& v : x) v = d(gen);
      TensorUnit unit(m, 6);
      const auto y = tcu_polyeval_points(unit, a, x);
      const index_t s = unit.side(), q = (n + s - 1) / s;
      const double g = bounds::gam(static_cast<double>(n - 1 + s + q));
      const double gl = bounds::gam(2.0 * static_cast<double>(n), bounds::kUL);
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        long double h = 0, mag = 0;
        for (size_t j = a.size(); j-- > 0;) {
          h = h * x[i] + a[j];
          mag = mag * std::fabs(x[i]) + std::fabs(a[j]);
        }
        worst = std::max(worst, static_cast<double>(std::fabs(y[i] - h) / mag));
      }
      INFO("m = " << m << ", n = " << n << ": scaled error " << worst << ", bound " << g);
      CHECK(worst <= (g + gl) / (1 - gl));
      CHECK(tcu_polyeval_error_bound(n, s) == Approx(g).epsilon(1e-12));
      TensorUnit unit2(m, 6);
      CHECK(tcu_polyeval(unit2, TcuProblem{n, 9, ""}).verified);  // the run's own check
    }
  }
  TensorUnit unit(16, 0);
  CHECK_THROWS_AS(tcu_polyeval(unit, TcuProblem{0, 1, ""}), config_error);
}

// Each theorem bounds the model time by a constant times its expression (constants 1 here):
// the ratio C(n) = model time / bound must settle to the algorithm's constant as n grows,
// moved only by the lower-order terms. Over three sizes (each step x2, dft x4) C moves one
// way with a shrinking step, and the first step stays within 8% (the steps measured at
// m = 16, l = 20: dft +6.6% then +3.4%, the twiddles' share (d - 1)/d of 12 (1 - 1/s) per
// level rising with the level count d; stencil -1.2%, -0.5%, Lemma 2 and the transform of W'
// costing the same at every size; intmul -3.9%, -2.0%, the short last calls and the
// n l / (kappa m) term fading; karatsuba +2.1%, +1.3%, the (h + 1)-limb middle products;
// polyeval +5.5%, +2.9%, the p sqrt(m) powers and the latency fading).
TEST_CASE("model time grows as the theorems predict, the constant settling", "[tcu][growth]") {
  struct Case {
    TcuRun (*run)(TensorUnit&, const TcuProblem&);
    double (*bound)(double, double, double);
    index_t n1, n2, n3;
  };
  const Case cases[] = {{tcu_dft.run, tcu_dft.bound, 256, 1024, 4096},
                        {tcu_stencil.run, tcu_stencil.bound, 8, 16, 32},
                        {tcu_intmul.run, tcu_intmul.bound, 2500, 5000, 10000},
                        {tcu_karatsuba.run, tcu_karatsuba.bound, 2500, 5000, 10000},
                        {tcu_polyeval.run, tcu_polyeval.bound, 128, 256, 512}};
  for (const auto& c : cases) {
    double C[3];
    int i = 0;
    for (const index_t size : {c.n1, c.n2, c.n3}) {
      const auto [t, n] = model_time(c.run, 16, 20, size);
      C[i++] = t / c.bound(n, 16, 20);
    }
    const double step1 = C[1] / C[0], step2 = C[2] / C[1];
    INFO("sizes " << c.n1 << ", " << c.n2 << ", " << c.n3 << ": model time / bound " << C[0] << ", "
                  << C[1] << ", " << C[2]);
    CHECK(std::abs(std::log(step1)) <= std::log(1.08));
    CHECK((step1 - 1) * (step2 - 1) > 0);  // the same direction
    CHECK(std::abs(std::log(step2)) < std::abs(std::log(step1)));
  }
}
