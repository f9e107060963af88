// Theorem 3's sparse product for any real values and the two products of Theorems 3 and 6:
// spmm against a direct triple loop written here (exact for integers and dyadic fractions,
// within the dot-product or Strassen error bound for reals, cancelled entries dropped),
// its tensor time against the closed form of the products its rounds report, apsd with
// either product against a BFS written here and against its closed-form tensor and CPU
// time, and the refusals.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_linear_algebra.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

using Dense = std::vector<long double>;
constexpr TcuProduct kProducts[] = {TcuProduct::fast, TcuProduct::classical};

std::int64_t isqrt(std::int64_t m) {
  return std::llround(std::sqrt(static_cast<double>(m)));
}
std::int64_t up(std::int64_t x, std::int64_t q) {
  return (x + q - 1) / q * q;
}

// The oracle: C and |A||B| by the definition, in long double (64-bit significand).
struct Oracle {
  Dense C, mag;
};
Oracle direct(const std::vector<SparseEntry>& A, const std::vector<SparseEntry>& B, index_t n) {
  Dense a(static_cast<size_t>(n * n), 0), b(a.size(), 0);
  for (const auto& e : A) a[static_cast<size_t>(e.row * n + e.col)] = e.v;
  for (const auto& e : B) b[static_cast<size_t>(e.row * n + e.col)] = e.v;
  Oracle o{Dense(a.size(), 0), Dense(a.size(), 0)};
  for (index_t i = 0; i < n; ++i)
    for (index_t k = 0; k < n; ++k)
      for (index_t j = 0; j < n; ++j) {
        const long double x = a[static_cast<size_t>(i * n + k)],
                          y = b[static_cast<size_t>(k * n + j)];
        o.C[static_cast<size_t>(i * n + j)] += x * y;
        o.mag[static_cast<size_t>(i * n + j)] += std::fabs(x * y);
      }
  return o;
}

// Random entries: about `per_row` per row, values from `value`.
template <class F>
std::vector<SparseEntry> entries(index_t n, int per_row, std::mt19937_64& gen, F value) {
  std::map<std::pair<index_t, index_t>, double> m;
  std::uniform_int_distribution<index_t> col(0, n - 1);
  for (index_t i = 0; i < n; ++i)
    for (int t = 0; t < per_row; ++t) m[{i, col(gen)}] = value(gen);
  std::vector<SparseEntry> out;
  for (const auto& [ij, v] : m) out.push_back({ij.first, ij.second, v});
  return out;
}

// The largest factor of u max|A| max|B| in Strassen's bound (Higham, Accuracy and Stability
// of Numerical Algorithms, Thm 23.2) over every block side D = s 2^k <= the side's, summed
// over the depth chunks plus their additions: what the fast product can lose.
double strassen_factor(index_t side, index_t s) {
  const index_t K = up(side, s);
  double worst = 0;
  for (index_t D = s;; D *= 2) {
    const double q = static_cast<double>((K + D - 1) / D);
    const double e = std::pow(static_cast<double>(D / s), std::log2(12.0)) *
                         (static_cast<double>(s * s) + 5.0 * static_cast<double>(s)) -
                     5.0 * static_cast<double>(D);
    worst = std::max(worst, q * e + q * (q - 1) * static_cast<double>(D));
    if (D >= side) break;
  }
  return worst;
}

// Compares the unit's C with the oracle: exactly, or within the bound for `product`.
void check_against_oracle(const std::vector<SparseEntry>& C, const std::vector<SparseEntry>& A,
                          const std::vector<SparseEntry>& B, index_t n, index_t s,
                          TcuProduct product, bool exact) {
  const Oracle o = direct(A, B, n);
  Dense got(o.C.size(), 0);
  for (const auto& e : C) {
    REQUIRE(e.v != 0);  // exact zeros are not entries
    got[static_cast<size_t>(e.row * n + e.col)] = e.v;
  }
  double ca = 0, rb = 0;  // the largest column sum of |A| and row sum of |B|
  std::vector<double> col(static_cast<size_t>(n), 0), row(static_cast<size_t>(n), 0);
  for (const auto& e : A) ca = std::max(ca, col[static_cast<size_t>(e.col)] += std::abs(e.v));
  for (const auto& e : B) rb = std::max(rb, row[static_cast<size_t>(e.row)] += std::abs(e.v));
  const double u = std::ldexp(1.0, -53), K = static_cast<double>(up(n, s));
  const double normwise = product == TcuProduct::fast ? strassen_factor(n, s) * u * ca * rb : 0;
  for (size_t e = 0; e < got.size(); ++e) {
    const double err = static_cast<double>(std::fabs(got[e] - o.C[e]));
    INFO("entry " << e << ": got " << static_cast<double>(got[e]) << ", oracle "
                  << static_cast<double>(o.C[e]));
    if (exact)
      CHECK(err == 0);
    else
      CHECK(err <= (K + 1) * u * static_cast<double>(o.mag[e]) + 1.01 * normwise);
  }
}

}  // namespace

TEST_CASE("spmm gives A B exactly for negative, zero, mixed and dyadic values", "[tcu][spmm]") {
  const auto small_int = [](std::mt19937_64& g) {
    return static_cast<double>(std::uniform_int_distribution<int>(-5, 5)(g));  // 0 included
  };
  const auto negative = [](std::mt19937_64& g) {
    return -static_cast<double>(std::uniform_int_distribution<int>(1, 7)(g));
  };
  const auto eighths = [](std::mt19937_64& g) {  // multiples of 1/8 in [-4, 4]
    return std::uniform_int_distribution<int>(-32, 32)(g) / 8.0;
  };
  for (const TcuProduct product : kProducts)
    for (const std::int64_t m : {4, 16, 64})
      for (const index_t n : {1, 7, 30, 61}) {
        std::mt19937_64 gen(static_cast<std::uint64_t>(n * 131 + m));
        INFO(to_string(product) << ", m = " << m << ", n = " << n);
        const auto A1 = entries(n, 3, gen, small_int), B1 = entries(n, 3, gen, small_int);
        const auto A2 = entries(n, 2, gen, negative), B2 = entries(n, 4, gen, negative);
        const auto A3 = entries(n, 3, gen, eighths), B3 = entries(n, 3, gen, eighths);
        for (const auto& [A, B] : {std::pair{A1, B1}, std::pair{A2, B2}, std::pair{A3, B3}}) {
          TensorUnit u(m, 3);
          const auto C = tcu_spmm_entries(u, A, B, n, 5, nullptr, product);
          check_against_oracle(C, A, B, n, u.side(), product, true);
        }
      }
}

TEST_CASE("spmm gives A B of real values within the product's error bound", "[tcu][spmm]") {
  const auto uniform = [](std::mt19937_64& g) {
    return std::uniform_real_distribution<double>(-1, 1)(g);
  };
  const auto scales = [](std::mt19937_64& g) {  // magnitudes 1e-3 .. 1e3, both signs
    const double e = std::uniform_real_distribution<double>(-3, 3)(g);
    return (g() % 2 ? 1 : -1) * std::pow(10.0, e);
  };
  for (const TcuProduct product : kProducts)
    for (const std::int64_t m : {4, 16, 256})
      for (const index_t n : {5, 40, 70}) {
        std::mt19937_64 gen(static_cast<std::uint64_t>(n * 7 + m));
        INFO(to_string(product) << ", m = " << m << ", n = " << n);
        const auto A1 = entries(n, 3, gen, uniform), B1 = entries(n, 3, gen, uniform);
        const auto A2 = entries(n, 4, gen, scales), B2 = entries(n, 2, gen, scales);
        for (const auto& [A, B] : {std::pair{A1, B1}, std::pair{A2, B2}}) {
          TensorUnit u(m, 1);
          const auto C = tcu_spmm_entries(u, A, B, n, 9, nullptr, product);
          check_against_oracle(C, A, B, n, u.side(), product, false);
        }
      }
}

TEST_CASE("spmm drops entries that cancel to zero and counts them", "[tcu][spmm]") {
  // Row 0 of A = [1, 1, 0, 0], column 0 of B = [2, -2, 0, 0]^T: C[0][0] = 0 although both
  // terms are nonzero; C[0][1] = 1 * 3 = 3 and C[2][3] = -0.5 * 4 = -2.
  const std::vector<SparseEntry> A{{0, 0, 1}, {0, 1, 1}, {2, 3, -0.5}};
  const std::vector<SparseEntry> B{{0, 0, 2}, {1, 0, -2}, {1, 1, 3}, {3, 3, 4}};
  for (const TcuProduct product : kProducts) {
    TensorUnit u(4, 0);
    nlohmann::json d;
    const auto C = tcu_spmm_entries(u, A, B, 4, 1, &d, product);
    const std::vector<SparseEntry> expect{{0, 1, 3}, {2, 3, -2}};
    CHECK(C == expect);
    CHECK(d["Z"] == 3);  // the structural nonzeros: (0,0), (0,1), (2,3)
    CHECK(d["nonzeros"] == 2);
    CHECK(d["cancelled"] == 1);
  }
}

TEST_CASE("spmm's tensor time is the closed form of the products its rounds report",
          "[tcu][spmm]") {
  for (const TcuProduct product : kProducts)
    for (const std::int64_t m : {4, 16, 64}) {
      const std::int64_t l = 7, s = isqrt(m);
      TensorUnit u(m, l);
      const TcuRun run = tcu_spmm(u, [&] {
        TcuProblem p{200, 3, ""};
        p.product = product;
        return p;
      }());
      INFO(to_string(product) << ", m = " << m);
      REQUIRE(run.verified);
      const std::int64_t K = up(200, s);
      // One product R x K by K x N: classical = (K/s)(N'/s) calls of max(R, s) rows
      // (N' = N up to a multiple of s); fast = (R/D)(N/D)(K/D) Strassen products of 7^k
      // calls of s rows, D = s 2^k the smallest >= min(R, K, N).
      const auto cost = [&](std::int64_t R, std::int64_t N) -> std::uint64_t {
        if (product == TcuProduct::classical)
          return static_cast<std::uint64_t>((K / s) * (up(N, s) / s) * (std::max(R, s) * s + l));
        std::int64_t D = s, calls = 1;
        while (D < std::min({R, K, N})) D *= 2, calls *= 7;
        const auto tiles = ((R + D - 1) / D) * ((N + D - 1) / D) * ((K + D - 1) / D);
        return static_cast<std::uint64_t>(tiles * calls * (m + l));
      };
      std::uint64_t want = 0;
      for (const auto& r : run.details["rounds"]) {
        const auto b = r["buckets"].get<std::int64_t>();
        want += cost(3 * b, b) + cost(b, 2 * b);  // [S0; S1; S2] and [T1, T2]
      }
      for (const auto& r : run.details["value_rounds"])
        want += cost(r["buckets"][0].get<std::int64_t>(), r["buckets"][1].get<std::int64_t>());
      CHECK(u.cost().tensor_time == want);
      // Theorem 3 with the run's Z and I, each product's omega_0.
      const double n = 200.0 * 200.0, Z = run.details["Z"].get<double>(),
                   I = run.details["I"].get<double>();
      for (const TcuProduct q : kProducts) {
        const double w0 = q == TcuProduct::fast ? std::log(7.0) / std::log(4.0) : 1.5;
        const double md = static_cast<double>(m), ld = static_cast<double>(l);
        const double bound = std::sqrt(n / Z) * std::pow(Z / md, w0) * (md + ld) + I;
        CHECK(run.details["bounds"][to_string(q)].get<double>() == Approx(bound).epsilon(1e-12));
        if (q == product) CHECK(*run.bound == Approx(bound).epsilon(1e-12));
      }
    }
}

TEST_CASE("spmm in a cell mode that cannot hold the count sketch reports, not throws",
          "[tcu][spmm]") {
  for (const TcuProduct product : kProducts) {
    TensorUnit u(16, 1, false, Mode::esop, CellMode::bf16);
    TcuProblem p{200, 1, ""};
    p.product = product;
    const TcuRun run = tcu_spmm(u, p);
    CHECK_FALSE(run.verified);
    CHECK(run.details.contains("failure"));
  }
}

TEST_CASE("spmm refuses entries outside the matrix, repeated or not finite",
          "[tcu][spmm][errors]") {
  TensorUnit u(4, 0);
  const std::vector<SparseEntry> ok{{0, 0, 1}};
  CHECK_THROWS_AS(tcu_spmm_entries(u, {{0, 2, 1}}, ok, 2, 1), input_error);
  CHECK_THROWS_AS(tcu_spmm_entries(u, ok, {{-1, 0, 1}}, 2, 1), input_error);
  CHECK_THROWS_AS(tcu_spmm_entries(u, {{0, 0, 1}, {0, 0, 2}}, ok, 2, 1), input_error);
  CHECK_THROWS_AS(tcu_spmm_entries(u, {{0, 0, std::nan("")}}, ok, 2, 1), input_error);
  CHECK_THROWS_AS(tcu_spmm_entries(u, ok, {{0, 0, HUGE_VAL}}, 2, 1), input_error);
  CHECK_THROWS_AS(tcu_spmm_entries(u, {{0, 0, 1e200}}, {{0, 0, 1e200}}, 2, 1), input_error);
  CHECK(tcu_spmm_entries(u, {{0, 0, 0.0}}, ok, 2, 1).empty());  // an explicit zero is no entry
}

namespace {
// BFS distances from every vertex of the graph with 0/1 adjacency `adj`.
std::vector<index_t> bfs(const std::vector<double>& adj, index_t n) {
  std::vector<index_t> d(static_cast<size_t>(n * n), -1);
  for (index_t v = 0; v < n; ++v) {
    std::vector<index_t> q{v};
    d[static_cast<size_t>(v * n + v)] = 0;
    for (size_t h = 0; h < q.size(); ++h)
      for (index_t w = 0; w < n; ++w)
        if (adj[static_cast<size_t>(q[h] * n + w)] != 0 && d[static_cast<size_t>(v * n + w)] < 0) {
          d[static_cast<size_t>(v * n + w)] = d[static_cast<size_t>(v * n + q[h])] + 1;
          q.push_back(w);
        }
  }
  return d;
}
}  // namespace

TEST_CASE("apsd equals BFS with either product, at the closed-form tensor and CPU time",
          "[tcu][apsd]") {
  for (const TcuProduct product : kProducts)
    for (const std::int64_t m : {1, 4, 16, 64})
      for (const index_t n : {2, 9, 40}) {
        // A cycle with chords every 5 vertices: connected, diameter about n / 10.
        std::vector<double> adj(static_cast<size_t>(n * n), 0.0);
        const auto link = [&](index_t a, index_t b) {
          adj[static_cast<size_t>(a * n + b)] = adj[static_cast<size_t>(b * n + a)] = 1;
        };
        for (index_t v = 0; v + 1 < n; ++v) link(v, v + 1);
        for (index_t v = 0; v + 5 < n; v += 5) link(v, v + 5);
        const std::int64_t l = 4, s = isqrt(m);
        TensorUnit u(m, l);
        int levels = 0;
        const auto D = tcu_seidel_apsd(u, adj, n, &levels, product);
        const auto ref = bfs(adj, n);
        INFO(to_string(product) << ", m = " << m << ", n = " << n);
        for (size_t e = 0; e < ref.size(); ++e) CHECK(D[e] == static_cast<double>(ref[e]));
        // 2 levels - 1 products of n x n: Strassen's 7^k calls of s rows on the side s 2^k
        // >= n, or (P/s)^2 calls of max(n, s) rows, P = n up to a multiple of s.
        // CPU: Seidel's 3 n^2 tests per level, 2 n^2 at the last and 5 n^2 (degrees, the
        // parity rule) at the others; Strassen's 18 (h/2)^2 additions per node of side h,
        // 6 m (7^k - 4^k) per product (one D x D tile: no depth chunks to add).
        const auto products = static_cast<std::uint64_t>(2 * levels - 1);
        const auto nn = static_cast<std::uint64_t>(n * n), L = static_cast<std::uint64_t>(levels);
        std::uint64_t per = 0, cpu = 3 * L * nn + 2 * nn + 5 * (L - 1) * nn;
        if (product == TcuProduct::fast) {
          std::uint64_t calls = 1, fours = 1;
          for (std::int64_t side = s; side < n; side *= 2) calls *= 7, fours *= 4;
          per = calls * static_cast<std::uint64_t>(m + l);
          cpu += products * 6 * static_cast<std::uint64_t>(m) * (calls - fours);
        } else {
          const std::int64_t P = up(n, s);
          per = static_cast<std::uint64_t>((P / s) * (P / s) *
                                           (std::max<std::int64_t>(n, s) * s + l));
        }
        CHECK(u.cost().tensor_time == products * per);
        CHECK(u.cost().cpu_time == cpu);
      }
}

TEST_CASE("apsd reports its product and Theorem 6's bound under each", "[tcu][apsd]") {
  for (const TcuProduct product : kProducts) {
    TensorUnit u(16, 9);
    TcuProblem p{50, 2, ""};
    p.product = product;
    const TcuRun run = tcu_apsd(u, p);
    REQUIRE(run.verified);
    CHECK(run.details["product"] == to_string(product));
    for (const TcuProduct q : kProducts) {
      const double w0 = q == TcuProduct::fast ? std::log(7.0) / std::log(4.0) : 1.5;
      const double bound = std::pow(50.0 * 50.0 / 16, w0) * (16 + 9) * std::log2(50.0);
      CHECK(run.details["bounds"][to_string(q)].get<double>() == Approx(bound).epsilon(1e-12));
    }
    CHECK(*run.growth_exponent == Approx(product == TcuProduct::fast ? std::log2(7.0) : 3.0));
  }
}
