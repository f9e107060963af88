// The linear-algebra and graph TCU algorithms (Theorems 1-6): verified runs across sizes and
// unit sizes, the exact closed-form cost of matmul, TCU vs weak-TCU call counts, the CPU
// references on hand-computed cases, and the error paths.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "apps/tcu/options.hpp"
#include "core/error.hpp"
#include "jobs/tcu_runs.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_linear_algebra.hpp"
#include "support/catch.hpp"
#include "support/tcu_options.hpp"

using namespace triada;

namespace {

const std::vector<std::int64_t> kUnitSizes{4, 16, 64, 256};

TcuRun run_algo(const char* name, std::int64_t size, std::int64_t m, std::int64_t l = 5,
                bool weak = false, std::uint64_t seed = 7) {
  TensorUnit u(m, l, weak);
  return find_tcu_algorithm(name).run(u, TcuProblem{size, seed, ""});
}

}  // namespace

TEST_CASE("every linear-algebra TCU algorithm matches its reference across sizes and m",
          "[mxu][tcu]") {
  // Sizes include ones that are not multiples of sqrt(m) (padding) and ones below sqrt(m).
  const std::vector<std::pair<const char*, std::vector<std::int64_t>>> cases{
      {"matmul", {1, 5, 16, 23, 33}}, {"strassen", {1, 7, 16, 20}}, {"spmm", {3, 17, 40, 64}},
      {"ge", {1, 6, 15, 30}},         {"tclosure", {1, 7, 16, 33}}, {"apsd", {1, 2, 9, 20, 37}}};
  for (const auto& [name, sizes] : cases)
    for (const std::int64_t m : kUnitSizes)
      for (const std::int64_t size : sizes) {
        INFO(name << " size " << size << " m " << m);
        const TcuRun run = run_algo(name, size, m);
        CHECK(run.verified);
        CHECK(run.details["size"].get<std::int64_t>() == size);
      }
}

TEST_CASE("matmul costs exactly (n/m)(sqrt(n m) + l) when sqrt(m) divides the side", "[mxu][tcu]") {
  for (const std::int64_t m : kUnitSizes)
    for (const std::int64_t l : {0, 1, 10, 1000}) {
      const std::int64_t s = std::llround(std::sqrt(static_cast<double>(m)));
      for (const std::int64_t k : {1, 2, 3, 5}) {
        const std::int64_t side = k * s, n = side * side;
        TensorUnit u(m, l);
        const TcuRun run = tcu_matmul(u, TcuProblem{side, 3, ""});
        INFO("m " << m << " l " << l << " side " << side);
        REQUIRE(run.verified);
        const auto expected = static_cast<std::uint64_t>((n / m) * (side * s + l));
        CHECK(u.cost().tensor_time == expected);
        CHECK(u.cost().cpu_time == 0);
        CHECK(u.cost().model_time() == expected);
        CHECK(u.cost().calls == static_cast<std::uint64_t>(n / m));
        CHECK(tcu_matmul.bound(static_cast<double>(n), static_cast<double>(m),
                               static_cast<double>(l)) == static_cast<double>(expected));
      }
    }
}

TEST_CASE("the weak TCU needs (S/s)^3 matmul calls where the TCU needs (S/s)^2", "[mxu][tcu]") {
  // Theorem 12's weak model: r = s per call, so the latency is paid per s x s product.
  for (const std::int64_t m : {4, 16, 64}) {
    const std::int64_t s = std::llround(std::sqrt(static_cast<double>(m)));
    for (const std::int64_t side : {s, 3 * s, 4 * s + 1}) {
      const std::int64_t q = (side + s - 1) / s, l = 9;
      TensorUnit tcu(m, l), weak(m, l, true);
      REQUIRE(tcu_matmul(tcu, TcuProblem{side, 1, ""}).verified);
      REQUIRE(tcu_matmul(weak, TcuProblem{side, 1, ""}).verified);
      INFO("m " << m << " side " << side);
      CHECK(tcu.cost().calls == static_cast<std::uint64_t>(q * q));
      CHECK(weak.cost().calls == static_cast<std::uint64_t>(q * q * q));
      CHECK(tcu.cost().tensor_time == static_cast<std::uint64_t>(q * q * (q * s * s + l)));
      CHECK(weak.cost().tensor_time == static_cast<std::uint64_t>(q * q * q * (s * s + l)));
      CHECK(weak.cost().macs_dense == tcu.cost().macs_dense);  // same work, more latency
    }
  }
}

TEST_CASE("every algorithm also verifies on a weak TCU", "[mxu][tcu]") {
  for (const char* name : {"matmul", "strassen", "spmm", "ge", "tclosure", "apsd"})
    for (const std::int64_t m : {4, 16}) {
      INFO(name << " m " << m);
      CHECK(run_algo(name, 13, m, 5, true).verified);
    }
}

TEST_CASE("strassen runs 7^k base products of s x s blocks", "[mxu][tcu]") {
  TensorUnit u(16, 2);
  const TcuRun run = tcu_strassen(u, TcuProblem{32, 1, ""});  // s = 4, 32 = 4 * 2^3
  REQUIRE(run.verified);
  CHECK(u.cost().calls == 343);
  CHECK(u.cost().tensor_time == 343u * (16 + 2));
  CHECK(u.cost().tensor_time == static_cast<std::uint64_t>(tcu_strassen.bound(1024, 16, 2) + 0.5));
  // 18 additions of (d/2)^2 per node: 6 m (7^k - 4^k) in all.
  CHECK(u.cost().cpu_time == 6u * 16u * (343u - 64u));
}

TEST_CASE("the CPU references are right on hand-computed cases", "[mxu][tcu]") {
  SECTION("product") {
    const std::vector<double> A{1, 2, 3, 4, 5, 6}, B{7, 8, 9, 10, 11, 12};  // 2x3, 3x2
    CHECK(reference_product(A, B, 2, 3, 2) == std::vector<double>{58, 64, 139, 154});
  }
  SECTION("sparse product") {
    // A = [[0, 2], [3, 0]], B = [[1, 0], [4, 5]] -> C = [[8, 10], [3, 0]].
    const std::vector<SparseEntry> A{{1, 0, 3}, {0, 1, 2}}, B{{0, 0, 1}, {1, 0, 4}, {1, 1, 5}};
    const std::vector<SparseEntry> C{{0, 0, 8}, {0, 1, 10}, {1, 0, 3}};
    CHECK(reference_sparse_product(A, B, 2) == C);
  }
  SECTION("solve") {
    // [[0, 1], [2, 1]] x = [3, 5] needs a row swap: x = [1, 3].
    const auto x = reference_solve({0, 1, 2, 1}, {3, 5}, 2);
    CHECK(x == std::vector<double>{1, 3});
    CHECK_THROWS_AS(reference_solve({1, 2, 2, 4}, {1, 1}, 2), input_error);
  }
  SECTION("reachability") {
    // 0 -> 1 -> 2 -> 1, 3 isolated: 1 and 2 lie on a cycle, 0 does not.
    std::vector<double> adj(16, 0.0);
    adj[0 * 4 + 1] = adj[1 * 4 + 2] = adj[2 * 4 + 1] = 1;
    const std::vector<double> expect{0, 1, 1, 0,  //
                                     0, 1, 1, 0,  //
                                     0, 1, 1, 0,  //
                                     0, 0, 0, 0};
    CHECK(reference_reachability(adj, 4) == expect);
  }
  SECTION("distances") {
    // The path 0 - 1 - 2 and an isolated vertex 3.
    std::vector<double> adj(16, 0.0);
    adj[0 * 4 + 1] = adj[1 * 4 + 0] = adj[1 * 4 + 2] = adj[2 * 4 + 1] = 1;
    const std::vector<index_t> expect{0, 1, 2, -1, 1, 0, 1, -1, 2, 1, 0, -1, -1, -1, -1, 0};
    CHECK(reference_distances(adj, 4) == expect);
  }
}

TEST_CASE("the unit algorithms give the hand-computed answers", "[mxu][tcu]") {
  TensorUnit u(4, 1);
  SECTION("matmul and strassen of 3x3 matrices") {
    const std::vector<double> A{1, 2, 0, 0, 1, 3, 4, 0, 1}, B{1, 0, 2, 0, 1, 0, 3, 1, 0};
    const std::vector<double> C{1, 2, 2, 9, 4, 0, 7, 1, 8};
    CHECK(tcu_matmul_dense(u, A, B, 3) == C);
    CHECK(tcu_strassen_dense(u, A, B, 3) == C);
  }
  SECTION("spmm") {
    const std::vector<SparseEntry> A{{1, 0, 3}, {0, 1, 2}}, B{{0, 0, 1}, {1, 0, 4}, {1, 1, 5}};
    const std::vector<SparseEntry> C{{0, 0, 8}, {0, 1, 10}, {1, 0, 3}};
    CHECK(tcu_spmm_entries(u, A, B, 2, 1) == C);
  }
  SECTION("ge on a 3x3 system") {
    // [[4, 1, 0], [1, 4, 1], [0, 1, 4]] x = [6, 12, 14] -> x = [1, 2, 3].
    const auto x = tcu_ge_solve(u, {4, 1, 0, 1, 4, 1, 0, 1, 4}, {6, 12, 14}, 3);
    REQUIRE(x.size() == 3);
    for (int i = 0; i < 3; ++i) CHECK(x[i] == Approx(i + 1).epsilon(1e-14));
  }
  SECTION("transitive closure of a 3-cycle plus a tail") {
    // 3 -> 0 -> 1 -> 2 -> 0.
    std::vector<double> adj(16, 0.0);
    adj[3 * 4 + 0] = adj[0 * 4 + 1] = adj[1 * 4 + 2] = adj[2 * 4 + 0] = 1;
    const std::vector<double> expect{1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0};
    CHECK(tcu_transitive_closure(u, adj, 4) == expect);
  }
  SECTION("Seidel distances of a 3-vertex path and a 5-cycle") {
    const std::vector<double> path{0, 1, 0, 1, 0, 1, 0, 1, 0};
    CHECK(tcu_seidel_apsd(u, path, 3) == std::vector<double>{0, 1, 2, 1, 0, 1, 2, 1, 0});
    std::vector<double> cycle(25, 0.0);
    for (int i = 0; i < 5; ++i) cycle[i * 5 + (i + 1) % 5] = cycle[((i + 1) % 5) * 5 + i] = 1;
    const auto D = tcu_seidel_apsd(u, cycle, 5);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 5; ++j) {
        const int d = std::abs(i - j);
        CHECK(D[i * 5 + j] == std::min(d, 5 - d));
      }
  }
}

TEST_CASE("spmm reports the output size and needs several hashed rounds", "[mxu][tcu]") {
  const TcuRun run = run_algo("spmm", 200, 16);
  REQUIRE(run.verified);
  CHECK(run.details["Z"].get<std::int64_t>() > 0);
  CHECK(run.details["Z"].get<std::int64_t>() <= run.details["Z_upper_bound"].get<std::int64_t>());
  CHECK(run.details["I"].get<std::int64_t>() == 6 * 200);
  CHECK(run.details["rounds"].size() > 1);
}

TEST_CASE("bad sizes, units and algorithm names are config errors", "[mxu][tcu][errors]") {
  CHECK_THROWS_AS(find_tcu_algorithm("qr"), config_error);
  CHECK_THROWS_AS(TensorUnit(15, 0), config_error);
  for (const char* name : {"matmul", "strassen", "spmm", "ge", "tclosure", "apsd"}) {
    INFO(name);
    CHECK_THROWS_AS(run_algo(name, 0, 16), config_error);
    CHECK_THROWS_AS(run_algo(name, -3, 16), config_error);
    CHECK_THROWS_AS(run_algo(name, 1 << 20, 16), config_error);
  }
  CHECK_THROWS_AS(
      parse_tcu_words({"--algo", "matmul", "--size", "8", "--m", "15", "--latency", "1"}),
      config_error);
  CHECK_THROWS_AS(parse_tcu_words({"--algo", "nope", "--size", "8", "--m", "16", "--latency", "1"}),
                  config_error);
  CHECK_THROWS_AS(
      parse_tcu_words({"--algo", "matmul", "--size", "0", "--m", "16", "--latency", "1"}),
      config_error);
  CHECK_THROWS_AS(parse_tcu_words({"--algo", "matmul", "--m", "16", "--latency", "1"}),
                  config_error);
  CHECK_THROWS_AS(parse_tcu_words({"--size", "8", "--m", "16", "--latency", "1"}), config_error);
  CHECK_THROWS_AS(parse_tcu_words({"--algo", "matmul", "--size", "8", "--m", "16"}), config_error);
  CHECK_THROWS_AS(
      parse_tcu_words({"--algo", "matmul", "--size", "8", "--m", "16", "--latency", "-1"}),
      config_error);
  CHECK_THROWS_AS(parse_tcu_words({"--algo", "matmul", "--bogus"}), config_error);
  const auto ok =
      parse_tcu_words({"--algo", "ge", "--size", "8", "--m", "16", "--latency", "1", "--weak"});
  REQUIRE(ok);
  CHECK(ok->algo == "ge");
  CHECK(ok->weak);
  const auto sweep =
      parse_tcu_words({"--algo", "matmul", "--sweep", "--latency", "0", "--ms", "4,16"});
  REQUIRE(sweep);
  CHECK(sweep->ms == std::vector<std::int64_t>{4, 16});
}

TEST_CASE("the sweep's log-log fit recovers a power law exactly", "[mxu][tcu]") {
  const std::vector<double> n{16, 64, 256, 1024};
  std::vector<double> t;
  for (double v : n) t.push_back(3.0 * std::pow(v, 1.5));
  CHECK(fit_loglog_slope(n, t) == Approx(1.5).epsilon(1e-12));
  CHECK(std::isnan(fit_loglog_slope({4}, {2})));
}

namespace {

// Brent's factor by its recurrence f(2h) = 12 f(h) + 50 h from f(s) = s^2 (Higham, Sec.
// 23.2.2), independent of the closed form the program uses.
double brent_factor(std::int64_t D, std::int64_t s) {
  double f = static_cast<double>(s) * static_cast<double>(s);
  for (std::int64_t h = s; h < D; h *= 2) f = 12 * f + 50 * static_cast<double>(h);
  return f;
}

// A (side x side) uniform in [lo, 1), rows scaled by 2^-(row_spread i / side) and columns by
// 2^-(col_spread j / side): with spreads, |A||B| is tiny where the largest operands are not.
std::vector<double> test_matrix(std::int64_t side, std::mt19937_64& gen, double lo,
                                double row_spread, double col_spread) {
  std::uniform_real_distribution<double> v(lo, 1.0);
  std::vector<double> a(static_cast<size_t>(side * side));
  const auto n = static_cast<double>(side);
  for (std::int64_t i = 0; i < side; ++i)
    for (std::int64_t j = 0; j < side; ++j) {
      const double e =
          (row_spread * static_cast<double>(i) + col_spread * static_cast<double>(j)) / n;
      a[static_cast<size_t>(i * side + j)] = std::ldexp(v(gen), -static_cast<int>(e));
    }
  return a;
}

// max |C - A B| against a long double triple loop.
double error_of(const std::vector<double>& C, const std::vector<double>& A,
                const std::vector<double>& B, std::int64_t n) {
  double worst = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      long double sum = 0;
      for (std::int64_t k = 0; k < n; ++k)
        sum += static_cast<long double>(A[static_cast<size_t>(i * n + k)]) *
               B[static_cast<size_t>(k * n + j)];
      worst =
          std::max(worst, static_cast<double>(std::fabs(C[static_cast<size_t>(i * n + j)] - sum)));
    }
  return worst;
}

}  // namespace

TEST_CASE("strassen is checked with Brent's normwise bound, which holds and is not vacuous",
          "[mxu][tcu]") {
  const double u = std::ldexp(1.0, -53);
  for (const std::int64_t s : {1, 2, 4, 8})
    for (std::int64_t D = s; D <= 4096; D *= 2)
      CHECK(strassen_error_factor(D, s) == Approx(brent_factor(D, s)).epsilon(1e-12));
  std::mt19937_64 gen(2024);
  bool classical_bound_broken = false;
  // Inputs: uniform [0, 1), uniform [-1, 1), and rows of A / columns of B scaled over 2^40
  // (operands of very different sizes meet in Strassen's sums); sides padded or not, one
  // to five recursion levels.
  const std::vector<std::array<double, 3>> kinds{{0, 0, 0}, {-1, 0, 0}, {0, 40, 40}, {-1, 40, 0}};
  for (const std::int64_t m : {4, 16, 64})
    for (const std::int64_t side : {5, 16, 20, 33, 64})
      for (const auto& [lo, rows, cols] : kinds) {
        TensorUnit unit(m, 1);
        const auto A = test_matrix(side, gen, lo, rows, 0);
        const auto B = test_matrix(side, gen, lo, 0, cols);
        auto C = tcu_strassen_dense(unit, A, B, side);
        const std::int64_t s = unit.side(), D = fast_product_side(s, side, side, side);
        const StrassenBlocks blocks{D, s};
        INFO("m " << m << " side " << side << " lo " << lo << " spread " << rows);
        const double amax = *std::max_element(
            A.begin(), A.end(), [](double x, double y) { return std::abs(x) < std::abs(y); });
        const double bmax = *std::max_element(
            B.begin(), B.end(), [](double x, double y) { return std::abs(x) < std::abs(y); });
        const double scale = std::abs(amax) * std::abs(bmax);
        // The theorem itself, against an independent more precise product.
        CHECK(error_of(C, A, B, side) <= 1.01 * brent_factor(D, s) * u * scale);
        CHECK(check_square_product(C, A, B, side, false, &blocks).ok);
        if (!check_square_product(C, A, B, side, false).ok) classical_bound_broken = true;
        // One entry off by 1e-8 of the scale of C: the check sees it.
        C[static_cast<size_t>(side * side / 2)] += 1e-8 * static_cast<double>(side) * scale;
        CHECK_FALSE(check_square_product(C, A, B, side, false, &blocks).ok);
      }
  // Why the classical entrywise bound is not Strassen's check: some input breaks it.
  CHECK(classical_bound_broken);
}
