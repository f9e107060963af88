// Theorem 6: Seidel's all-pairs shortest distances (conventions: tcu_linear_algebra.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_la_common.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {

using namespace tcu_la;

// =======================================================================================
// Theorem 6: Seidel's all-pairs shortest distances. Two n x n products per recursion level
// (A^2 and D^(2) A; one at the last level), on the unit with the product Theorem 6 assumes,
// Theorem 1's fast one (Strassen, w0 = log_4 7), or Theorem 2's classical blocking
// (w0 = 3/2). Time (n^2/m)^w0 (m + l) log2 n.

namespace {
double apsd_bound(double n, double m, double l, TcuProduct product) {
  return std::pow(n * n / m, product_omega0(product)) * (m + l) * std::max(1.0, std::log2(n));
}
std::string apsd_formula(TcuProduct product) {
  return "(n^2/m)^w0 (m + l) log2 n, w0 = " + omega0_text(product);
}
}  // namespace

namespace {

double bound_apsd(double n, double m, double l) {
  return apsd_bound(n, m, l, TcuProduct::fast);
}
const char* formula_apsd() {
  static const std::string f = apsd_formula(TcuProduct::fast);
  return f.c_str();
}
double exponent_apsd() {
  return 2 * product_omega0(TcuProduct::fast);
}

}  // namespace

namespace {

// Seidel's APD(A) for the connected graph with 0/1 adjacency A (zero diagonal).
Mat seidel(TensorUnit& u, const Mat& A, index_t n, int& levels, TcuProduct product) {
  ++levels;
  const size_t nn = sz(n * n);
  const Mat Z = tcu_product(u, n, n, n, A, A, product);
  Mat B(nn, 0.0);
  bool complete = true;
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const size_t e = sz(i * n + j);
      B[e] = (i != j && (A[e] != 0 || Z[e] > 0)) ? 1.0 : 0.0;
      if (i != j && B[e] == 0) complete = false;
    }
  u.cpu(3 * u64(n * n));  // Z > 0, OR, completeness test
  Mat D(nn);
  if (complete) {
    for (size_t e = 0; e < nn; ++e) D[e] = 2 * B[e] - A[e];
    u.cpu(2 * u64(n * n));
    return D;
  }
  const Mat T = seidel(u, B, n, levels, product);
  const Mat X = tcu_product(u, n, n, n, T, A, product);
  std::vector<double> deg(sz(n), 0.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) deg[sz(j)] += A[sz(i * n + j)];
  u.cpu(u64(n * n));
  // delta = 2 T if X[i,j] >= T[i,j] deg(j), else 2 T - 1 (product, comparison, 2 T, -1).
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const size_t e = sz(i * n + j);
      D[e] = X[e] >= T[e] * deg[sz(j)] ? 2 * T[e] : 2 * T[e] - 1;
    }
  u.cpu(4 * u64(n * n));
  return D;
}

}  // namespace

std::vector<double> tcu_seidel_apsd(TensorUnit& u, const std::vector<double>& adj, index_t n,
                                    int* levels, TcuProduct product) {
  int depth = 0;
  Mat A(adj);
  for (index_t i = 0; i < n; ++i) A[sz(i * n + i)] = 0;
  for (auto& v : A) v = v != 0 ? 1.0 : 0.0;
  Mat D = seidel(u, A, n, depth, product);
  if (levels) *levels = depth;
  return D;
}

namespace {
// Connected by construction: a random spanning tree whose vertex v (in a random order)
// hangs off one of the 4 vertices before it (long paths: several Seidel levels), plus
// floor(sqrt(n)) random extra edges.
Mat random_connected_graph(index_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<index_t> perm(sz(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), gen);
  Mat adj(sz(n * n), 0.0);
  const auto link = [&](index_t a, index_t b) {
    if (a == b) return;
    adj[sz(a * n + b)] = adj[sz(b * n + a)] = 1;
  };
  for (index_t v = 1; v < n; ++v) {
    std::uniform_int_distribution<index_t> back(std::max<index_t>(0, v - 4), v - 1);
    link(perm[sz(v)], perm[sz(back(gen))]);
  }
  std::uniform_int_distribution<index_t> any(0, n - 1);
  const auto extra = static_cast<index_t>(std::sqrt(dbl(n)));
  for (index_t e = 0; e < extra; ++e) link(any(gen), any(gen));
  return adj;
}
}  // namespace

namespace {

TcuRun run_apsd(TensorUnit& u, const TcuProblem& p) {
  Mat adj;
  index_t n = 0;
  std::string source;
  if (!p.input.empty()) {
    n = read_adjacency(p, "apsd", adj);
    for (index_t i = 0; i < n; ++i) {
      adj[sz(i * n + i)] = 0;  // self-loops do not change distances
      for (index_t j = 0; j < i; ++j)
        if (adj[sz(i * n + j)] != adj[sz(j * n + i)])
          throw input_error(p.input +
                            ": apsd needs an undirected graph (symmetric adjacency); "
                            "entries (" +
                            std::to_string(i) + "," + std::to_string(j) + ") and (" +
                            std::to_string(j) + "," + std::to_string(i) + ") differ");
    }
    source = p.input;
  } else {
    n = p.size;
    check_size(p.size_name, "apsd", n, kMaxDenseSide, "a number of vertices");
    adj = random_connected_graph(n, p.seed);
    source = "random connected undirected graph (spanning tree + sqrt(n) edges), seed " +
             std::to_string(p.seed);
  }
  check_size(p.size_name, "apsd", n, kMaxDenseSide, "a number of vertices",
             size_source(p, "/adjacency"));
  const std::vector<index_t> ref = reference_distances(adj, n);
  for (index_t v = 0; v < n; ++v)
    if (ref[sz(v)] < 0)
      throw input_error(p.input + ": apsd needs a connected graph; vertex " + std::to_string(v) +
                        " is not reachable from vertex 0");
  int levels = 0;
  const Mat D = tcu_seidel_apsd(u, adj, n, &levels, p.product);
  bool ok = true;
  index_t diameter = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    ok = ok && D[e] == dbl(ref[e]);
    diameter = std::max(diameter, ref[e]);
  }
  TcuRun run;
  run.verified = ok;
  run.reference = "BFS from every vertex, exact equality of all distances";
  const bool fast = p.product == TcuProduct::fast;
  const index_t padded = fast ? fast_product_side(u.side(), n, n, n) : round_up(n, u.side());
  run.details = {{"size", n},
                 {"theorem_n", dbl(n)},
                 {"input", source},
                 {"recursion_levels", levels},
                 {"diameter", diameter},
                 {"products", 2 * levels - 1},
                 {"padded_side", padded},
                 {"padding", padded == n ? "none"
                             : fast      ? "products zero-padded to sqrt(m) 2^k (Strassen)"
                                         : "products zero-padded to a multiple of sqrt(m)"}};
  set_product_bounds(run, p.product, dbl(n), u, apsd_bound, apsd_formula(p.product),
                     2 * product_omega0(p.product));
  return run;
}

}  // namespace

const TcuAlgorithm tcu_apsd{"apsd",     "Theorem 6",  "vertices",   run_apsd,
                            bound_apsd, formula_apsd, exponent_apsd};

}  // namespace triada
