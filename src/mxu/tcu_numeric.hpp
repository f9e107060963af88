#pragma once
// The numeric TCU algorithms of "A Computational Model for Tensor Core Units" (Sec. 4.5-4.8):
// DFT (Theorem 7), linear stencils (Theorem 8 with Lemmas 1 and 2), integer multiplication
// (Theorem 9, Toeplitz schoolbook; Theorem 10, Karatsuba) and batch polynomial evaluation
// (Theorem 11). The tcu_X entry points (tcu_algorithms.hpp) generate inputs from the seed,
// run these functions and verify; the functions below take explicit inputs and return the
// result so that tests can compare with FFTW, GMP, direct iteration and Horner.
//
// Cost accounting: every product of the algorithm runs on the TensorUnit (its calls and
// r * sqrt(m) + l time); scalar arithmetic outside the unit (twiddles, point-wise products,
// carries, additions, powers) is charged with TensorUnit::cpu, one unit per operation.
// Pure data movement (transposes, copies, zero padding, splitting bits into limbs) and
// constants that depend only on the sizes (DFT matrices, twiddle tables, the stencil
// kernel) are not charged: cpu() counts arithmetic and comparisons only.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/types.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada {

// C (r x s) (+)= A (r x s) * B (s x s), s = unit.side(), for any r >= 1: one tall call on a
// TCU; on a weak unit (Theorem 12) one call per chunk of s rows. Rows r < s (or a last weak
// chunk) are padded with zero rows, which the call pays for (r * s + l with r = s).
void tcu_tall_multiply(TensorUnit& unit, index_t r, const double* A, index_t lda, const double* B,
                       index_t ldb, double* C, index_t ldc, bool accumulate);

// ---- Theorem 7: DFT ------------------------------------------------------------------
// Batched Cooley-Tukey with n1 = s = sqrt(m): `count` vectors of length n (row-major, split
// real/imaginary parts) are transformed in place, y[k] = sum_j x[j] e^{sign 2 pi i j k / n}
// (sign = -1 forward, +1 inverse without the 1/n). All vectors go through each recursion
// level together: one tall product of (count n / s) x s rows by W_s per level (Lemma 1's
// concurrent DFTs). A complex block product is 4 real unit products (Re = Xr Wr + Xi (-Wi),
// Im = Xr Wi + Xi Wr; the two sums happen in the cells' accumulators). Twiddles are
// charged 6 operations per non-trivial complex multiplication. n must be s^d (d >= 0).
void tcu_batched_dft(TensorUnit& unit, std::vector<double>& re, std::vector<double>& im,
                     index_t count, index_t n, int sign);
// Forward DFT of x; throws config_error unless n = |x| is a power of s (s >= 2).
std::vector<cplx> tcu_dft_vector(TensorUnit& unit, const std::vector<cplx>& x);

// ---- Theorem 8, Lemmas 1 and 2: linear (n, k)-stencils --------------------------------
// The stencil: A_t[i][j] = sum_{a, b in {-1,0,1}} w[(a+1)*3 + (b+1)] A_{t-1}[i+a][j+b] on the
// whole plane, with A_0 = A inside the N x N window and 0 outside; the result is A_k on the
// window (the paper's convention that blocks outside the matrix are zero, Lemma 1). This is
// exactly direct iteration on the window padded by k zero cells on each side.
using StencilKernel = std::array<double, 9>;
// Default kernel: an asymmetric 9-point advection-diffusion kernel, weights sum to 1.
StencilKernel stencil_default_kernel();
// Default number of sweeps for side N and unit size m: k = 2 floor(L/6), the largest even k
// whose 3k x 3k neighbourhood fits a DFT of length L, with L the largest power of s in
// [8, max(m, 8)] (powers of s only) such that k <= N, or the smallest such L if none.
index_t stencil_default_sweeps(index_t side, std::int64_t m);
// DFT length used for k sweeps: smallest power of s >= 3k.
index_t stencil_dft_length(index_t k, index_t s);
// Lemma 2: the (2k+1) x (2k+1) weight matrix W (row-major), W[k+a][k+b] = coefficient of
// x^a y^b in P(x, y)^k, by repeated squaring with DFT convolutions on the unit.
std::vector<double> tcu_stencil_weights(TensorUnit& unit, const StencilKernel& w, index_t k);
// Lemma 1 + Lemma 2 (Theorem 8): A_k for an N x N row-major matrix A. Optional details get
// k, L, blocks and the check of W against its direct unrolling.
std::vector<double> tcu_stencil_matrix(TensorUnit& unit, const std::vector<double>& A, index_t side,
                                       index_t k, const StencilKernel& w,
                                       nlohmann::json* details = nullptr);

// ---- Theorems 9 and 10: integer multiplication ----------------------------------------
// Limb width kappa for unit side s: the largest kappa with 2 kappa + ceil(log2 s) <= 53, so
// every entry of a unit product (a sum of s products of two kappa-bit limbs) is an exact
// integer in binary64 (s = 16: kappa = 24).
int intmul_kappa(index_t s);
// Unsigned integers as little-endian 64-bit words; results have |a| + |b| words.
std::vector<std::uint64_t> tcu_intmul_words(TensorUnit& unit, const std::vector<std::uint64_t>& a,
                                            const std::vector<std::uint64_t>& b);
std::vector<std::uint64_t> tcu_karatsuba_words(TensorUnit& unit,
                                               const std::vector<std::uint64_t>& a,
                                               const std::vector<std::uint64_t>& b);

// ---- Theorem 11: batch polynomial evaluation -----------------------------------------
// A(x_i) = sum_h coeffs[h] x_i^h for every point; X (p x s powers) times the coefficient
// matrix (s x n/s) on the unit, then sum_j C[i][j] x_i^{j s} on the CPU.
std::vector<double> tcu_polyeval_points(TensorUnit& unit, const std::vector<double>& coeffs,
                                        const std::vector<double>& points);

}  // namespace triada
