// Theorem 8 (Sec. 4.6): a linear (n, k)-stencil on a sqrt(n) x sqrt(n) matrix as Theta(n/k^2)
// circular convolutions of 3k x 3k neighbourhoods with the weight matrix W (Lemma 1), W
// itself computed by repeated squaring of P(x, y) with DFT convolutions (Lemma 2); every 2D
// DFT is a batch of row DFTs and a batch of column DFTs on the unit (Theorem 7).
#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_numeric.hpp"

namespace triada {

namespace {

constexpr index_t kStencilMaxSide = 2048;
constexpr index_t kStencilMaxDft = 2048;  // Lemma 1's DFT length: L^2 complex entries per block

// Theorem 8: n max(1, log_m k) + l max(1, log2 k) (constants 1).
double stencil_bound(double n, double m, double l, double k) {
  return n * std::max(1.0, std::log(k) / std::log(m)) + l * std::max(1.0, std::log2(k));
}
// Blocks transformed together: the batch is capped at this many complex entries (memory);
// each batch is one tall product per DFT level, as in Lemma 1.
constexpr index_t kStencilBatchEntries = index_t{1} << 20;

index_t isqrt(std::int64_t m) {
  index_t s = static_cast<index_t>(std::llround(std::sqrt(static_cast<double>(m))));
  while (s * s > m) --s;
  while ((s + 1) * (s + 1) <= m) ++s;
  return s;
}

index_t smallest_power_at_least(index_t v, index_t s) {
  index_t L = s;
  while (L < v) L *= s;
  return L;
}

void transpose_blocks(std::vector<double>& a, index_t count, index_t L) {
  for (index_t b = 0; b < count; ++b) {
    double* p = a.data() + b * L * L;
    for (index_t i = 0; i < L; ++i)
      for (index_t j = i + 1; j < L; ++j) std::swap(p[i * L + j], p[j * L + i]);
  }
}

// 2D DFT of `count` L x L matrices: all rows as one batch, then all columns as one batch.
void dft2(TensorUnit& unit, std::vector<double>& re, std::vector<double>& im, index_t count,
          index_t L, int sign) {
  tcu_batched_dft(unit, re, im, count * L, L, sign);
  transpose_blocks(re, count, L);
  transpose_blocks(im, count, L);
  tcu_batched_dft(unit, re, im, count * L, L, sign);
  transpose_blocks(re, count, L);
  transpose_blocks(im, count, L);
}

// Linear 2D convolution of a d x d array with itself through the DFT (Lemma 2's squaring).
std::vector<double> square_by_dft(TensorUnit& unit, const std::vector<double>& f, index_t d) {
  const index_t out = 2 * d - 1, L = smallest_power_at_least(out, unit.side());
  std::vector<double> re(static_cast<size_t>(L * L), 0.0), im(re.size(), 0.0);
  for (index_t i = 0; i < d; ++i)
    for (index_t j = 0; j < d; ++j) re[i * L + j] = f[i * d + j];
  dft2(unit, re, im, 1, L, -1);
  for (size_t e = 0; e < re.size(); ++e) {  // (a + bi)^2: 5 operations
    const double a = re[e], b = im[e];
    re[e] = a * a - b * b;
    im[e] = 2.0 * a * b;
  }
  unit.cpu(5 * static_cast<std::uint64_t>(L * L));
  dft2(unit, re, im, 1, L, +1);
  std::vector<double> g(static_cast<size_t>(out * out));
  const double scale = 1.0 / static_cast<double>(L * L);
  for (index_t i = 0; i < out; ++i)
    for (index_t j = 0; j < out; ++j) g[i * out + j] = re[i * L + j] * scale;
  unit.cpu(static_cast<std::uint64_t>(out * out));
  return g;
}

// Multiplication by P(x, y) (3 x 3) on the CPU: 9 multiply-adds per input entry.
std::vector<double> times_kernel(TensorUnit* unit, const std::vector<double>& g, index_t d,
                                 const StencilKernel& w) {
  const index_t out = d + 2;
  std::vector<double> h(static_cast<size_t>(out * out), 0.0);
  for (index_t i = 0; i < d; ++i)
    for (index_t j = 0; j < d; ++j)
      for (index_t a = 0; a < 3; ++a)
        for (index_t b = 0; b < 3; ++b) h[(i + a) * out + j + b] += g[i * d + j] * w[a * 3 + b];
  if (unit) unit->cpu(18 * static_cast<std::uint64_t>(d * d));
  return h;
}

// P^u as a (2u+1) x (2u+1) array: P^u = (P^{floor(u/2)})^2 P^{u mod 2} (Lemma 2).
std::vector<double> kernel_power(TensorUnit& unit, const StencilKernel& w, index_t u) {
  if (u == 0) return {1.0};
  if (u == 1) return std::vector<double>(w.begin(), w.end());
  const index_t h = u / 2;
  std::vector<double> g = square_by_dft(unit, kernel_power(unit, w, h), 2 * h + 1);
  if (u % 2 == 1) g = times_kernel(&unit, g, 4 * h + 1, w);
  return g;
}

// The stencil by direct iteration on the window padded with k zero cells per side (exact
// for the whole-plane definition: influence moves one cell per sweep). Uncharged reference.
std::vector<double> stencil_direct(const std::vector<double>& A, index_t N, index_t k,
                                   const StencilKernel& w) {
  const index_t G = N + 2 * k;
  std::vector<double> cur(static_cast<size_t>(G * G), 0.0), nxt(cur.size());
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) cur[(i + k) * G + j + k] = A[i * N + j];
  for (index_t t = 0; t < k; ++t) {
    for (index_t i = 0; i < G; ++i)
      for (index_t j = 0; j < G; ++j) {
        double acc = 0.0;
        for (index_t a = -1; a <= 1; ++a)
          for (index_t b = -1; b <= 1; ++b) {
            const index_t y = i + a, x = j + b;
            if (y < 0 || y >= G || x < 0 || x >= G) continue;
            acc += w[(a + 1) * 3 + b + 1] * cur[y * G + x];
          }
        nxt[i * G + j] = acc;
      }
    cur.swap(nxt);
  }
  std::vector<double> out(static_cast<size_t>(N * N));
  for (index_t i = 0; i < N; ++i)
    for (index_t j = 0; j < N; ++j) out[i * N + j] = cur[(i + k) * G + j + k];
  return out;
}

double max_rel_diff(const std::vector<double>& x, const std::vector<double>& ref) {
  double err = 0.0, scale = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return scale > 0 ? err / scale : err;
}

// sum |x - ref| (p = 1) or ||x - ref||_2 (p = 2), in long double; an empty ref is all
// zeros (the norm of x, without a zero vector as large as x).
double norm_diff(const std::vector<double>& x, const std::vector<double>& ref, int p) {
  long double acc = 0.0L;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double d = std::fabs(static_cast<long double>(x[i]) - (ref.empty() ? 0.0 : ref[i]));
    acc += p == 1 ? d : d * d;
  }
  return static_cast<double>(p == 1 ? acc : std::sqrt(acc));
}

double kernel_l1(const StencilKernel& w) {
  double p = 0.0;
  for (const double v : w) p += std::abs(v);
  return p;
}

}  // namespace

StencilKernel stencil_default_kernel() {
  // Rows: offset a = -1, 0, +1 (i); columns: offset b = -1, 0, +1 (j). Sum = 1.
  return {0.02, 0.10, 0.03,  //
          0.12, 0.40, 0.08,  //
          0.05, 0.15, 0.05};
}

index_t stencil_dft_length(index_t k, index_t s) {
  return smallest_power_at_least(3 * k, s);
}

index_t stencil_default_sweeps(index_t side, std::int64_t m) {
  const index_t s = isqrt(m);
  if (s < 2)
    throw config_error("stencil: needs sqrt(m) >= 2 (m >= 4), got m = " + std::to_string(m));
  const index_t cap = smallest_power_at_least(std::max<index_t>(m, 8), s);
  index_t best = 0, first = 0;
  for (index_t L = s; L <= cap; L *= s) {
    if (L < 8) continue;
    const index_t k = 2 * (L / 6);
    if (first == 0) first = k;
    if (k <= side) best = k;
  }
  return best > 0 ? best : first;
}

std::vector<double> tcu_stencil_weights(TensorUnit& unit, const StencilKernel& w, index_t k) {
  if (k < 0) throw config_error("stencil: the number of sweeps must be >= 0");
  return kernel_power(unit, w, k);
}

std::vector<double> tcu_stencil_matrix(TensorUnit& unit, const std::vector<double>& A, index_t N,
                                       index_t k, const StencilKernel& w, nlohmann::json* details) {
  const index_t s = unit.side();
  if (s < 2)
    throw config_error("stencil: needs sqrt(m) >= 2 (m >= 4), got m = " + std::to_string(unit.m()));
  if (N < 1 || k < 1 || static_cast<index_t>(A.size()) != N * N)
    throw config_error("stencil: needs side >= 1, k >= 1 and an N x N matrix");
  const index_t L = stencil_dft_length(k, s), d = 2 * k + 1;

  // Lemma 2: W, then its circular placement W' (W'[-a mod L][-b mod L] = W[k+a][k+b]) and
  // its spectrum, scaled by 1/L^2 once so that the inverse DFT needs no scaling.
  const std::vector<double> W = tcu_stencil_weights(unit, w, k);
  std::vector<double> wr(static_cast<size_t>(L * L), 0.0), wi(wr.size(), 0.0);
  for (index_t a = -k; a <= k; ++a)
    for (index_t b = -k; b <= k; ++b) wr[((L - a) % L) * L + (L - b) % L] = W[(k + a) * d + k + b];
  dft2(unit, wr, wi, 1, L, -1);
  const double scale = 1.0 / static_cast<double>(L * L);
  for (size_t e = 0; e < wr.size(); ++e) {
    wr[e] *= scale;
    wi[e] *= scale;
  }
  unit.cpu(2 * static_cast<std::uint64_t>(L * L));

  // Lemma 1: one circular convolution per k x k block A_{r,c} with its 3k x 3k neighbourhood
  // A'_{r,c}; A_k's block is entries [k, 2k) x [k, 2k) of the result.
  const index_t R = (N + k - 1) / k, blocks = R * R;
  const index_t per_batch = std::max<index_t>(1, kStencilBatchEntries / (L * L));
  std::vector<double> out(static_cast<size_t>(N * N), 0.0);
  for (index_t b0 = 0; b0 < blocks; b0 += per_batch) {
    const index_t nb = std::min(per_batch, blocks - b0);
    std::vector<double> re(static_cast<size_t>(nb * L * L), 0.0), im(re.size(), 0.0);
    for (index_t q = 0; q < nb; ++q) {
      const index_t r = (b0 + q) / R, c = (b0 + q) % R;
      for (index_t i = 0; i < 3 * k; ++i)
        for (index_t j = 0; j < 3 * k; ++j) {
          const index_t y = (r - 1) * k + i, x = (c - 1) * k + j;
          if (y >= 0 && y < N && x >= 0 && x < N) re[(q * L + i) * L + j] = A[y * N + x];
        }
    }
    dft2(unit, re, im, nb, L, -1);
    for (index_t q = 0; q < nb; ++q)  // point-wise complex product: 6 operations
      for (index_t e = 0; e < L * L; ++e) {
        const index_t f = q * L * L + e;
        const double a = re[f], bb = im[f];
        re[f] = a * wr[e] - bb * wi[e];
        im[f] = a * wi[e] + bb * wr[e];
      }
    unit.cpu(6 * static_cast<std::uint64_t>(nb * L * L));
    dft2(unit, re, im, nb, L, +1);
    for (index_t q = 0; q < nb; ++q) {
      const index_t r = (b0 + q) / R, c = (b0 + q) % R;
      for (index_t i = 0; i < k; ++i)
        for (index_t j = 0; j < k; ++j) {
          const index_t y = r * k + i, x = c * k + j;
          if (y < N && x < N) out[y * N + x] = re[(q * L + k + i) * L + k + j];
        }
    }
  }

  if (details) {
    // Check Lemma 2's W against k direct multiplications by P (uncharged).
    std::vector<double> ref{1.0};
    for (index_t u = 0; u < k; ++u) ref = times_kernel(nullptr, ref, 2 * u + 1, w);
    (*details)["k"] = k;
    (*details)["dft_length"] = L;
    (*details)["neighbourhood"] = 3 * k;
    (*details)["padding"] =
        "3k x 3k neighbourhoods zero-padded to L x L (L = smallest power "
        "of sqrt(m) >= 3k); matrix side padded to a multiple of k with zeros";
    (*details)["blocks"] = blocks;
    (*details)["blocks_per_batch"] = per_batch;
    (*details)["weight_matrix_rel_error"] = max_rel_diff(W, ref);
    // Lemma 2's bound on ||W_hat - P^k||_1 plus the unrolling's own; (1 + 4u): the norm's
    // roundings. ||W_hat||_1 for Lemma 1's bound (tcu_stencil).
    const double p = kernel_l1(w), u = std::ldexp(1.0, -53);
    (*details)["weight_matrix_l1_error"] = norm_diff(W, ref, 1);
    (*details)["weight_matrix_l1_bound"] =
        (tcu_stencil_weights_error_bound(k, s, p) + stencil_iteration_error_bound(k, p, u)) *
        (1.0 + 4.0 * u);
    (*details)["weight_matrix_l1_norm"] = norm_diff(W, {}, 1);
  }
  return out;
}

namespace {

// The kernel of a run: the problem's 9 finite weights, or the default.
StencilKernel run_kernel(const TcuProblem& p) {
  if (p.kernel.empty()) return stencil_default_kernel();
  const std::string name = tcu_in::param_name(p, "kernel");
  if (p.kernel.size() != 9)
    throw config_error("stencil: " + name + " needs 9 weights, got " +
                       std::to_string(p.kernel.size()));
  StencilKernel w{};
  for (size_t i = 0; i < 9; ++i) {
    if (!std::isfinite(p.kernel[i]))
      throw config_error("stencil: " + name + ": a weight is not finite");
    w[i] = p.kernel[i];
  }
  return w;
}

// The number of sweeps k of a run: the problem's, or the default for the side and m. The
// DFT of Lemma 1 has length L = the smallest power of sqrt(m) >= 3k, at most kStencilMaxDft.
index_t run_sweeps(const TcuProblem& p, index_t N, std::int64_t m, index_t s) {
  if (p.sweeps <= 0) return stencil_default_sweeps(N, m);
  const index_t k = p.sweeps;
  if (s >= 2 && (k > kStencilMaxDft || stencil_dft_length(k, s) > kStencilMaxDft))
    throw config_error("stencil: " + tcu_in::param_name(p, "k") + " " + std::to_string(k) +
                       ": the DFT length (the smallest power of sqrt(m) = " + std::to_string(s) +
                       " >= 3k) exceeds " + std::to_string(kStencilMaxDft));
  return k;
}

// The matrix: --input's dataset (default /A, square), or uniform in [-1, 1].
std::vector<double> stencil_input(const TcuProblem& p, index_t& N, std::string& source) {
  if (p.input.empty()) {
    N = p.size;
    tcu_in::check_size(p.size_name, "stencil", N, kStencilMaxSide, "a matrix side");
    std::mt19937_64 gen(p.seed);
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    std::vector<double> A(static_cast<size_t>(N * N));
    for (auto& v : A) v = dist(gen);
    source = "uniform in [-1, 1], seed " + std::to_string(p.seed);
    return A;
  }
  const DatasetRef ref = tcu_in::input_dataset(p, "/A");
  std::vector<double> A;
  N = tcu_in::resolve_size(p, tcu_in::read_square(ref.file, ref.dataset, A), "stencil");
  source = ref.file + ":" + ref.dataset;
  tcu_in::check_size(p.size_name, "stencil", N, kStencilMaxSide, "a matrix side", source);
  return A;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

namespace {

TcuRun run_stencil(TensorUnit& unit, const TcuProblem& p) {
  index_t N = 0;
  std::string source;
  const std::vector<double> A = stencil_input(p, N, source);
  const index_t k = run_sweeps(p, N, unit.m(), unit.side());
  const StencilKernel w = run_kernel(p);
  // (sum |w|)^k bounds sum |W| (Lemma 2's weights) and so every A_t / max|A|: the scale of
  // the errors below, which must stay inside binary64.
  const double p_l1 = kernel_l1(w);
  if (!(std::pow(p_l1, static_cast<double>(k)) * max_abs(A) < 1e300))
    throw config_error("stencil: " + tcu_in::param_name(p, "kernel") + " with " +
                       tcu_in::param_name(p, "k") + " " + std::to_string(k) +
                       ": values grow up to (sum |w|)^k max|A|, beyond binary64");

  TcuRun run;
  const std::vector<double> got = tcu_stencil_matrix(unit, A, N, k, w, &run.details);
  const std::vector<double> ref = stencil_direct(A, N, k, w);
  const double rel = max_rel_diff(got, ref);
  // Lemma 2: W_hat within its a-priori bound. Lemma 1: ||got - ref||_F within the bound of
  // the convolutions given W_hat's error (at most the measured one plus the unrolling's own)
  // and of the direct iteration, times ||A||_F (tcu_error_bounds.hpp); (1 + 4u): the norms.
  const nlohmann::json& d = run.details;
  const double u = std::ldexp(1.0, -53), norms = 1.0 + 4.0 * u;
  const double w_err = d["weight_matrix_l1_error"].get<double>();
  const double iteration = stencil_iteration_error_bound(k, p_l1, u);
  const double lemma1 = tcu_stencil_error_bound(k, unit.side(), (w_err + iteration) * norms,
                                                d["weight_matrix_l1_norm"].get<double>() * norms);
  const double bound = (lemma1 + iteration) * norm_diff(A, {}, 2) * norms;
  const double err = norm_diff(got, ref, 2);
  run.reference = "direct iteration of the 9-point stencil k times (window padded by k zeros)";
  run.verified = err <= bound && w_err <= d["weight_matrix_l1_bound"].get<double>();
  run.details["size"] = N;
  run.details["side"] = N;
  run.details["input"] = source;
  run.details["theorem_n"] = N * N;
  run.details["kernel"] = w;
  run.details["boundary"] = "whole plane, A zero outside the window at t = 0 (paper's Lemma 1)";
  run.details["max_rel_error"] = rel;
  run.details["frobenius_error"] = err;
  run.details["frobenius_error_bound"] = bound;
  run.details["result_head"] =
      std::vector<double>(got.begin(), got.begin() + std::min<index_t>(N, 8));
  run.bound =
      stencil_bound(static_cast<double>(N) * static_cast<double>(N), static_cast<double>(unit.m()),
                    static_cast<double>(unit.latency()), static_cast<double>(k));
  run.bound_formula = "n max(1, log_m k) + l max(1, log2 k), n = side^2, k = " + std::to_string(k);
  return run;
}

// In the theorem's n = side^2 (reported as details.theorem_n); k is the default for the side.
double bound_stencil(double n, double m, double l) {
  const auto side = static_cast<index_t>(std::llround(std::sqrt(n)));
  const double k =
      static_cast<double>(stencil_default_sweeps(side, static_cast<std::int64_t>(std::llround(m))));
  return stencil_bound(n, m, l, k);
}
const char* formula_stencil() {
  return "n max(1, log_m k) + l max(1, log2 k), n = side^2, k = default sweeps";
}
double exponent_stencil() {
  return 1.0;
}

}  // namespace

const TcuAlgorithm tcu_stencil{"stencil",     "Theorem 8",     "matrix side",   run_stencil,
                               bound_stencil, formula_stencil, exponent_stencil};

}  // namespace triada
