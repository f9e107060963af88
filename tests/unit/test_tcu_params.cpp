// The TCU algorithms' parameters (stencil k and kernel, polyeval's points, the product of
// spmm and apsd) through TcuProblem and through triada-tcu's options: results against
// oracles written here (direct stencil iteration, Horner), the bound each run states for
// its parameters, and the refusals of bad values.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "apps/tcu/options.hpp"
#include "core/error.hpp"
#include "jobs/tcu_runs.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "support/catch.hpp"
#include "support/tcu_options.hpp"

using namespace triada;

namespace {

TcuProblem problem(std::int64_t size, std::uint64_t seed) {
  TcuProblem p;
  p.size = size;
  p.seed = seed;
  return p;
}

// k sweeps of A_t[i][j] = sum_{a,b} w[(a+1)*3 + b+1] A_{t-1}[i+a][j+b] on the whole plane
// (A zero outside the N x N window at t = 0), on a window grown by one cell per sweep.
std::vector<long double> stencil_oracle(const std::vector<double>& A, index_t N, index_t k,
                                        const std::vector<double>& w) {
  index_t G = N;
  std::vector<long double> cur(A.begin(), A.end());
  for (index_t t = 0; t < k; ++t) {
    const index_t H = G + 2;
    std::vector<long double> next(static_cast<size_t>(H * H), 0);
    for (index_t i = 0; i < H; ++i)
      for (index_t j = 0; j < H; ++j)
        for (int a = -1; a <= 1; ++a)
          for (int b = -1; b <= 1; ++b) {
            const index_t y = i - 1 + a, x = j - 1 + b;
            if (y >= 0 && y < G && x >= 0 && x < G)
              next[static_cast<size_t>(i * H + j)] +=
                  w[static_cast<size_t>((a + 1) * 3 + b + 1)] * cur[static_cast<size_t>(y * G + x)];
          }
    cur.swap(next);
    G = H;
  }
  std::vector<long double> out(static_cast<size_t>(N * N));
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j)
      out[static_cast<size_t>(i * N + j)] = cur[static_cast<size_t>((i + k) * G + j + k)];
  return out;
}

}  // namespace

TEST_CASE("stencil runs the k and kernel they are given", "[tcu][stencil][params]") {
  // A kernel with mixed signs (a discrete Laplacian step) and a plain shift.
  const std::vector<std::vector<double>> kernels{{0, 0.2, 0, 0.2, 0.2, 0.2, 0, 0.2, 0},
                                                 {0.05, -0.1, 0.3, 0.25, -0.5, 0.2, 0, 0.1, -0.05},
                                                 {0, 0, 0, 0, 0, 1, 0, 0, 0}};
  for (const std::int64_t m : {4, 16})
    for (const auto& w : kernels)
      for (const index_t k : {1, 3, 6}) {
        TcuProblem p = problem(13, 4);
        p.sweeps = k;
        p.kernel = w;
        TensorUnit u(m, 2);
        const TcuRun run = tcu_stencil(u, p);
        INFO("m = " << m << ", k = " << k << ", w[4] = " << w[4]);
        CHECK(run.verified);
        CHECK(run.details["k"] == k);
        CHECK(run.details["kernel"].get<std::vector<double>>() == w);
        // The generated matrix, regenerated here (uniform in [-1, 1] from the seed).
        std::mt19937_64 gen(4);
        std::uniform_real_distribution<double> d(-1.0, 1.0);
        std::vector<double> A(13 * 13);
        for (auto& v : A) v = d(gen);
        const auto ref = stencil_oracle(A, 13, k, w);
        double wsum = 0;
        for (double v : w) wsum += std::abs(v);
        const auto head = run.details["result_head"].get<std::vector<double>>();
        REQUIRE(head.size() == 8);
        // DFT convolution errors are normwise: a few u log2(L) per transform, L <= 64 here.
        for (size_t j = 0; j < head.size(); ++j)
          CHECK(std::abs(head[j] - static_cast<double>(ref[j])) <= 1e-12 * std::pow(wsum, k));
        // Theorem 8 with this k.
        const double n = 169, want = n * std::max(1.0, std::log(double(k)) / std::log(double(m))) +
                                     2 * std::max(1.0, std::log2(double(k)));
        CHECK(*run.bound == Approx(want).epsilon(1e-12));
      }
}

TEST_CASE("stencil refuses a k whose DFT is too long and a kernel that is not 9 finite weights",
          "[tcu][stencil][params][errors]") {
  TensorUnit u(16, 0);
  TcuProblem p = problem(20, 1);
  p.option_prefix = "--";
  p.sweeps = 700;  // 3k = 2100: the DFT length would be 4096 > 2048 (sqrt(m) = 4)
  CHECK_THROWS_WITH(tcu_stencil(u, p), Catch::Contains("--k 700") && Catch::Contains("2048"));
  p.sweeps = 21;  // 3k = 63 <= 64: fine
  CHECK(tcu_stencil(u, p).verified);
  p.sweeps = 2;
  p.kernel = {1, 2, 3};
  CHECK_THROWS_WITH(tcu_stencil(u, p), Catch::Contains("--kernel"));
  p.kernel = std::vector<double>(9, 1e6);
  p.sweeps = 60;  // (9e6)^60 is far beyond binary64
  CHECK_THROWS_AS(tcu_stencil(u, p), config_error);
}

TEST_CASE("polyeval evaluates at the number of points it is given", "[tcu][polyeval][params]") {
  for (const std::int64_t m : {4, 64})
    for (const std::int64_t points : {1, 7, 100}) {
      TcuProblem p = problem(50, 3);
      p.points = points;
      TensorUnit u(m, 5);
      const TcuRun run = tcu_polyeval(u, p);
      INFO("m = " << m << ", p = " << points);
      CHECK(run.verified);
      CHECK(run.details["points"] == points);
      std::mt19937_64 gen(3);
      std::uniform_real_distribution<double> d(-1.0, 1.0);
      std::vector<double> a(50), x(static_cast<size_t>(points));
      for (auto& v : a) v = d(gen);
      for (auto& v : x) v = d(gen);
      const auto head = run.details["result_head"].get<std::vector<double>>();
      REQUIRE(head.size() == static_cast<size_t>(std::min<std::int64_t>(points, 8)));
      // Each value is a sum of n products a_h x^h, the powers formed by up to n + s
      // multiplications: |y - A(x)| <= (2n + 2s + 2) u sum_h |a_h| |x|^h.
      const double s = std::sqrt(double(m)), eps = std::ldexp(1.0, -53);
      for (size_t i = 0; i < head.size(); ++i) {
        long double h = 0, mag = 0;
        for (size_t j = a.size(); j-- > 0;) {
          h = h * x[i] + a[j];
          mag = mag * std::fabs(x[i]) + std::fabs(a[j]);
        }
        CHECK(std::abs(head[i] - static_cast<double>(h)) <=
              (2 * 50 + 2 * s + 2) * eps * static_cast<double>(mag));
      }
      // Theorem 11 with this p: p n / sqrt(m) + p sqrt(m) + (n/m) l.
      const double sm = std::sqrt(double(m)), np = static_cast<double>(points);
      const double want = np * 50.0 / sm + np * sm + 50.0 / static_cast<double>(m) * 5;
      CHECK(*run.bound == Approx(want).epsilon(1e-12));
    }
  TensorUnit u(16, 0);
  TcuProblem p = problem(10, 1);
  p.points = 1 << 20;
  CHECK_THROWS_AS(tcu_polyeval(u, p), config_error);
}

TEST_CASE("triada-tcu takes --product, --k, --kernel and --points for their algorithms only",
          "[tcu][params][errors]") {
  const auto single = [](std::vector<std::string> extra) {
    std::vector<std::string> a{"--size", "8", "--m", "16", "--latency", "1"};
    a.insert(a.end(), extra.begin(), extra.end());
    return parse_tcu_words(a);
  };
  auto c = single({"--algo", "spmm", "--product", "classical"});
  REQUIRE(c);
  CHECK(c->product == TcuProduct::classical);
  CHECK_FALSE(c->both_products);
  c = single({"--algo", "apsd", "--product", "both"});
  REQUIRE(c);
  CHECK(c->both_products);
  c = single({"--algo", "apsd"});
  REQUIRE(c);
  CHECK(c->product == TcuProduct::fast);  // the product Theorem 6 assumes
  c = single({"--algo", "stencil", "--k", "4", "--kernel", "0,1,0,1,-4,1,0,1,0"});
  REQUIRE(c);
  CHECK(c->sweeps == 4);
  CHECK(c->kernel == std::vector<double>{0, 1, 0, 1, -4, 1, 0, 1, 0});
  c = single({"--algo", "polyeval", "--points", "33"});
  REQUIRE(c);
  CHECK(c->points == 33);
  const TcuProblem p = tcu_problem(*c, 8, "");
  CHECK(p.points == 33);
  CHECK(p.option_prefix == "--");

  const auto refused = [&](std::vector<std::string> extra, const char* words) {
    INFO(words);
    CHECK_THROWS_WITH(single(extra), Catch::Contains(words));
  };
  refused({"--algo", "matmul", "--product", "fast"}, "--product: applies to spmm and apsd only");
  refused({"--algo", "spmm", "--product", "slow"}, "--product");
  refused({"--algo", "dft", "--k", "2"}, "--k: applies to stencil only");
  refused({"--algo", "stencil", "--k", "0"}, "--k");
  refused({"--algo", "stencil", "--k", "two"}, "--k");
  refused({"--algo", "stencil", "--kernel", "1,2,3"}, "--kernel");
  refused({"--algo", "stencil", "--kernel", "1,1,1,1,nan,1,1,1,1"}, "--kernel");
  refused({"--algo", "stencil", "--kernel", "1,1,1,1,1,1,1,1,1,1"}, "--kernel");
  refused({"--algo", "ge", "--points", "3"}, "--points: applies to polyeval only");
  refused({"--algo", "polyeval", "--points", "-3"}, "--points");
  refused({"--algo", "polyeval", "--points", "3", "--input", "p.h5"}, "--points");
  refused({"--algo", "matmul", "--input", ""}, "--input");
  CHECK_THROWS_WITH(
      parse_tcu_words({"--algo", "spmm", "--sweep", "--latency", "1", "--product", "both"}),
      Catch::Contains("--product both"));
}
