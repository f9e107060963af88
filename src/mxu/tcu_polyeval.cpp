// Theorem 11 (Sec. 4.8): a degree n-1 polynomial at p points. X (p x s, row i = the powers
// x_i^0 .. x_i^{s-1}) times A (s x n/s, the coefficients in column-major order) on the unit,
// s columns of A per call; then A(x_i) = sum_j C[i][j] x_i^{j s} on the CPU.
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_numeric.hpp"

namespace triada {

namespace {
constexpr index_t kPolyevalMaxSize = 16384;
}  // namespace

std::vector<double> tcu_polyeval_points(TensorUnit& unit, const std::vector<double>& coeffs,
                                        const std::vector<double>& points) {
  const index_t s = unit.side(), n = static_cast<index_t>(coeffs.size()),
                p = static_cast<index_t>(points.size());
  if (n < 1 || p < 1) throw config_error("polyeval: needs at least one coefficient and one point");
  const index_t q = (n + s - 1) / s;  // columns of A; coefficients padded with zeros to q s
  std::uint64_t ops = 0;
  // Powers x_i^0 .. x_i^{s-1} (X) and x_i^s.
  std::vector<double> X(static_cast<size_t>(p * s)), xs(static_cast<size_t>(p));
  for (index_t i = 0; i < p; ++i) {
    double v = 1.0;
    for (index_t t = 0; t < s; ++t) {
      X[i * s + t] = v;
      v *= points[i];
    }
    xs[i] = v;
  }
  ops += static_cast<std::uint64_t>(p * s);
  std::vector<double> result(static_cast<size_t>(p), 0.0), cur(static_cast<size_t>(p), 1.0);
  std::vector<double> B(static_cast<size_t>(s * s)), C(static_cast<size_t>(p * s));
  for (index_t j0 = 0; j0 < q; j0 += s) {
    const index_t cols = std::min(s, q - j0);
    std::fill(B.begin(), B.end(), 0.0);
    for (index_t t = 0; t < s; ++t)
      for (index_t jj = 0; jj < cols; ++jj) {
        const index_t h = t + (j0 + jj) * s;
        if (h < n) B[t * s + jj] = coeffs[h];
      }
    tcu_tall_multiply(unit, p, X.data(), s, B.data(), s, C.data(), s, false);
    // result_i += C[i][j] x_i^{j s}; x_i^{(j+1) s} = x_i^{j s} x_i^s (3 operations).
    for (index_t jj = 0; jj < cols; ++jj)
      for (index_t i = 0; i < p; ++i) {
        result[i] += C[i * s + jj] * cur[i];
        cur[i] *= xs[i];
      }
    ops += 3 * static_cast<std::uint64_t>(cols * p);
  }
  unit.cpu(ops);
  return result;
}

TcuRun tcu_polyeval(TensorUnit& unit, const TcuProblem& p) {
  const index_t n = p.size;
  if (n < 1 || n > kPolyevalMaxSize)
    throw config_error("polyeval: " + p.size_name + " (coefficients) must be in [1, " +
                       std::to_string(kPolyevalMaxSize) + "], got " + std::to_string(n));
  std::mt19937_64 gen(p.seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<double> a(static_cast<size_t>(n)), x(static_cast<size_t>(n));  // p = n points
  for (auto& v : a) v = d(gen);
  for (auto& v : x) v = d(gen);
  const std::vector<double> y = tcu_polyeval_points(unit, a, x);

  // Horner in long double; error scaled by sum_h |a_h| |x|^h (the condition of the sum).
  double err = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    long double h = 0.0L, mag = 0.0L;
    const long double xi = x[i];
    for (size_t j = a.size(); j-- > 0;) {
      h = h * xi + a[j];
      mag = mag * std::fabs(xi) + std::fabs(static_cast<long double>(a[j]));
    }
    err = std::max(err, static_cast<double>(std::fabs(static_cast<long double>(y[i]) - h) / mag));
  }
  // The unit's bound (tcu_polyeval_error_bound) plus Horner's own in long double (2n
  // roundings, also in the scale): (g + gl) / (1 - gl); (1 + 2u): err's rounding to double.
  const double gl =
      error_gamma(2.0 * static_cast<double>(n), std::numeric_limits<long double>::epsilon() / 2);
  const double bound = (tcu_polyeval_error_bound(n, unit.side()) + gl) / (1.0 - gl) *
                       (1.0 + 2.0 * std::ldexp(1.0, -53));
  TcuRun run;
  run.reference = "Horner in long double";
  run.verified = err <= bound;
  run.details = {
      {"coefficients", n},
      {"points", n},
      {"points_rule", "p = n points, uniform in [-1, 1]; coefficients uniform in [-1, 1]"},
      {"padding",
       "coefficients padded with zeros to a multiple of sqrt(m); A's columns "
       "to a multiple of sqrt(m); p < sqrt(m) rows padded by the unit call"},
      {"max_scaled_error", err},
      {"max_scaled_error_bound", bound},
      {"error_measure", "|y - horner| / sum_h |a_h| |x|^h"}};
  return run;
}

double bound_polyeval(double n, double m, double l) {
  const double p = n;
  return p * n / std::sqrt(m) + p * std::sqrt(m) + n / m * l;
}
const char* formula_polyeval() {
  return "p n / sqrt(m) + p sqrt(m) + (n/m) l, p = n";
}
double exponent_polyeval() {
  return 2.0;
}

}  // namespace triada
