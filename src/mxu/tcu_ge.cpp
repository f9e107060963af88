// Theorem 4: Gaussian elimination without pivoting, Figure 4 (conventions:
// tcu_linear_algebra.hpp).
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
// Theorem 4: forward Gaussian elimination without pivoting, Figure 4, then back
// substitution. Time n^1.5/sqrt(m) + (n/m) l + n sqrt(m) for a sqrt(n) x sqrt(n) matrix
// c = [A b; 0 0] (sqrt(n) - 1 equations).

namespace {

double bound_ge(double n, double m, double l) {
  return std::pow(n, 1.5) / std::sqrt(m) + n / m * l + n * std::sqrt(m);
}
const char* formula_ge() {
  return "n^1.5/sqrt(m) + (n/m) l + n sqrt(m), n = (equations + 1)^2";
}
double exponent_ge() {
  return 1.5;
}

}  // namespace

namespace {

// GE-FORWARD(c) of Figure 4 on the P x P matrix c (P a multiple of s), in place.
// Figure 4 writes the updates of A, B, C as X <- X_ik X_kj / X_kk - X (the negated update,
// which flips the sign of whole rows); we use the unnegated X <- X - X_ik X_kj / X_kk, which
// is the same elimination and keeps D's "X += Y X'" with X'_j = -X_kj / diag consistent.
// A, B, C and back substitution are CPU work; D (lines 8-10) runs on the unit: for each
// j > k, X'_j is the resident block and the (K-k-1) s rows of the block column below X_kk
// are streamed through it in one call, accumulating into X_ij (i > k).
void ge_forward(TensorUnit& u, Mat& c, index_t P) {
  const index_t s = u.side(), K = P / s;
  Mat L(sz(s * s)), Xp(sz(s * s));
  const auto at = [&](index_t i, index_t j) -> double& { return c[sz(i * P + j)]; };
  const auto pivot = [&](index_t row) {
    const double v = at(row, row);
    if (v == 0 || !std::isfinite(v))
      throw input_error("ge: zero pivot at row " + std::to_string(row) +
                        " (elimination without pivoting needs e.g. a diagonally dominant matrix)");
    return v;
  };
  for (index_t k = 0; k < K; ++k) {
    const index_t o = k * s;  // first row/column of block k
    // A(X_kk): eliminate inside the diagonal block; L keeps the multipliers X[i,t]/X[t,t].
    std::uint64_t ops = 0;
    for (index_t t = 0; t + 1 < s; ++t) {
      const double d = pivot(o + t);
      for (index_t i = t + 1; i < s; ++i) {
        const double f = at(o + i, o + t) / d;
        L[sz(i * s + t)] = f;
        for (index_t j = t + 1; j < s; ++j) at(o + i, o + j) -= f * at(o + t, o + j);
        ops += 1 + 2 * u64(s - t - 1);
      }
    }
    // B(X_kj, X_kk, X'_j) for j > k: the same row operations on X_kj, then X'_j = -X_kj/diag.
    // C(X_ik, X_kk) for i > k: eliminate the columns of X_ik with the pivots of X_kk.
    for (index_t jb = k + 1; jb < K; ++jb) {
      const index_t oj = jb * s;
      for (index_t t = 0; t + 1 < s; ++t)
        for (index_t i = t + 1; i < s; ++i) {
          const double f = L[sz(i * s + t)];
          for (index_t j = 0; j < s; ++j) at(o + i, oj + j) -= f * at(o + t, oj + j);
          ops += 2 * u64(s);
        }
    }
    for (index_t ib = k + 1; ib < K; ++ib) {
      const index_t oi = ib * s;
      for (index_t t = 0; t < s; ++t) {
        const double d = pivot(o + t);
        for (index_t i = 0; i < s; ++i) {
          const double f = at(oi + i, o + t) / d;
          for (index_t j = t + 1; j < s; ++j) at(oi + i, o + j) -= f * at(o + t, o + j);
          ops += 1 + 2 * u64(s - t - 1);
        }
      }
    }
    u.cpu(ops);
    // Lines 8-10: D(X_ij, X_ik, X'_j) on the unit.
    const index_t rows = (K - k - 1) * s;
    for (index_t jb = k + 1; jb < K; ++jb) {
      const index_t oj = jb * s;
      for (index_t i = 0; i < s; ++i) {
        const double r = -1.0 / pivot(o + i);
        for (index_t j = 0; j < s; ++j) Xp[sz(i * s + j)] = r * at(o + i, oj + j);
      }
      u.cpu(u64(s + s * s));
      strip_call(u, rows, &at(o + s, o), P, Xp.data(), s, &at(o + s, oj), P, true);
    }
  }
}

}  // namespace

std::vector<double> reference_solve(std::vector<double> a, std::vector<double> b, index_t N) {
  for (index_t k = 0; k < N; ++k) {
    index_t piv = k;
    for (index_t i = k + 1; i < N; ++i)
      if (std::abs(a[sz(i * N + k)]) > std::abs(a[sz(piv * N + k)])) piv = i;
    if (a[sz(piv * N + k)] == 0) throw input_error("ge: the matrix is singular");
    if (piv != k) {
      for (index_t j = 0; j < N; ++j) std::swap(a[sz(k * N + j)], a[sz(piv * N + j)]);
      std::swap(b[sz(k)], b[sz(piv)]);
    }
    for (index_t i = k + 1; i < N; ++i) {
      const double f = a[sz(i * N + k)] / a[sz(k * N + k)];
      if (f == 0) continue;
      for (index_t j = k; j < N; ++j) a[sz(i * N + j)] -= f * a[sz(k * N + j)];
      b[sz(i)] -= f * b[sz(k)];
    }
  }
  std::vector<double> x(sz(N));
  for (index_t i = N - 1; i >= 0; --i) {
    double acc = b[sz(i)];
    for (index_t j = i + 1; j < N; ++j) acc -= a[sz(i * N + j)] * x[sz(j)];
    x[sz(i)] = acc / a[sz(i * N + i)];
  }
  return x;
}

std::vector<double> tcu_ge_solve(TensorUnit& u, const std::vector<double>& A,
                                 const std::vector<double>& b, index_t N, nlohmann::json* details) {
  const index_t s = u.side(), Q = N + 1, P = round_up(Q, s);
  // c = [A 0 b; 0 I 0; 0 0 0] (P x P): A top left, b in the last column, the zero row last
  // (the paper's layout when P = N + 1); padding rows/columns N..P-2 are the identity, i.e.
  // the extra equations x_pad = 0, which leave the system and its elimination unchanged.
  Mat c(sz(P * P), 0.0);
  for (index_t i = 0; i < N; ++i) {
    std::copy_n(&A[sz(i * N)], N, &c[sz(i * P)]);
    c[sz(i * P + P - 1)] = b[sz(i)];
  }
  for (index_t i = N; i + 1 < P; ++i) c[sz(i * P + i)] = 1.0;
  ge_forward(u, c, P);
  // Back substitution (CPU): 2 operations per term, 1 division per unknown.
  std::vector<double> x(sz(N));
  for (index_t i = N - 1; i >= 0; --i) {
    double acc = c[sz(i * P + P - 1)];
    for (index_t j = i + 1; j < N; ++j) acc -= c[sz(i * P + j)] * x[sz(j)];
    x[sz(i)] = acc / c[sz(i * P + i)];
  }
  u.cpu(u64(N * (N - 1) + N));
  if (details) {
    (*details)["matrix_side"] = Q;
    (*details)["padded_side"] = P;
    (*details)["padding"] =
        P == Q ? "none" : "identity rows/columns (x_pad = 0) before the b column";
  }
  return x;
}

namespace {

TcuRun run_ge(TensorUnit& u, const TcuProblem& p) {
  index_t N = 0;
  Mat A;
  std::vector<double> b;
  std::string source;
  if (!p.input.empty()) {
    const std::string file = input_file(p, "ge", "/A and /b");
    N = resolve_size(p, read_square(file, "/A", A), "ge");
    b = tcu_in::read_vector(file, "/b");  // finite, as every input (core/finite.hpp)
    if (static_cast<index_t>(b.size()) != N)
      throw input_error(file + ":/b: expected " + std::to_string(N) +
                        " values (one per row of /A)");
    source = p.input;
  } else {
    N = p.size;
    check_size(p.size_name, "ge", N, kMaxDenseSide - 1, "a number of equations");
    std::mt19937_64 gen(p.seed);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    A.resize(sz(N * N));
    b.resize(sz(N));
    for (index_t i = 0; i < N; ++i) {
      double row = 0;
      for (index_t j = 0; j < N; ++j)
        if (j != i) row += std::abs(A[sz(i * N + j)] = d(gen));
      A[sz(i * N + i)] = row + 1.0;  // strictly diagonally dominant: no pivoting needed
      b[sz(i)] = d(gen);
    }
    source = "random strictly diagonally dominant system, seed " + std::to_string(p.seed);
  }
  check_size(p.size_name, "ge", N, kMaxDenseSide - 1, "a number of equations",
             size_source(p, "/A"));
  TcuRun run;
  run.details = {{"size", N}, {"theorem_n", dbl(N + 1) * dbl(N + 1)}, {"input", source}};
  const std::vector<double> x = tcu_ge_solve(u, A, b, N, &run.details);

  const std::vector<double> xr = reference_solve(A, b, N);
  double err = 0, xnorm = 0, res = 0, anorm = 0, bnorm = 0, xn = 0;
  for (index_t i = 0; i < N; ++i) {
    err = std::max(err, std::abs(x[sz(i)] - xr[sz(i)]));
    xnorm = std::max(xnorm, std::abs(xr[sz(i)]));
    xn = std::max(xn, std::abs(x[sz(i)]));
    bnorm = std::max(bnorm, std::abs(b[sz(i)]));
    double r = -b[sz(i)], arow = 0;
    for (index_t j = 0; j < N; ++j) {
      r += A[sz(i * N + j)] * x[sz(j)];
      arow += std::abs(A[sz(i * N + j)]);
    }
    res = std::max(res, std::abs(r));
    anorm = std::max(anorm, arow);
  }
  const double rel_err = xnorm > 0 ? err / xnorm : err;
  const double denom = anorm * xn + bnorm;
  const double rel_res = denom > 0 ? res / denom : res;
  run.verified = std::isfinite(rel_err) && rel_err <= 1e-9 && rel_res <= 1e-12;
  run.reference =
      "CPU Gaussian elimination with partial pivoting: ||x - x_ref||inf / ||x_ref||inf <= 1e-9, "
      "and ||Ax - b||inf / (||A||inf ||x||inf + ||b||inf) <= 1e-12";
  run.details["relative_error"] = rel_err;
  run.details["relative_residual"] = rel_res;
  return run;
}

}  // namespace

const TcuAlgorithm tcu_ge{"ge",       "Theorem 4", "number of equations", run_ge, bound_ge,
                          formula_ge, exponent_ge};

}  // namespace triada
