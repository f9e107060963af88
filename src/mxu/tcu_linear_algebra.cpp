// The linear-algebra and graph algorithms of "A Computational Model for Tensor Core Units"
// (Chowdhury, Silvestri, Vella, full version), Sec. 4.1-4.4:
// dense matrix multiplication (Theorem 2, tall left strips), Strassen (Theorem 1), sparse
// matrix multiplication (Theorem 3), Gaussian elimination without pivoting (Theorem 4,
// Figure 4), transitive closure (Theorem 5, Figure 7) and Seidel's all-pairs shortest
// distances (Theorem 6). Every product runs on the planar MXU (TensorUnit), which charges
// r * s + l per call (s = sqrt(m)); every other arithmetic operation or comparison is
// charged with TensorUnit::cpu, one unit each. Copies, zero padding, index arithmetic and
// hashing of indices are data movement / addressing and are free in the model.
//
// Each run is checked against an independent CPU reference (triple loop, partial-pivoting
// Gaussian elimination, BFS from every vertex) that is not charged.
#include "mxu/tcu_linear_algebra.hpp"

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
#include <vector>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/tensor_io.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_error_bounds.hpp"
#include "mxu/tcu_inputs.hpp"

namespace triada {
namespace {

using Mat = std::vector<double>;  // row-major

// Largest natural size each algorithm accepts (dense side x side doubles must fit in memory).
constexpr index_t kMaxDenseSide = 4096;

std::uint64_t u64(index_t v) {
  return static_cast<std::uint64_t>(v);
}
double dbl(index_t v) {
  return static_cast<double>(v);
}
size_t sz(index_t v) {
  return static_cast<size_t>(v);
}

// ---------------------------------------------------------------------------------------
// Inputs (mxu/tcu_inputs.hpp)

using tcu_in::check_size;
using tcu_in::input_file;
using tcu_in::read_square;
using tcu_in::resolve_size;
using tcu_in::size_source;

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

}  // namespace

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

namespace {

// A 0/1 adjacency matrix from --input (dataset /adjacency unless one is named).
index_t read_adjacency(const TcuProblem& p, const char* algo, Mat& adj) {
  const DatasetRef ref = parse_dataset_ref(p.input);
  const std::string dset = ref.dataset.empty() ? "/adjacency" : ref.dataset;
  const index_t n = read_square(ref.file, dset, adj);
  for (auto& v : adj) v = v != 0 ? 1.0 : 0.0;
  return resolve_size(p, n, algo);
}

}  // namespace

// =======================================================================================
// Theorem 2: dense matrix multiplication with tall left strips.
// Time (n/m)(sqrt(n m) + l): n/m calls, each a sqrt(n) x sqrt(m) strip times a block.

double bound_matmul(double n, double m, double l) {
  return std::pow(n, 1.5) / std::sqrt(m) + n / m * l;
}
const char* formula_matmul() {
  return "n^1.5/sqrt(m) + (n/m) l = (n/m)(sqrt(n m) + l)";
}
double exponent_matmul() {
  return 1.5;
}

std::vector<double> tcu_matmul_dense(TensorUnit& u, const std::vector<double>& A,
                                     const std::vector<double>& B, index_t side,
                                     nlohmann::json* details) {
  const index_t s = u.side(), S = round_up(side, s);
  // Padding: sides that are not a multiple of s = sqrt(m) are padded with zero rows and
  // columns to S = ceil(side / s) s; the model time is then that of the S x S product.
  Mat Cp(sz(S * S), 0.0);
  if (S == side) {  // no padding: the inputs as they are (no copies)
    unit_gemm(u, S, S, S, A.data(), S, B.data(), S, Cp.data(), S, false);
  } else {
    const Mat Ap = pad_square(A, side, S), Bp = pad_square(B, side, S);
    unit_gemm(u, S, S, S, Ap.data(), S, Bp.data(), S, Cp.data(), S, false);
  }
  if (details) {
    (*details)["padded_side"] = S;
    (*details)["padding"] = S == side ? "none" : "zero rows/columns up to a multiple of sqrt(m)";
    (*details)["strips"] = S / s;
    (*details)["blocks_of_B"] = (S / s) * (S / s);
  }
  if (S == side) return Cp;
  return unpad_square(Cp, S, side);
}

namespace {
// A square product on the unit (matmul, strassen: `fast`), checked against the CPU triple
// loop with the bound that holds for it.
using SquareProduct = Mat (*)(TensorUnit&, const Mat&, const Mat&, index_t, nlohmann::json*);
TcuRun run_square_product(TensorUnit& u, const TcuProblem& p, const char* algo,
                          SquareProduct multiply, bool fast) {
  const MatrixPair mp = load_pair(p, algo);
  TcuRun run;
  run.details = {
      {"size", mp.side}, {"theorem_n", dbl(mp.side) * dbl(mp.side)}, {"input", mp.source}};
  const Mat C = multiply(u, mp.A, mp.B, mp.side, &run.details);
  const StrassenBlocks blocks{fast_product_side(u.side(), mp.side, mp.side, mp.side), u.side()};
  const ProductCheck chk =
      check_square_product(C, mp.A, mp.B, mp.side, mp.exact, fast ? &blocks : nullptr);
  run.verified = chk.ok;
  run.reference = mp.exact ? "CPU triple loop, exact equality (integer data)"
                  : fast   ? "CPU triple loop, |C - Cref| <= (n+1) 2^-53 (|A||B|) + Strassen's "
                             "bound (Higham Thm 23.2) 2^-53 max|A| max|B|"
                           : "CPU triple loop, |C - Cref| <= (2n+2) 2^-53 (|A||B|) entrywise";
  run.details["max_abs_error"] = chk.max_abs_error;
  return run;
}
}  // namespace

TcuRun tcu_matmul(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "matmul", tcu_matmul_dense, false);
}

// =======================================================================================
// Theorem 1: Strassen (n0 = 4, p0 = 7), recursion ending on the unit at s x s blocks.
// Time ((n/m)^w0)(m + l), w0 = log_4 7.

double bound_strassen(double n, double m, double l) {
  return std::pow(n / m, product_omega0(TcuProduct::fast)) * (m + l);
}
const char* formula_strassen() {
  return "(n/m)^w0 (m + l), w0 = log_4 7 = 1.4037";
}
double exponent_strassen() {
  return product_omega0(TcuProduct::fast);
}

std::vector<double> tcu_strassen_dense(TensorUnit& u, const std::vector<double>& A,
                                       const std::vector<double>& B, index_t side,
                                       nlohmann::json* details) {
  // The fast product with a single block: padded with zero rows and columns to
  // D = s 2^k >= side, so that halving ends at s.
  Mat C = fast_product(u, side, side, side, A, B);
  if (details) {
    const index_t s = u.side(), D = fast_product_side(s, side, side, side);
    int levels = 0;
    for (index_t d = s; d < D; d *= 2) ++levels;
    (*details)["padded_side"] = D;
    (*details)["padding"] = D == side ? "none" : "zero rows/columns up to sqrt(m) 2^k";
    (*details)["recursion_levels"] = levels;
    (*details)["base_products"] = std::pow(7.0, levels);
    (*details)["base_block_side"] = s;
  }
  return C;
}

TcuRun tcu_strassen(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "strassen", tcu_strassen_dense, true);
}

// =======================================================================================
// Theorem 4: forward Gaussian elimination without pivoting, Figure 4, then back
// substitution. Time n^1.5/sqrt(m) + (n/m) l + n sqrt(m) for a sqrt(n) x sqrt(n) matrix
// c = [A b; 0 0] (sqrt(n) - 1 equations).

double bound_ge(double n, double m, double l) {
  return std::pow(n, 1.5) / std::sqrt(m) + n / m * l + n * std::sqrt(m);
}
const char* formula_ge() {
  return "n^1.5/sqrt(m) + (n/m) l + n sqrt(m), n = (equations + 1)^2";
}
double exponent_ge() {
  return 1.5;
}

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

TcuRun tcu_ge(TensorUnit& u, const TcuProblem& p) {
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

// =======================================================================================
// Theorem 5: transitive closure, Figure 7. Time n^3/sqrt(m) + (n^2/m) l + n^2 sqrt(m).

double bound_tclosure(double n, double m, double l) {
  return n * n * n / std::sqrt(m) + n * n / m * l + n * n * std::sqrt(m);
}
const char* formula_tclosure() {
  return "n^3/sqrt(m) + (n^2/m) l + n^2 sqrt(m)";
}
double exponent_tclosure() {
  return 3.0;
}

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

TcuRun tcu_tclosure(TensorUnit& u, const TcuProblem& p) {
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

// =======================================================================================
// Theorem 6: Seidel's all-pairs shortest distances. Two n x n products per recursion level
// (A^2 and D^(2) A; one at the last level), on the unit with the product Theorem 6 assumes,
// Theorem 1's fast one (Strassen, w0 = log_4 7), or Theorem 2's classical blocking
// (w0 = 3/2). Time (n^2/m)^w0 (m + l) log2 n.

namespace {
double apsd_bound(double n, double m, double l, TcuProduct product) {
  return std::pow(n * n / m, product_omega0(product)) * (m + l) * std::max(1.0, std::log2(n));
}
std::string apsd_formula(TcuProduct product) {
  return "(n^2/m)^w0 (m + l) log2 n, w0 = " + omega0_text(product);
}
}  // namespace

double bound_apsd(double n, double m, double l) {
  return apsd_bound(n, m, l, TcuProduct::fast);
}
const char* formula_apsd() {
  static const std::string f = apsd_formula(TcuProduct::fast);
  return f.c_str();
}
double exponent_apsd() {
  return 2 * product_omega0(TcuProduct::fast);
}

namespace {

// Seidel's APD(A) for the connected graph with 0/1 adjacency A (zero diagonal).
Mat seidel(TensorUnit& u, const Mat& A, index_t n, int& levels, TcuProduct product) {
  ++levels;
  const size_t nn = sz(n * n);
  const Mat Z = tcu_product(u, n, n, n, A, A, product);
  Mat B(nn, 0.0);
  bool complete = true;
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const size_t e = sz(i * n + j);
      B[e] = (i != j && (A[e] != 0 || Z[e] > 0)) ? 1.0 : 0.0;
      if (i != j && B[e] == 0) complete = false;
    }
  u.cpu(3 * u64(n * n));  // Z > 0, OR, completeness test
  Mat D(nn);
  if (complete) {
    for (size_t e = 0; e < nn; ++e) D[e] = 2 * B[e] - A[e];
    u.cpu(2 * u64(n * n));
    return D;
  }
  const Mat T = seidel(u, B, n, levels, product);
  const Mat X = tcu_product(u, n, n, n, T, A, product);
  std::vector<double> deg(sz(n), 0.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) deg[sz(j)] += A[sz(i * n + j)];
  u.cpu(u64(n * n));
  // delta = 2 T if X[i,j] >= T[i,j] deg(j), else 2 T - 1 (product, comparison, 2 T, -1).
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) {
      const size_t e = sz(i * n + j);
      D[e] = X[e] >= T[e] * deg[sz(j)] ? 2 * T[e] : 2 * T[e] - 1;
    }
  u.cpu(4 * u64(n * n));
  return D;
}

}  // namespace

std::vector<double> tcu_seidel_apsd(TensorUnit& u, const std::vector<double>& adj, index_t n,
                                    int* levels, TcuProduct product) {
  int depth = 0;
  Mat A(adj);
  for (index_t i = 0; i < n; ++i) A[sz(i * n + i)] = 0;
  for (auto& v : A) v = v != 0 ? 1.0 : 0.0;
  Mat D = seidel(u, A, n, depth, product);
  if (levels) *levels = depth;
  return D;
}

namespace {
// Connected by construction: a random spanning tree whose vertex v (in a random order)
// hangs off one of the 4 vertices before it (long paths: several Seidel levels), plus
// floor(sqrt(n)) random extra edges.
Mat random_connected_graph(index_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::vector<index_t> perm(sz(n));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), gen);
  Mat adj(sz(n * n), 0.0);
  const auto link = [&](index_t a, index_t b) {
    if (a == b) return;
    adj[sz(a * n + b)] = adj[sz(b * n + a)] = 1;
  };
  for (index_t v = 1; v < n; ++v) {
    std::uniform_int_distribution<index_t> back(std::max<index_t>(0, v - 4), v - 1);
    link(perm[sz(v)], perm[sz(back(gen))]);
  }
  std::uniform_int_distribution<index_t> any(0, n - 1);
  const auto extra = static_cast<index_t>(std::sqrt(dbl(n)));
  for (index_t e = 0; e < extra; ++e) link(any(gen), any(gen));
  return adj;
}
}  // namespace

TcuRun tcu_apsd(TensorUnit& u, const TcuProblem& p) {
  Mat adj;
  index_t n = 0;
  std::string source;
  if (!p.input.empty()) {
    n = read_adjacency(p, "apsd", adj);
    for (index_t i = 0; i < n; ++i) {
      adj[sz(i * n + i)] = 0;  // self-loops do not change distances
      for (index_t j = 0; j < i; ++j)
        if (adj[sz(i * n + j)] != adj[sz(j * n + i)])
          throw input_error(p.input +
                            ": apsd needs an undirected graph (symmetric adjacency); "
                            "entries (" +
                            std::to_string(i) + "," + std::to_string(j) + ") and (" +
                            std::to_string(j) + "," + std::to_string(i) + ") differ");
    }
    source = p.input;
  } else {
    n = p.size;
    check_size(p.size_name, "apsd", n, kMaxDenseSide, "a number of vertices");
    adj = random_connected_graph(n, p.seed);
    source = "random connected undirected graph (spanning tree + sqrt(n) edges), seed " +
             std::to_string(p.seed);
  }
  check_size(p.size_name, "apsd", n, kMaxDenseSide, "a number of vertices",
             size_source(p, "/adjacency"));
  const std::vector<index_t> ref = reference_distances(adj, n);
  for (index_t v = 0; v < n; ++v)
    if (ref[sz(v)] < 0)
      throw input_error(p.input + ": apsd needs a connected graph; vertex " + std::to_string(v) +
                        " is not reachable from vertex 0");
  int levels = 0;
  const Mat D = tcu_seidel_apsd(u, adj, n, &levels, p.product);
  bool ok = true;
  index_t diameter = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    ok = ok && D[e] == dbl(ref[e]);
    diameter = std::max(diameter, ref[e]);
  }
  TcuRun run;
  run.verified = ok;
  run.reference = "BFS from every vertex, exact equality of all distances";
  const bool fast = p.product == TcuProduct::fast;
  const index_t padded = fast ? fast_product_side(u.side(), n, n, n) : round_up(n, u.side());
  run.details = {{"size", n},
                 {"theorem_n", dbl(n)},
                 {"input", source},
                 {"recursion_levels", levels},
                 {"diameter", diameter},
                 {"products", 2 * levels - 1},
                 {"padded_side", padded},
                 {"padding", padded == n ? "none"
                             : fast      ? "products zero-padded to sqrt(m) 2^k (Strassen)"
                                         : "products zero-padded to a multiple of sqrt(m)"}};
  set_product_bounds(run, p.product, dbl(n), u, apsd_bound, apsd_formula(p.product),
                     2 * product_omega0(p.product));
  return run;
}

}  // namespace triada
