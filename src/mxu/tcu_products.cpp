// The products on the unit and the CPU references that the linear-algebra and graph
// algorithms of "A Computational Model for Tensor Core Units" (Chowdhury, Silvestri, Vella,
// full version), Sec. 4.1-4.4, share; each theorem is in its own file: Strassen (Theorem 1,
// tcu_strassen.cpp), dense matrix multiplication (Theorem 2, tcu_matmul.cpp), sparse
// (Theorem 3, tcu_spmm.cpp), Gaussian elimination (Theorem 4, tcu_ge.cpp), transitive closure
// (Theorem 5, tcu_tclosure.cpp) and Seidel's all-pairs shortest distances (Theorem 6,
// tcu_apsd.cpp). Every product runs on the planar MXU (TensorUnit), which charges
// r * s + l per call (s = sqrt(m)); every other arithmetic operation or comparison is
// charged with TensorUnit::cpu, one unit each. Copies, zero padding, index arithmetic and
// hashing of indices are data movement / addressing and are free in the model.
//
// Each run is checked against an independent CPU reference (triple loop, partial-pivoting
// Gaussian elimination, BFS from every vertex) that is not charged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/tensor_io.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tcu_la_common.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {
namespace tcu_la {

bool all_integer(const Mat& a) {
  return std::all_of(a.begin(), a.end(), [](double v) { return v == std::nearbyint(v); });
}

Mat random_int_matrix(index_t side, std::mt19937_64& gen, int lo, int hi) {
  std::uniform_int_distribution<int> d(lo, hi);
  Mat a(sz(side * side));
  for (auto& v : a) v = d(gen);
  return a;
}

// ---------------------------------------------------------------------------------------
// Products on the unit

// One product of a tall strip (r x s) by an s x s block. On a weak unit (Theorem 12) one
// call per chunk of s rows; callers make r a multiple of s there.
void strip_call(TensorUnit& u, index_t r, const double* A, index_t lda, const double* B,
                index_t ldb, double* C, index_t ldc, bool accumulate) {
  const index_t s = u.side();
  if (!u.weak()) {
    u.multiply(r, A, lda, B, ldb, C, ldc, accumulate);
    return;
  }
  for (index_t base = 0; base < r; base += s)
    u.multiply(s, A + base * lda, lda, B, ldb, C + base * ldc, ldc, accumulate);
}

// Theorem 2: C (R x N) (+)= A (R x K) * B (K x N). A is cut into K/s vertical strips A_t
// (R x s), B into s x s blocks B_tj; each call C_j += A_t B_tj streams the whole strip
// through the unit with B_tj resident, accumulating in the cells (accumulate = true after
// the first strip), so no CPU additions are needed. Column block j outer, t inner: the
// calls of one C_j form a chain (TensorUnit::multiply_chain), and adjacent C_j share A
// (multiply_chains, TensorUnit::kGridColumns at a time: the same calls in the same order). Needs
// R >= s and K, N multiples of s (R a multiple of s on a weak unit: a chain per chunk of s
// rows, chunks inside j, so one block at a time there).
void unit_gemm(TensorUnit& u, index_t R, index_t K, index_t N, const double* A, index_t lda,
               const double* B, index_t ldb, double* C, index_t ldc, bool accumulate) {
  const index_t s = u.side();
  const index_t rows = u.weak() ? s : R;
  const index_t group = rows == R ? u.grid_col_blocks() : 1;
  for (index_t j = 0; j < N; j += group * s) {
    const index_t blocks = std::min(group, (N - j) / s);
    for (index_t base = 0; base < R; base += rows)
      u.multiply_chains(rows, A + base * lda, lda, B + j, ldb, C + base * ldc + j, ldc, K / s,
                        {1, blocks}, accumulate);
  }
}

// C = A (R x K) * B (K x N), any sizes >= 1: zero padding (free) to R >= s (a multiple of s
// on a weak unit) and K, N multiples of s, then unit_gemm.
Mat padded_product(TensorUnit& u, index_t R, index_t K, index_t N, const Mat& A, const Mat& B) {
  const index_t s = u.side();
  const index_t Rp = u.weak() ? round_up(R, s) : std::max(R, s);
  const index_t Kp = round_up(K, s), Np = round_up(N, s);
  Mat C(sz(R * N));
  if (Rp == R && Kp == K && Np == N) {
    unit_gemm(u, R, K, N, A.data(), K, B.data(), N, C.data(), N, false);
    return C;
  }
  Mat Ap(sz(Rp * Kp), 0.0), Bp(sz(Kp * Np), 0.0), Cp(sz(Rp * Np), 0.0);
  for (index_t i = 0; i < R; ++i) std::copy_n(&A[sz(i * K)], K, &Ap[sz(i * Kp)]);
  for (index_t i = 0; i < K; ++i) std::copy_n(&B[sz(i * N)], N, &Bp[sz(i * Np)]);
  unit_gemm(u, Rp, Kp, Np, Ap.data(), Kp, Bp.data(), Np, Cp.data(), Np, false);
  for (index_t i = 0; i < R; ++i) std::copy_n(&Cp[sz(i * Np)], N, &C[sz(i * N)]);
  return C;
}

Mat pad_square(const Mat& a, index_t side, index_t padded) {
  if (padded == side) return a;
  Mat p(sz(padded * padded), 0.0);
  for (index_t i = 0; i < side; ++i) std::copy_n(&a[sz(i * side)], side, &p[sz(i * padded)]);
  return p;
}
Mat unpad_square(const Mat& p, index_t padded, index_t side) {
  if (padded == side) return p;
  Mat a(sz(side * side));
  for (index_t i = 0; i < side; ++i) std::copy_n(&p[sz(i * padded)], side, &a[sz(i * side)]);
  return a;
}

// Two square matrices for matmul / strassen: /A and /B of --input, or small integers.
struct MatrixPair {
  index_t side = 0;
  Mat A, B;
  bool exact = true;  // integer data: the check is exact equality
  std::string source;
};
MatrixPair load_pair(const TcuProblem& p, const char* algo) {
  MatrixPair mp;
  if (!p.input.empty()) {
    const std::string file = input_file(p, algo, "/A and /B");
    const index_t na = read_square(file, "/A", mp.A);
    const index_t nb = read_square(file, "/B", mp.B);
    if (na != nb)
      throw input_error(file + ": /A is " + std::to_string(na) + "x" + std::to_string(na) +
                        " but /B is " + std::to_string(nb) + "x" + std::to_string(nb));
    mp.side = resolve_size(p, na, algo);
    check_size(p.size_name, algo, mp.side, kMaxDenseSide, "a matrix side", size_source(p, "/A"));
    mp.exact = all_integer(mp.A) && all_integer(mp.B);
    mp.source = p.input;
    return mp;
  }
  check_size(p.size_name, algo, p.size, kMaxDenseSide, "a matrix side");
  mp.side = p.size;
  std::mt19937_64 gen(p.seed);
  mp.A = random_int_matrix(mp.side, gen, -4, 4);
  mp.B = random_int_matrix(mp.side, gen, -4, 4);
  mp.source = "random integers in [-4, 4], seed " + std::to_string(p.seed);
  return mp;
}

// ---------------------------------------------------------------------------------------
// Strassen (Theorem 1): n0 = 4 (2 x 2 blocks), p0 = 7 products, recursion down to s x s
// blocks, which go to the unit (one call, r = s). The 18 block additions per node are CPU.

void strassen_rec(TensorUnit& u, index_t d, const double* A, index_t lda, const double* B,
                  index_t ldb, double* C, index_t ldc) {
  if (d <= u.side()) {
    strip_call(u, d, A, lda, B, ldb, C, ldc, false);
    return;
  }
  const index_t h = d / 2;
  const double *A11 = A, *A12 = A + h, *A21 = A + h * lda, *A22 = A + h * lda + h;
  const double *B11 = B, *B12 = B + h, *B21 = B + h * ldb, *B22 = B + h * ldb + h;
  Mat T1(sz(h * h)), T2(sz(h * h));
  std::vector<Mat> M(7, Mat(sz(h * h)));
  // Z = X + sign * Y on h x h blocks (Z contiguous, leading dimension h).
  const auto add = [&](const double* X, index_t ldx, const double* Y, index_t ldy, double sign,
                       Mat& Z) {
    for (index_t i = 0; i < h; ++i)
      for (index_t j = 0; j < h; ++j) Z[sz(i * h + j)] = X[i * ldx + j] + sign * Y[i * ldy + j];
    u.cpu(u64(h * h));
  };
  const auto rec = [&](const double* X, index_t ldx, const double* Y, index_t ldy, Mat& Z) {
    strassen_rec(u, h, X, ldx, Y, ldy, Z.data(), h);
  };
  add(A11, lda, A22, lda, 1, T1);
  add(B11, ldb, B22, ldb, 1, T2);
  rec(T1.data(), h, T2.data(), h, M[0]);  // M1 = (A11 + A22)(B11 + B22)
  add(A21, lda, A22, lda, 1, T1);
  rec(T1.data(), h, B11, ldb, M[1]);  // M2 = (A21 + A22) B11
  add(B12, ldb, B22, ldb, -1, T2);
  rec(A11, lda, T2.data(), h, M[2]);  // M3 = A11 (B12 - B22)
  add(B21, ldb, B11, ldb, -1, T2);
  rec(A22, lda, T2.data(), h, M[3]);  // M4 = A22 (B21 - B11)
  add(A11, lda, A12, lda, 1, T1);
  rec(T1.data(), h, B22, ldb, M[4]);  // M5 = (A11 + A12) B22
  add(A21, lda, A11, lda, -1, T1);
  add(B11, ldb, B12, ldb, 1, T2);
  rec(T1.data(), h, T2.data(), h, M[5]);  // M6 = (A21 - A11)(B11 + B12)
  add(A12, lda, A22, lda, -1, T1);
  add(B21, ldb, B22, ldb, 1, T2);
  rec(T1.data(), h, T2.data(), h, M[6]);  // M7 = (A12 - A22)(B21 + B22)
  for (index_t i = 0; i < h; ++i)
    for (index_t j = 0; j < h; ++j) {
      const size_t e = sz(i * h + j);
      C[i * ldc + j] = M[0][e] + M[3][e] - M[4][e] + M[6][e];            // C11
      C[i * ldc + j + h] = M[2][e] + M[4][e];                            // C12
      C[(i + h) * ldc + j] = M[1][e] + M[3][e];                          // C21
      C[(i + h) * ldc + j + h] = M[0][e] - M[1][e] + M[2][e] + M[5][e];  // C22
    }
  u.cpu(u64(8 * h * h));
}

// C = A (R x K) B (K x N) by Strassen on D x D blocks (fast_product_side): tile (i0, j0)
// of C is the sum over the depth chunks k0 of the Strassen products of the zero-padded
// blocks; summing the chunks is CPU work, one addition per entry after the first chunk.
Mat fast_product(TensorUnit& u, index_t R, index_t K, index_t N, const Mat& A, const Mat& B) {
  const index_t D = fast_product_side(u.side(), R, K, N);
  Mat C(sz(R * N), 0.0), a(sz(D * D)), b(sz(D * D)), c(sz(D * D));
  // The zero-padded D x D block of X (rows x cols) at (r0, c0): data movement, free.
  const auto block = [D](const Mat& X, index_t rows, index_t cols, index_t r0, index_t c0,
                         Mat& out) {
    std::fill(out.begin(), out.end(), 0.0);
    const index_t h = std::min(D, rows - r0), w = std::min(D, cols - c0);
    for (index_t i = 0; i < h; ++i) std::copy_n(&X[sz((r0 + i) * cols + c0)], w, &out[sz(i * D)]);
  };
  std::uint64_t adds = 0;
  for (index_t i0 = 0; i0 < R; i0 += D)
    for (index_t j0 = 0; j0 < N; j0 += D) {
      const index_t h = std::min(D, R - i0), w = std::min(D, N - j0);
      for (index_t k0 = 0; k0 < K; k0 += D) {
        block(A, R, K, i0, k0, a);
        block(B, K, N, k0, j0, b);
        strassen_rec(u, D, a.data(), D, b.data(), D, c.data(), D);
        for (index_t i = 0; i < h; ++i)
          for (index_t j = 0; j < w; ++j) C[sz((i0 + i) * N + j0 + j)] += c[sz(i * D + j)];
        if (k0 > 0) adds += u64(h * w);
      }
    }
  u.cpu(adds);
  return C;
}

TcuRun run_square_product(TensorUnit& u, const TcuProblem& p, const char* algo,
                          SquareProduct multiply, bool fast) {
  const MatrixPair mp = load_pair(p, algo);
  TcuRun run;
  run.details = {
      {"size", mp.side}, {"theorem_n", dbl(mp.side) * dbl(mp.side)}, {"input", mp.source}};
  Mat C = multiply(u, mp.A, mp.B, mp.side, &run.details);
  const StrassenBlocks blocks{fast_product_side(u.side(), mp.side, mp.side, mp.side), u.side()};
  const ProductCheck chk =
      check_square_product(C, mp.A, mp.B, mp.side, mp.exact, fast ? &blocks : nullptr);
  run.verified = chk.ok;
  run.reference = mp.exact ? "CPU triple loop, exact equality (integer data)"
                  : fast   ? "CPU triple loop, |C - Cref| <= (n+1) 2^-53 (|A||B|) + Strassen's "
                             "bound (Higham Thm 23.2) 2^-53 max|A| max|B|"
                           : "CPU triple loop, |C - Cref| <= (2n+2) 2^-53 (|A||B|) entrywise";
  run.details["max_abs_error"] = chk.max_abs_error;
  run.product = std::move(C);
  return run;
}

// A 0/1 adjacency matrix from --input (dataset /adjacency unless one is named).
index_t read_adjacency(const TcuProblem& p, const char* algo, Mat& adj) {
  const DatasetRef ref = parse_dataset_ref(p.input);
  const std::string dset = ref.dataset.empty() ? "/adjacency" : ref.dataset;
  const index_t n = read_square(ref.file, dset, adj);
  for (auto& v : adj) v = v != 0 ? 1.0 : 0.0;
  return resolve_size(p, n, algo);
}
}  // namespace tcu_la

using namespace tcu_la;

void set_product_bounds(TcuRun& run, TcuProduct product, double n, const TensorUnit& u,
                        const std::function<double(double, double, double, TcuProduct)>& bound,
                        const std::string& formula, double exponent) {
  const double m = dbl(u.m()), l = dbl(u.latency());
  run.details["product"] = to_string(product);
  run.details["bounds"] = {{"fast", bound(n, m, l, TcuProduct::fast)},
                           {"classical", bound(n, m, l, TcuProduct::classical)}};
  run.bound = bound(n, m, l, product);
  run.bound_formula = formula;
  run.growth_exponent = exponent;
}

index_t fast_product_side(index_t s, index_t R, index_t K, index_t N) {
  const index_t least = std::min({R, K, N});
  index_t D = s;
  while (D < least) D *= 2;
  return D;
}

std::vector<double> tcu_product(TensorUnit& u, index_t R, index_t K, index_t N,
                                const std::vector<double>& A, const std::vector<double>& B,
                                TcuProduct product) {
  if (product == TcuProduct::fast) return fast_product(u, R, K, N, A, B);
  return padded_product(u, R, K, N, A, B);
}

std::vector<double> reference_product(const std::vector<double>& A, const std::vector<double>& B,
                                      index_t R, index_t K, index_t N) {
  Mat C(sz(R * N), 0.0);
  for (index_t i = 0; i < R; ++i)
    for (index_t k = 0; k < K; ++k) {
      const double a = A[sz(i * K + k)];
      for (index_t j = 0; j < N; ++j) C[sz(i * N + j)] += a * B[sz(k * N + j)];
    }
  return C;
}

ProductCheck check_square_product(const std::vector<double>& C, const std::vector<double>& A,
                                  const std::vector<double>& B, index_t side, bool exact,
                                  const StrassenBlocks* strassen) {
  const Mat ref = reference_product(A, B, side, side, side);
  Mat absA(A.size()), absB(B.size());
  std::transform(A.begin(), A.end(), absA.begin(), [](double v) { return std::abs(v); });
  std::transform(B.begin(), B.end(), absB.begin(), [](double v) { return std::abs(v); });
  const Mat mag = reference_product(absA, absB, side, side, side);
  const double u = std::ldexp(1.0, -53);
  // Classical: both sides' dot-product bounds. Strassen: the reference's, plus Brent's
  // normwise bound with 1% for its O(u^2) remainder (f u < 0.01 for every side taken here)
  // and f times the smallest subnormal for underflow.
  double gamma = dbl(2 * side + 2) * u, normwise = 0;
  if (strassen) {
    const double f = strassen_error_factor(strassen->side, strassen->base);
    const double amax = absA.empty() ? 0 : *std::max_element(absA.begin(), absA.end());
    const double bmax = absB.empty() ? 0 : *std::max_element(absB.begin(), absB.end());
    gamma = dbl(side + 1) * u;
    normwise = 1.01 * f * u * amax * bmax + f * std::numeric_limits<double>::denorm_min();
  }
  ProductCheck r;
  for (size_t e = 0; e < ref.size(); ++e) {
    const double err = std::abs(C[e] - ref[e]);
    r.max_abs_error = std::max(r.max_abs_error, err);
    if (exact ? C[e] != ref[e] : !(err <= gamma * mag[e] + normwise)) r.ok = false;
  }
  return r;
}

// Figure 5's semantics: c[v][v] = 1 iff v lies on a cycle.
std::vector<double> reference_reachability(const std::vector<double>& adj, index_t n) {
  std::vector<std::vector<index_t>> out(sz(n));
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      if (adj[sz(i * n + j)] != 0) out[sz(i)].push_back(j);
  Mat reach(sz(n * n), 0.0);
  std::vector<index_t> queue;
  for (index_t v = 0; v < n; ++v) {
    double* r = &reach[sz(v * n)];
    queue.clear();
    for (index_t w : out[sz(v)])
      if (r[w] == 0) r[w] = 1, queue.push_back(w);
    for (size_t q = 0; q < queue.size(); ++q)
      for (index_t w : out[sz(queue[q])])
        if (r[w] == 0) r[w] = 1, queue.push_back(w);
  }
  return reach;
}

std::vector<index_t> reference_distances(const std::vector<double>& adj, index_t n) {
  std::vector<std::vector<index_t>> nbr(sz(n));
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      if (adj[sz(i * n + j)] != 0) nbr[sz(i)].push_back(j);
  std::vector<index_t> dist(sz(n * n), -1), queue;
  for (index_t v = 0; v < n; ++v) {
    index_t* d = &dist[sz(v * n)];
    d[v] = 0;
    queue.assign(1, v);
    for (size_t q = 0; q < queue.size(); ++q)
      for (index_t w : nbr[sz(queue[q])])
        if (d[w] < 0) d[w] = d[queue[q]] + 1, queue.push_back(w);
  }
  return dist;
}
}  // namespace triada
