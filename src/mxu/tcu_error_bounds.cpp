// Worst-case rounding-error bounds of the numeric TCU algorithms in binary64 (see the header
// for the model and its sources). Notation: u = 2^-53, g_k = gamma_k, s = sqrt(m), ||.||_1
// the sum of |entries|, ||.||_2 the 2-norm (Frobenius for arrays).
#include "mxu/tcu_error_bounds.hpp"

#include <cmath>
#include <numbers>

namespace triada {

namespace {

const double kU = std::ldexp(1.0, -53);

double g(double k) {
  return error_gamma(k, kU);
}

// (1 + e)^k - 1 without cancellation.
double grow(double e, double k) {
  return std::expm1(k * std::log1p(e));
}

index_t levels_of(index_t n, index_t s) {  // d with s^d >= n
  index_t d = 0;
  for (index_t v = 1; v < n; v *= s) ++d;
  return d;
}

index_t power_at_least(index_t v, index_t s) {  // the smallest power of s >= v, at least s
  index_t L = s;
  while (L < v) L *= s;
  return L;
}

// One Cooley-Tukey level (tcu_batched_dft): s-point DFTs z = X^T W_s as 4 real products with
// the sums in the accumulators, then the twiddles. An output z_k is a sum of 2s real
// products per part, within g_2s sum |v_j| |w_hat_jk| <= g_2s (1 + mu) ||v||_1 per part,
// plus mu ||v||_1 for W_s's own error: eta_D = sqrt(2) g_2s (1 + mu) + mu. A twiddle
// product: eta_T = sqrt(2) g_2 (1 + mu) + mu (complex product, twiddle error).
double eta_dft(index_t s, double mu) {
  return std::sqrt(2.0) * g(2.0 * static_cast<double>(s)) * (1.0 + mu) + mu;
}
double eta_twiddle(double mu) {
  return std::sqrt(2.0) * g(2) * (1.0 + mu) + mu;
}

// Componentwise per level, relative to |A_level| |v|: every level matrix has entries of
// modulus 1 and the product of their moduli over all levels is the all-ones matrix (one
// path from each input to each output), so d levels give ((1 + eta)^d - 1) ||x||_1 per
// output (the usual induction, Higham Sec. 24.1 in absolute values).
double eta_level_componentwise(index_t s) {
  const double mu = tcu_twiddle_error_bound();
  return (1.0 + eta_dft(s, mu)) * (1.0 + eta_twiddle(mu)) - 1.0;
}

// In the 2-norm: ||z_hat - z||_2 <= sqrt(s) eta_D ||v||_1 <= s eta_D ||v||_2
// = sqrt(s) eta_D ||z||_2 per block; a level is sqrt(s) times a unitary matrix, so d levels
// give (1 + eta)^d - 1 relative to ||y||_2 (Higham, proof of Thm 24.2).
double eta_level_norm(index_t s) {
  const double mu = tcu_twiddle_error_bound();
  return (1.0 + std::sqrt(static_cast<double>(s)) * eta_dft(s, mu)) * (1.0 + eta_twiddle(mu)) - 1.0;
}

// A 2D DFT of an L x L array (rows, then columns: 2 log_s L levels): per entry within
// delta ||f||_1, in the 2-norm within beta ||F f||_2.
struct Dft2Bound {
  double delta, beta;
};
Dft2Bound dft2_bound(index_t L, index_t s) {
  const auto levels = static_cast<double>(2 * levels_of(L, s));
  return {grow(eta_level_componentwise(s), levels), grow(eta_level_norm(s), levels)};
}

// Lemma 2's squaring g = f * f of a d x d array by 2D DFTs of side L >= 2d - 1
// (square_by_dft). With A = F f (|A_e| <= ||f||_1, |A_hat_e - A_e| <= delta ||f||_1) and
// the square (a + bi)^2 within sqrt(2) g_2 |.|^2, every spectrum entry is within
// c ||f||_1^2, c = (1 + delta)^2 (1 + sqrt(2) g_2) - 1, so the spectrum within L c ||f||_1^2
// in the 2-norm; the inverse DFT adds beta L ||S_hat||_2, and the scaling by 1/L^2 one
// rounding (none for a power of two): ||g_hat - g||_2 <= rho ||f||_1^2 with
// rho = (c + beta (1 + c)) (1 + u). The kept (2d - 1)^2 entries: ||.||_1 <= (2d - 1) ||.||_2.
double squaring_rho(index_t L, index_t s) {
  const Dft2Bound b = dft2_bound(L, s);
  const double c = (1.0 + b.delta) * (1.0 + b.delta) * (1.0 + std::sqrt(2.0) * g(2)) - 1.0;
  return (c + b.beta * (1.0 + c)) * (1.0 + kU);
}

}  // namespace

double error_gamma(double k, double u) {
  return k * u / (1.0 - k * u);
}

// A twiddle from cos and sin of the angle 2 pi e / n computed as (2 pi) e / n: the angle
// within g_3 2 pi (pi, *, / each round once), cos and sin within 1 ulp (<= u below 1), each
// part within 2 pi g_3 + u, the complex within sqrt(2) times that.
double tcu_twiddle_error_bound() {
  return std::sqrt(2.0) * (2.0 * std::numbers::pi * g(3) + kU);
}

double tcu_dft_error_bound(index_t n, index_t s) {
  return grow(eta_level_componentwise(s), static_cast<double>(levels_of(n, s)));
}

double tcu_dft_norm_bound(index_t n, index_t s) {
  return grow(eta_level_norm(s), static_cast<double>(levels_of(n, s)));
}

// E_u = ||W_hat_u - P^u||_1 along kernel_power's recursion P^u = (P^h)^2 P^(u mod 2),
// h = floor(u/2); a_u = p^u >= ||P^u||_1. E_0 = E_1 = 0 (exact). A squaring of
// f_hat = P^h + D (||D||_1 <= E_h): f_hat^2 - f^2 = D * (2f + D) gives E_h (2 a_h + E_h)
// (Young: ||x * y||_1 <= ||x||_1 ||y||_1), the DFT squaring (2d - 1) rho (a_h + E_h)^2.
// An odd step g * P on the CPU: p E + g_9 p (a + E) (9 products per entry).
double tcu_stencil_weights_error_bound(index_t k, index_t s, double p) {
  if (k <= 1) return 0.0;
  const index_t h = k / 2, d = 2 * h + 1, out = 2 * d - 1;
  const double eh = tcu_stencil_weights_error_bound(h, s, p), ah = std::pow(p, h);
  const double f = ah + eh;
  const double e2 = eh * (2.0 * ah + eh) +
                    static_cast<double>(out) * squaring_rho(power_at_least(out, s), s) * f * f;
  if (k % 2 == 0) return e2;
  const double a2 = std::pow(p, 2 * h);
  return p * e2 + g(9) * p * (a2 + e2);
}

// Lemma 1 per k x k output block: c = a * w (circular, L >= 3k: no wrap-around into the
// block) with a the 3k x 3k neighbourhood. With w_hat = W_hat placed circularly
// (||w_hat||_1 <= om, ||w_hat - W||_1 <= E): ||a * (w_hat - W)||_2 <= ||a||_2 E (Young). The
// spectrum of w_hat, scaled by 1/L^2 (one rounding): per entry within dw om, dw = (1 + delta)(1 +
// u) - 1. F a within beta L ||a||_2; the point-wise product within sqrt(2) g_2; so the product
// spectrum is within tau om ||a||_2 / L, tau = beta (1 + dw) + dw + sqrt(2) g_2 (1 + beta)(1 + dw),
// and the inverse DFT adds beta (1 + tau) om ||a||_2: kappa = tau + beta (1 + tau).
// Every entry of A lies in at most 9 neighbourhoods: the sum over blocks gives 3 ||A||_F.
double tcu_stencil_error_bound(index_t k, index_t s, double w_error, double w_norm) {
  const double e = w_error, om = w_norm;
  const Dft2Bound b = dft2_bound(power_at_least(3 * k, s), s);
  const double dw = (1.0 + b.delta) * (1.0 + kU) - 1.0;
  const double tau = b.beta * (1.0 + dw) + dw + std::sqrt(2.0) * g(2) * (1.0 + b.beta) * (1.0 + dw);
  const double kappa = tau + b.beta * (1.0 + tau);
  return 3.0 * (e + om * kappa);
}

// One sweep: every entry a sum of 9 products, within g_9 (|P| * |C_hat|); by Young,
// e_t <= p e_{t-1} + g_9 p (p^(t-1) + e_{t-1}), so e_k <= ((1 + g_9)^k - 1) p^k (relative
// to ||A||_F, or to 1 for W unrolled from the unit array).
double stencil_iteration_error_bound(index_t k, double p, double u) {
  return grow(error_gamma(9, u), static_cast<double>(k)) * std::pow(p, k);
}

// The closed form solves f(2h) = 12 f(h) + 50 h (C11 = M1 + M4 - M5 + M7, whose operand
// sums double the norms: 4 + 2 + 2 + 4 = 12 times f(h); the block additions the linear
// term) from f(s) = s^2: a classical s x s block has |C_hat - C| <= gamma_s |A||B|, at
// most s^2 u ||A|| ||B|| in the max norm.
double strassen_error_factor(index_t D, index_t s) {
  const auto d = static_cast<double>(D), b = static_cast<double>(s);
  return std::pow(d / b, std::log2(12.0)) * (b * b + 5.0 * b) - 5.0 * d;
}

// Theorem 11's evaluation: the term a_h x^h, h = t + j s, goes through x^t (max(0, t - 1)
// roundings), the unit's sum of s products, x^(j s) (j s - 1 roundings for j >= 1), one
// product and the sum of the q = ceil(n/s) column results (q - 1 additions): at most
// h + s + q <= n - 1 + s + q roundings, so |y_hat - y| <= g_(n-1+s+q) sum |a_h| |x|^h.
double tcu_polyeval_error_bound(index_t n, index_t s) {
  const index_t q = (n + s - 1) / s;
  return g(static_cast<double>(n - 1 + s + q));
}

}  // namespace triada
