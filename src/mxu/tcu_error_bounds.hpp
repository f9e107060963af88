#pragma once
// A-priori rounding-error bounds of the numeric TCU algorithms in binary64 (fp64 cells), the
// tolerances of their own checks (tcu_dft, tcu_stencil, tcu_polyeval). The paper states no
// error bounds (its model has exact arithmetic, Sec. 3); these are the standard worst-case
// ones of Higham, "Accuracy and Stability of Numerical Algorithms" (2nd ed.): the model
// fl(x op y) = (x op y)(1 + d), |d| <= u (Sec. 2.2), gamma_k = k u / (1 - k u) (Lemma 3.1),
// a sum of k products (any order, with or without FMA) within gamma_k sum |x_i y_i|
// (Sec. 3.1), a complex product within sqrt(2) gamma_2 |x| |y| (Lemma 3.5). The derivations
// are in tcu_error_bounds.cpp; the tests (tests/unit/test_tcu_numeric.cpp) derive the same
// bounds independently and check the algorithms against their own oracles with them.
//
// Assumed beyond IEEE arithmetic: the C library's cos and sin within 1 ulp (glibc's
// documented maximum for binary64). Underflow is not modelled.
#include <cstdint>

#include "core/types.hpp"

namespace triada {

// gamma_k for a unit roundoff u (u = 2^-53 for binary64).
double error_gamma(double k, double u);

// |w_hat - w| of a twiddle e^{2 pi i e / n} computed as cos and sin of (2 pi) e / n.
double tcu_twiddle_error_bound();

// tcu_batched_dft of length n = s^d: every output within
// tcu_dft_error_bound(n, s) * sum_j |x_j| of the exact DFT (componentwise).
double tcu_dft_error_bound(index_t n, index_t s);
// ... and in the 2-norm: ||y_hat - y||_2 <= tcu_dft_norm_bound(n, s) ||y||_2.
double tcu_dft_norm_bound(index_t n, index_t s);

// Lemma 2's W = P^k (tcu_stencil_weights): ||W_hat - P^k||_1 (sum of |entries|) at most
// tcu_stencil_weights_error_bound(k, s, p), with p = sum |w| of the 3 x 3 kernel.
double tcu_stencil_weights_error_bound(index_t k, index_t s, double p);
// tcu_stencil_matrix (Lemma 1) with a computed W_hat of ||W_hat - P^k||_1 <= w_error and
// ||W_hat||_1 <= w_norm: ||A_k_hat - A_k||_F <= tcu_stencil_error_bound(...) ||A||_F.
// A priori: w_error = tcu_stencil_weights_error_bound, w_norm = p^k + w_error.
double tcu_stencil_error_bound(index_t k, index_t s, double w_error, double w_norm);
// k sweeps of direct iteration in a precision of unit roundoff u (the references):
// ||C_hat - A_k||_F <= bound ||A||_F, and the same bound for ||W_hat - P^k||_1 unrolled.
double stencil_iteration_error_bound(index_t k, double p, double u);

// Strassen's method on D x D matrices (D = s 2^k) whose s x s blocks are multiplied
// classically: ||C_hat - C|| <= strassen_error_factor(D, s) u ||A|| ||B|| + O(u^2) in the max
// norm ||X|| = max |x_ij| (Higham, Sec. 23.2.2, Theorem 23.2, Brent's bound, with n = D and
// n0 = s). The factor [(D/s)^log2(12) (s^2 + 5 s) - 5 D] bounds every entry's error by the
// largest operands, not by that entry's own |A||B|: the entrywise bound of the classical
// product does not hold for Strassen's method.
double strassen_error_factor(index_t D, index_t s);

// tcu_polyeval_points with n coefficients on a unit of side s:
// |y_hat - A(x)| <= tcu_polyeval_error_bound(n, s) * sum_h |a_h| |x|^h.
double tcu_polyeval_error_bound(index_t n, index_t s);

}  // namespace triada
