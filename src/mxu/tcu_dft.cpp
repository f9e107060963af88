// Theorem 7 (Sec. 4.5): the DFT of n = s^d points by Cooley-Tukey with n1 = s = sqrt(m),
// the s-point DFTs of every level done as one tall product X^T W_s on the tensor unit.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <random>
#include <string>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_numeric.hpp"

namespace triada {

namespace {

// e^{sign 2 pi i e / n}, exact at quarter turns (so W_4 holds exact 0 and +-1).
cplx unit_root(index_t e, index_t n, int sign) {
  e %= n;
  if ((4 * e) % n == 0) {
    switch ((4 * e) / n) {
      case 0:
        return {1.0, 0.0};
      case 1:
        return {0.0, static_cast<double>(sign)};
      case 2:
        return {-1.0, 0.0};
      default:
        return {0.0, -static_cast<double>(sign)};
    }
  }
  const double th = 2.0 * std::numbers::pi * static_cast<double>(e) / static_cast<double>(n);
  return {std::cos(th), static_cast<double>(sign) * std::sin(th)};
}

bool is_power_of(index_t n, index_t s) {
  if (n < 1 || s < 2) return n == 1;
  while (n % s == 0) n /= s;
  return n == 1;
}

constexpr index_t kDftMaxSize = index_t{1} << 22;

// The run's own check: the direct sum per output in long double (every output up to 4096
// points, 64 random ones beyond), in blocks of kRefBlock terms. An output's error is at most
// B ||x||_1 (tcu_dft_error_bound, componentwise) plus the reference's own: its binary64
// twiddles (mu ||x||_1), its long double sums (per part, a term meets 2 + kRefBlock +
// ceil(n / kRefBlock) roundings: sqrt(2) g (1 + mu) ||x||_1) and the rounding to binary64
// (u |ref|). err and scale: max |y - ref| and max |ref| over the checked outputs.
struct DftCheck {
  double err = 0.0, scale = 0.0, bound = 0.0;
  index_t outputs = 0;
};

constexpr index_t kRefBlock = 1024;

cplx direct_dft_output(const std::vector<cplx>& x, const std::vector<cplx>& tw, index_t k) {
  const auto n = static_cast<index_t>(x.size());
  long double sr = 0.0L, si = 0.0L;
  for (index_t j0 = 0; j0 < n; j0 += kRefBlock) {
    long double br = 0.0L, bi = 0.0L;
    for (index_t j = j0; j < std::min(n, j0 + kRefBlock); ++j) {
      const cplx w = tw[(j * k) % n];
      br += static_cast<long double>(x[j].real()) * w.real() -
            static_cast<long double>(x[j].imag()) * w.imag();
      bi += static_cast<long double>(x[j].real()) * w.imag() +
            static_cast<long double>(x[j].imag()) * w.real();
    }
    sr += br;
    si += bi;
  }
  return {static_cast<double>(sr), static_cast<double>(si)};
}

DftCheck check_dft(const std::vector<cplx>& x, const std::vector<cplx>& y, index_t s,
                   std::uint64_t seed) {
  const auto n = static_cast<index_t>(x.size());
  std::vector<index_t> outs;
  if (n <= 4096) {
    for (index_t k = 0; k < n; ++k) outs.push_back(k);
  } else {
    std::mt19937_64 pick(seed ^ 0x9e3779b97f4a7c15ULL);
    std::uniform_int_distribution<index_t> dk(0, n - 1);
    for (int i = 0; i < 64; ++i) outs.push_back(dk(pick));
  }
  std::vector<cplx> tw(static_cast<size_t>(n));
  for (index_t e = 0; e < n; ++e) {
    const double th = -2.0 * std::numbers::pi * static_cast<double>(e) / static_cast<double>(n);
    tw[e] = {std::cos(th), std::sin(th)};
  }
  DftCheck c;
  for (const index_t k : outs) {
    const cplx ref = direct_dft_output(x, tw, k);
    c.err = std::max(c.err, std::abs(y[k] - ref));
    c.scale = std::max(c.scale, std::abs(ref));
  }
  long double x1 = 0.0L;
  for (const cplx& v : x) x1 += std::abs(static_cast<std::complex<long double>>(v));
  const double u = std::ldexp(1.0, -53), mu = tcu_twiddle_error_bound();
  const double ul = std::numeric_limits<long double>::epsilon() / 2;
  const double gl =
      error_gamma(static_cast<double>(2 + kRefBlock + (n + kRefBlock - 1) / kRefBlock), ul);
  const double ref = mu + std::sqrt(2.0) * gl * (1.0 + mu) + u * (1.0 + mu) * (1.0 + 2.0 * gl);
  // (1 + 2 n ul): ||x||_1 summed in long double; (1 + 4u): err's own roundings.
  c.bound = (tcu_dft_error_bound(n, s) + ref) * static_cast<double>(x1) *
            (1.0 + 2.0 * static_cast<double>(n) * ul) * (1.0 + 4.0 * u);
  c.outputs = static_cast<index_t>(outs.size());
  return c;
}

}  // namespace

void tcu_tall_multiply(TensorUnit& unit, index_t r, const double* A, index_t lda, const double* B,
                       index_t ldb, double* C, index_t ldc, bool accumulate) {
  const index_t s = unit.side();
  if (!unit.weak() && r >= s) {
    unit.multiply(r, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  // Weak unit: chunks of s rows; a short chunk (or r < s) is padded with zero rows.
  for (index_t base = 0; base < r; base += s) {
    const index_t rows = std::min(s, r - base);
    if (rows == s) {
      unit.multiply(s, A + base * lda, lda, B, ldb, C + base * ldc, ldc, accumulate);
      continue;
    }
    std::vector<double> pa(static_cast<size_t>(s * s), 0.0), pc(static_cast<size_t>(s * s), 0.0);
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < s; ++j) {
        pa[i * s + j] = A[(base + i) * lda + j];
        if (accumulate) pc[i * s + j] = C[(base + i) * ldc + j];
      }
    unit.multiply(s, pa.data(), s, B, ldb, pc.data(), s, accumulate);
    for (index_t i = 0; i < rows; ++i)
      for (index_t j = 0; j < s; ++j) C[(base + i) * ldc + j] = pc[i * s + j];
  }
}

void tcu_batched_dft(TensorUnit& unit, std::vector<double>& re, std::vector<double>& im,
                     index_t count, index_t n, int sign) {
  if (n == 1 || count == 0) return;
  const index_t s = unit.side();
  const index_t n2 = n / s;
  const index_t rows = count * n2;  // one s-point DFT per row: X^T of every vector
  // W_s, and -Im(W_s) for the real part's second product.
  std::vector<double> wr(static_cast<size_t>(s * s)), wi(wr.size()), nwi(wr.size());
  for (index_t j = 0; j < s; ++j)
    for (index_t k = 0; k < s; ++k) {
      const cplx w = unit_root(j * k, s, sign);
      wr[j * s + k] = w.real();
      wi[j * s + k] = w.imag();
      nwi[j * s + k] = -w.imag();
    }
  // Arrange x_b as the s x n2 matrix X (x_b[n2 j1 + j2] = X[j1][j2]); row (b, j2) of the
  // left operand is column j2 of X.
  std::vector<double> tr(static_cast<size_t>(rows * s)), ti(tr.size());
  for (index_t b = 0; b < count; ++b)
    for (index_t j1 = 0; j1 < s; ++j1)
      for (index_t j2 = 0; j2 < n2; ++j2) {
        tr[(b * n2 + j2) * s + j1] = re[b * n + n2 * j1 + j2];
        ti[(b * n2 + j2) * s + j1] = im[b * n + n2 * j1 + j2];
      }
  // Complex product as 4 real unit products; the sums happen in the accumulators.
  std::vector<double> yr(tr.size()), yi(tr.size());
  tcu_tall_multiply(unit, rows, tr.data(), s, wr.data(), s, yr.data(), s, false);
  tcu_tall_multiply(unit, rows, ti.data(), s, nwi.data(), s, yr.data(), s, true);
  tcu_tall_multiply(unit, rows, tr.data(), s, wi.data(), s, yi.data(), s, false);
  tcu_tall_multiply(unit, rows, ti.data(), s, wr.data(), s, yi.data(), s, true);
  if (n2 == 1) {
    re.swap(yr);
    im.swap(yi);
    return;
  }
  // Twiddles w_n^{j2 k1} (CPU, 6 real operations per non-trivial complex product), then
  // the transpose: row (b, k1) of length n2 for the recursive DFTs.
  std::vector<cplx> tw(static_cast<size_t>(n));
  for (index_t e = 0; e < n; ++e) tw[e] = unit_root(e, n, sign);
  std::uint64_t ops = 0;
  for (index_t b = 0; b < count; ++b)
    for (index_t j2 = 0; j2 < n2; ++j2)
      for (index_t k1 = 0; k1 < s; ++k1) {
        const index_t src = (b * n2 + j2) * s + k1, dst = (b * s + k1) * n2 + j2;
        double xr = yr[src], xi = yi[src];
        if (j2 * k1 != 0) {
          const cplx w = tw[j2 * k1];
          const double t = xr * w.real() - xi * w.imag();
          xi = xr * w.imag() + xi * w.real();
          xr = t;
          ops += 6;
        }
        tr[dst] = xr;
        ti[dst] = xi;
      }
  unit.cpu(ops);
  yr.clear();
  yi.clear();
  tcu_batched_dft(unit, tr, ti, count * s, n2, sign);
  // y_b[k1 + s k2] = Z[b][k1][k2]: the final matrix read in column-major order.
  for (index_t b = 0; b < count; ++b)
    for (index_t k1 = 0; k1 < s; ++k1)
      for (index_t k2 = 0; k2 < n2; ++k2) {
        re[b * n + k1 + s * k2] = tr[(b * s + k1) * n2 + k2];
        im[b * n + k1 + s * k2] = ti[(b * s + k1) * n2 + k2];
      }
}

std::vector<cplx> tcu_dft_vector(TensorUnit& unit, const std::vector<cplx>& x) {
  const index_t n = static_cast<index_t>(x.size()), s = unit.side();
  if (s < 2)
    throw config_error("dft: needs sqrt(m) >= 2 (m >= 4), got m = " + std::to_string(unit.m()));
  if (!is_power_of(n, s))
    throw config_error("dft: the length n = " + std::to_string(n) +
                       " must be a power of sqrt(m) = " + std::to_string(s));
  std::vector<double> re(x.size()), im(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    re[i] = x[i].real();
    im[i] = x[i].imag();
  }
  tcu_batched_dft(unit, re, im, 1, n, -1);
  std::vector<cplx> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = {re[i], im[i]};
  return y;
}

namespace {
// The input vector: --input's dataset (default /x), or uniform in [-1, 1] (both parts).
std::vector<cplx> dft_input(const TcuProblem& p, index_t s, std::string& source) {
  if (p.input.empty()) {
    const index_t n = p.size;
    if (n < 1 || n > kDftMaxSize)
      throw config_error("dft: " + p.size_name + " (vector length) must be in [1, " +
                         std::to_string(kDftMaxSize) + "], got " + std::to_string(n));
    std::mt19937_64 gen(p.seed);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    std::vector<cplx> x(static_cast<size_t>(n));
    for (auto& v : x) v = {d(gen), d(gen)};
    source = "uniform in [-1, 1] (real and imaginary parts), seed " + std::to_string(p.seed);
    return x;
  }
  const DatasetRef ref = tcu_in::input_dataset(p, "/x");
  const std::string name = ref.file + ":" + ref.dataset;
  std::vector<cplx> x = tcu_in::read_complex_vector(ref.file, ref.dataset);
  const index_t n = tcu_in::resolve_size(p, static_cast<index_t>(x.size()), "dft");
  tcu_in::check_size(p.size_name, "dft", n, kDftMaxSize, "a vector length", name);
  if (s >= 2 && !is_power_of(n, s))
    throw input_error(name + ": the length " + std::to_string(n) + " is not a power of sqrt(m) = " +
                      std::to_string(s) + " (dft, Theorem 7's Cooley-Tukey with n1 = sqrt(m))");
  source = name;
  return x;
}
// The first outputs as [re, im] pairs (the report's sample of the result).
nlohmann::json result_head(const std::vector<cplx>& y) {
  nlohmann::json h = nlohmann::json::array();
  for (size_t k = 0; k < y.size() && k < 8; ++k) h.push_back({y[k].real(), y[k].imag()});
  return h;
}
}  // namespace

namespace {

TcuRun run_dft(TensorUnit& unit, const TcuProblem& p) {
  const index_t s = unit.side();
  std::string source;
  const std::vector<cplx> x = dft_input(p, s, source);
  const auto n = static_cast<index_t>(x.size());
  const std::vector<cplx> y = tcu_dft_vector(unit, x);

  const DftCheck check = check_dft(x, y, s, p.seed);
  const double rel = check.scale > 0 ? check.err / check.scale : check.err;
  index_t levels = 0;
  for (index_t v = n; v > 1; v /= s) ++levels;

  TcuRun run;
  run.reference = n <= 4096 ? "direct O(n^2) DFT" : "direct DFT on 64 random outputs";
  run.verified = check.err <= check.bound;
  run.details = {
      {"n", n},
      {"size", n},
      {"input", source},
      {"sqrt_m", s},
      {"levels", levels},
      {"complex_product",
       "4 real unit products per complex block product, sums in the "
       "cell accumulators"},
      {"checked_outputs", check.outputs},
      {"result_head", result_head(y)},
      {"max_rel_error", rel},
      {"max_rel_error_bound", check.scale > 0 ? check.bound / check.scale : check.bound}};
  return run;
}

double bound_dft(double n, double m, double l) {
  return (n + l) * std::max(1.0, std::log(n) / std::log(m));
}
const char* formula_dft() {
  return "(n + l) max(1, log_m n)";
}
double exponent_dft() {
  return 1.0;
}

}  // namespace

const TcuAlgorithm tcu_dft{"dft",     "Theorem 7", "vector length", run_dft,
                           bound_dft, formula_dft, exponent_dft};

}  // namespace triada
