// Theorem 5: transitive closure, Figure 7 (conventions: tcu_linear_algebra.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_la_common.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {

using namespace tcu_la;

// =======================================================================================
// Theorem 5: transitive closure, Figure 7. Time n^3/sqrt(m) + (n^2/m) l + n^2 sqrt(m).

namespace {

double bound_tclosure(double n, double m, double l) {
  return n * n * n / std::sqrt(m) + n * n / m * l + n * n * std::sqrt(m);
}
const char* formula_tclosure() {
  return "n^3/sqrt(m) + (n^2/m) l + n^2 sqrt(m)";
}
double exponent_tclosure() {
  return 3.0;
}

}  // namespace

namespace {

// X[i,j] |= Y[i,t] & Z[t,j] over t, i, j in this order (Figure 7's A, B and C; CPU: one AND
// and one OR per update). X may alias Y or Z (A: all three; B: Z = X; C: Y = X).
std::uint64_t closure_block(double* X, const double* Y, const double* Z, index_t ld, index_t s) {
  for (index_t t = 0; t < s; ++t)
    for (index_t i = 0; i < s; ++i)
      for (index_t j = 0; j < s; ++j)
        if (Y[i * ld + t] != 0 && Z[t * ld + j] != 0) X[i * ld + j] = 1;
  return 2 * u64(s * s * s);
}

}  // namespace

std::vector<double> tcu_transitive_closure(TensorUnit& u, const std::vector<double>& adj,
                                           index_t n) {
  const index_t s = u.side(), P = round_up(n, s), K = P / s;
  // Padding: isolated extra vertices (zero rows and columns) up to a multiple of sqrt(m).
  Mat d = pad_square(adj, n, P);
  for (auto& v : d) v = v != 0 ? 1.0 : 0.0;
  const auto blk = [&](index_t bi, index_t bj) { return &d[sz(bi * s * P + bj * s)]; };
  Mat strip(sz((K - 1) * s * s)), out(sz((K - 1) * s * s));
  // Gathers (to = true: scatters back) the blocks X_ij, i != k, of block column j into a
  // contiguous (K-1) s x s strip: data movement, free.
  const auto gather = [&](index_t k, index_t j, Mat& buf, bool to) {
    for (index_t i = 0, r = 0; i < K; ++i) {
      if (i == k) continue;
      for (index_t q = 0; q < s; ++q) {
        double* row = blk(i, j) + q * P;
        if (to)
          std::copy_n(&buf[sz((r + q) * s)], s, row);
        else
          std::copy_n(row, s, &buf[sz((r + q) * s)]);
      }
      r += s;
    }
  };
  for (index_t k = 0; k < K; ++k) {
    std::uint64_t ops = closure_block(blk(k, k), blk(k, k), blk(k, k), P, s);  // A(X_kk)
    for (index_t j = 0; j < K; ++j)
      if (j != k) ops += closure_block(blk(k, j), blk(k, k), blk(k, j), P, s);  // B(X_kj, X_kk)
    for (index_t i = 0; i < K; ++i)
      if (i != k) ops += closure_block(blk(i, k), blk(i, k), blk(k, k), P, s);  // C(X_ik, X_kk)
    u.cpu(ops);
    if (K == 1) continue;
    // Lines 8-11, D(X_ij, X_ik, X_kj) for i, j != k: X_kj is the resident block and the
    // (K-1) s rows of the blocks X_ik (i != k) stream through it in one call; the integer
    // products accumulate onto X_ij and are clamped to 1 afterwards (one comparison each).
    gather(k, k, strip, false);
    for (index_t j = 0; j < K; ++j) {
      if (j == k) continue;
      gather(k, j, out, false);
      strip_call(u, (K - 1) * s, strip.data(), s, blk(k, j), P, out.data(), s, true);
      for (auto& v : out) v = v > 1 ? 1.0 : v;
      u.cpu(u64(out.size()));
      gather(k, j, out, true);
    }
  }
  return unpad_square(d, P, n);
}

namespace {

TcuRun run_tclosure(TensorUnit& u, const TcuProblem& p) {
  Mat adj;
  index_t n = 0;
  std::string source;
  if (!p.input.empty()) {
    n = read_adjacency(p, "tclosure", adj);
    source = p.input;
  } else {
    n = p.size;
    check_size(p.size_name, "tclosure", n, kMaxDenseSide, "a number of vertices");
    std::mt19937_64 gen(p.seed);
    std::bernoulli_distribution edge(std::min(1.0, 1.5 / dbl(n)));
    adj.assign(sz(n * n), 0.0);
    for (index_t i = 0; i < n; ++i)
      for (index_t j = 0; j < n; ++j)
        if (i != j && edge(gen)) adj[sz(i * n + j)] = 1;
    source = "random directed graph, edge probability 1.5/n, seed " + std::to_string(p.seed);
  }
  check_size(p.size_name, "tclosure", n, kMaxDenseSide, "a number of vertices",
             size_source(p, "/adjacency"));
  const Mat closure = tcu_transitive_closure(u, adj, n);
  const Mat ref = reference_reachability(adj, n);
  index_t pairs = 0;
  for (double v : ref) pairs += v != 0;
  const index_t P = round_up(n, u.side());
  TcuRun run;
  run.verified = closure == ref;
  run.reference = "BFS from every vertex (paths of length >= 1), exact equality";
  run.details = {{"size", n},
                 {"theorem_n", dbl(n)},
                 {"input", source},
                 {"padded_vertices", P},
                 {"padding", P == n ? "none" : "isolated vertices up to a multiple of sqrt(m)"},
                 {"reachable_pairs", pairs}};
  return run;
}

}  // namespace

const TcuAlgorithm tcu_tclosure{"tclosure",     "Theorem 5",      "vertices",       run_tclosure,
                                bound_tclosure, formula_tclosure, exponent_tclosure};

}  // namespace triada
