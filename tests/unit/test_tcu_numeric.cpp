// The numeric TCU algorithms (Theorems 7-11) against independent oracles: FFTW for the DFT,
// direct iteration for stencils, GMP for integer products, Horner for polynomials.
#include <fftw3.h>
#include <gmp.h>

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_numeric.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

const std::int64_t kUnitSizes[] = {4, 16, 64, 256};

std::vector<cplx> fftw_forward(const std::vector<cplx>& x) {
  const int n = static_cast<int>(x.size());
  std::vector<cplx> in(x), out(x.size());
  fftw_plan plan =
      fftw_plan_dft_1d(n, reinterpret_cast<fftw_complex*>(in.data()),
                       reinterpret_cast<fftw_complex*>(out.data()), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(plan);
  fftw_destroy_plan(plan);
  return out;
}

double rel_error(const std::vector<cplx>& y, const std::vector<cplx>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    err = std::max(err, std::abs(y[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

// Direct iteration on the window padded by k zeros per side (the whole-plane stencil).
std::vector<double> stencil_by_iteration(const std::vector<double>& A, index_t N, index_t k,
                                         const StencilKernel& w) {
  const index_t G = N + 2 * k;
  std::vector<double> cur(static_cast<size_t>(G * G), 0.0), nxt(cur.size(), 0.0);
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) cur[(i + k) * G + j + k] = A[i * N + j];
  for (index_t t = 0; t < k; ++t) {
    for (index_t i = 1; i + 1 < G; ++i)
      for (index_t j = 1; j + 1 < G; ++j) {
        double acc = 0;
        for (index_t a = 0; a < 3; ++a)
          for (index_t b = 0; b < 3; ++b) acc += w[a * 3 + b] * cur[(i + a - 1) * G + j + b - 1];
        nxt[i * G + j] = acc;
      }
    cur.swap(nxt);
  }
  std::vector<double> out(static_cast<size_t>(N * N));
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) out[i * N + j] = cur[(i + k) * G + j + k];
  return out;
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

TEST_CASE("dft equals FFTW for every power of sqrt(m) up to 4096 points", "[tcu][dft]") {
  for (const std::int64_t m : kUnitSizes) {
    TensorUnit unit(m, 5);
    for (index_t n = 1; n <= 4096; n *= unit.side()) {
      std::mt19937_64 gen(static_cast<std::uint64_t>(m + n));
      std::uniform_real_distribution<double> d(-1, 1);
      std::vector<cplx> x(static_cast<size_t>(n));
      for (auto& v : x) v = {d(gen), d(gen)};
      const std::vector<cplx> y = tcu_dft_vector(unit, x);
      INFO("m = " << m << ", n = " << n);
      CHECK(rel_error(y, fftw_forward(x)) <= 1e-9);
    }
  }
}

TEST_CASE("dft runs verify themselves and report their levels", "[tcu][dft]") {
  TensorUnit unit(16, 10);
  const TcuRun r = tcu_dft(unit, TcuProblem{4096, 7, ""});
  CHECK(r.verified);
  CHECK(r.details["levels"] == 6);
  CHECK(r.details["max_rel_error"].get<double>() <= 1e-9);
  // 4 real tall products of (n/s) x s per level on a TCU (Theorem 7): 4 (n + l) each level.
  CHECK(unit.cost().calls == 24);
  CHECK(unit.cost().tensor_time == 6 * 4 * (4096 + 10));
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

TEST_CASE("stencil equals direct iteration of the kernel k times", "[tcu][stencil]") {
  const StencilKernel w = stencil_default_kernel();
  for (const std::int64_t m : kUnitSizes)
    for (const index_t N : {1, 5, 17, 40})
      for (const index_t k : {index_t{1}, index_t{3}, stencil_default_sweeps(N, m)}) {
        TensorUnit unit(m, 3);
        std::mt19937_64 gen(static_cast<std::uint64_t>(N * 1000 + m + k));
        std::uniform_real_distribution<double> d(-1, 1);
        std::vector<double> A(static_cast<size_t>(N * N));
        for (auto& v : A) v = d(gen);
        nlohmann::json det;
        const auto got = tcu_stencil_matrix(unit, A, N, k, w, &det);
        const auto ref = stencil_by_iteration(A, N, k, w);
        double err = 0, scale = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
          err = std::max(err, std::abs(got[i] - ref[i]));
          scale = std::max(scale, std::abs(ref[i]));
        }
        INFO("m = " << m << ", N = " << N << ", k = " << k);
        CHECK(err <= 1e-9 * scale);
        CHECK(det["weight_matrix_rel_error"].get<double>() <= 1e-9);  // Lemma 2
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
  for (const std::int64_t m : kUnitSizes)
    for (const index_t bits : {1, 7, 64, 1000, 10000, 100000}) {
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
    // Real: the run's own Horner check (scaled error <= 1e-9).
    for (const index_t n : {3, 100, 1000}) {
      TensorUnit unit(m, 6);
      const TcuRun r = tcu_polyeval(unit, TcuProblem{n, 9, ""});
      INFO("m = " << m << ", n = " << n);
      CHECK(r.verified);
    }
  }
  TensorUnit unit(16, 0);
  CHECK_THROWS_AS(tcu_polyeval(unit, TcuProblem{0, 1, ""}), config_error);
}

TEST_CASE("model time grows between two sizes as the theorems predict (within 4x)",
          "[tcu][growth]") {
  struct Case {
    TcuRun (*run)(TensorUnit&, const TcuProblem&);
    double (*bound)(double, double, double);
    std::int64_t m;
    index_t n1, n2;
  };
  const Case cases[] = {{tcu_dft, bound_dft, 16, 1024, 16384},
                        {tcu_stencil, bound_stencil, 16, 16, 64},
                        {tcu_intmul, bound_intmul, 16, 5000, 20000},
                        {tcu_karatsuba, bound_karatsuba, 16, 5000, 40000},
                        {tcu_polyeval, bound_polyeval, 16, 256, 1024}};
  for (const auto& c : cases) {
    const auto [t1, n1] = model_time(c.run, c.m, 20, c.n1);
    const auto [t2, n2] = model_time(c.run, c.m, 20, c.n2);
    const double measured = t2 / t1;
    const double predicted =
        c.bound(n2, static_cast<double>(c.m), 20) / c.bound(n1, static_cast<double>(c.m), 20);
    INFO("sizes " << c.n1 << " -> " << c.n2 << ": measured " << measured << ", predicted "
                  << predicted);
    CHECK(measured <= 4 * predicted);
    CHECK(measured >= predicted / 4);
  }
}
