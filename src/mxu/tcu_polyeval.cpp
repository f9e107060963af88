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
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_numeric.hpp"

namespace triada {

namespace {
constexpr index_t kPolyevalMaxSize = 16384;

// Theorem 11 for p points (constants 1).
double polyeval_bound(double p, double n, double m, double l) {
  return p * n / std::sqrt(m) + p * std::sqrt(m) + n / m * l;
}

// sum_h |a_h| |x|^h by Horner in long double: what bounds the partial sums, and the scale
// of the check's error.
long double magnitude(const std::vector<double>& a, long double ax) {
  long double mag = 0.0L;
  for (size_t j = a.size(); j-- > 0;) mag = mag * ax + std::fabs(static_cast<long double>(a[j]));
  return mag;
}
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

namespace {

// The coefficients (a_0 first) and the points: /coefficients and /points of --input, or
// uniform in [-1, 1] (p = --points, default n).
struct PolyInput {
  std::vector<double> a, x;
  std::string source, rule;
};
PolyInput polyeval_input(const TcuProblem& p, index_t s) {
  PolyInput in;
  if (p.input.empty()) {
    const index_t n = p.size, np = p.points > 0 ? p.points : n;
    if (n < 1 || n > kPolyevalMaxSize)
      throw config_error("polyeval: " + p.size_name + " (coefficients) must be in [1, " +
                         std::to_string(kPolyevalMaxSize) + "], got " + std::to_string(n));
    if (np > kPolyevalMaxSize)
      throw config_error("polyeval: " + tcu_in::param_name(p, "points") + " must be in [1, " +
                         std::to_string(kPolyevalMaxSize) + "], got " + std::to_string(np));
    std::mt19937_64 gen(p.seed);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    in.a.resize(static_cast<size_t>(n));
    in.x.resize(static_cast<size_t>(np));
    for (auto& v : in.a) v = d(gen);
    for (auto& v : in.x) v = d(gen);
    in.source = "seed " + std::to_string(p.seed);
    in.rule = (p.points > 0 ? "p = " + std::to_string(np) : std::string("p = n")) +
              " points, uniform in [-1, 1]; coefficients uniform in [-1, 1]";
    return in;
  }
  const std::string file = tcu_in::input_file(p, "polyeval", "/coefficients and /points");
  in.a = tcu_in::read_vector(file, "/coefficients");
  in.x = tcu_in::read_vector(file, "/points");
  tcu_in::check_size(p.size_name, "polyeval", static_cast<index_t>(in.a.size()), kPolyevalMaxSize,
                     "a number of coefficients", file + ":/coefficients");
  tcu_in::check_size(p.size_name, "polyeval", static_cast<index_t>(in.x.size()), kPolyevalMaxSize,
                     "a number of points", file + ":/points");
  tcu_in::resolve_size(p, static_cast<index_t>(in.a.size()), "polyeval");
  // Every value must stay inside binary64: sum_h |a_h| |x|^h bounds the partial sums, and
  // the powers x^h the algorithm forms go up to h = max(n, sqrt(m)) - 1.
  const long double top = static_cast<long double>(std::numeric_limits<double>::max()) / 4;
  const auto h =
      static_cast<long double>(std::max<index_t>(static_cast<index_t>(in.a.size()), s) - 1);
  for (size_t i = 0; i < in.x.size(); ++i) {
    const long double ax = std::fabs(static_cast<long double>(in.x[i]));
    if (!(magnitude(in.a, ax) <= top) || (ax > 1 && h * std::log(ax) >= std::log(top)))
      throw input_error(file + ":/points: point " + std::to_string(i) +
                        ": sum_h |a_h| |x|^h or x^h overflows binary64");
  }
  in.source = file;
  in.rule = "p = " + std::to_string(in.x.size()) + " points from " + file + ":/points";
  return in;
}

}  // namespace

namespace {

TcuRun run_polyeval(TensorUnit& unit, const TcuProblem& p) {
  const PolyInput in = polyeval_input(p, unit.side());
  const std::vector<double>&a = in.a, &x = in.x;
  const auto n = static_cast<index_t>(a.size()), np = static_cast<index_t>(x.size());
  const std::vector<double> y = tcu_polyeval_points(unit, a, x);

  // Horner in long double; error scaled by sum_h |a_h| |x|^h (the condition of the sum).
  double err = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    long double h = 0.0L;
    const long double xi = x[i], mag = magnitude(a, std::fabs(xi));
    for (size_t j = a.size(); j-- > 0;) h = h * xi + a[j];
    const long double diff = std::fabs(static_cast<long double>(y[i]) - h);
    err = std::max(err, static_cast<double>(mag > 0 ? diff / mag : diff));
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
      {"size", n},
      {"coefficients", n},
      {"points", np},
      {"input", in.source},
      {"points_rule", in.rule},
      {"padding",
       "coefficients padded with zeros to a multiple of sqrt(m); A's columns "
       "to a multiple of sqrt(m); p < sqrt(m) rows padded by the unit call"},
      {"max_scaled_error", err},
      {"max_scaled_error_bound", bound},
      {"result_head", std::vector<double>(y.begin(), y.begin() + std::min<index_t>(np, 8))},
      {"error_measure", "|y - horner| / sum_h |a_h| |x|^h"}};
  if (p.points > 0 || !p.input.empty()) {  // p no longer tied to n
    run.bound = polyeval_bound(static_cast<double>(np), static_cast<double>(n),
                               static_cast<double>(unit.m()), static_cast<double>(unit.latency()));
    run.bound_formula = "p n / sqrt(m) + p sqrt(m) + (n/m) l, p = " + std::to_string(np);
    run.growth_exponent = 1.0;  // in n for a fixed p
  }
  return run;
}

double bound_polyeval(double n, double m, double l) {
  return polyeval_bound(n, n, m, l);  // p = n
}
const char* formula_polyeval() {
  return "p n / sqrt(m) + p sqrt(m) + (n/m) l, p = n";
}
double exponent_polyeval() {
  return 2.0;
}

}  // namespace

const TcuAlgorithm tcu_polyeval{"polyeval",     "Theorem 11",     "coefficients",   run_polyeval,
                                bound_polyeval, formula_polyeval, exponent_polyeval};

}  // namespace triada
