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
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/checked.hpp"
#include "core/error.hpp"
#include "geometry/memory_model.hpp"
#include "io/hdf5.hpp"
#include "io/matrix_reader.hpp"
#include "io/tensor_io.hpp"
#include "mxu/tcu_algorithms.hpp"

namespace triada {
namespace {

using Mat = std::vector<double>;  // row-major

// Largest natural size each algorithm accepts (dense side x side doubles must fit in memory).
constexpr index_t kMaxDenseSide = 4096;
constexpr index_t kMaxSparseSide = 8192;

index_t round_up(index_t x, index_t q) {
  return (x + q - 1) / q * q;
}
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
// Inputs

// A real rank-1 or rank-2 dataset (any integer or float type), read serially.
Mat read_real(const std::string& file, const std::string& dset, std::vector<index_t>& dims) {
  RealArray a = read_real_array({file, dset, file, 1, 2, ArrayWords::plain});
  dims = std::move(a.dims);
  return std::move(a.data);
}

// A square rank-2 dataset; returns its side.
index_t read_square(const std::string& file, const std::string& dset, Mat& out) {
  std::vector<index_t> dims;
  out = h5::reading_input(file + ":" + dset, [&] { return read_real(file, dset, dims); });
  if (dims.size() != 2 || dims[0] != dims[1] || dims[0] < 1)
    throw input_error(file + ":" + dset + ": expected a non-empty square matrix");
  for (double v : out)
    if (!std::isfinite(v)) throw input_error(file + ":" + dset + ": holds a non-finite value");
  return dims[0];
}

// The input of algorithms that read fixed datasets: the file alone.
std::string input_file(const TcuProblem& p, const char* algo, const char* datasets) {
  const DatasetRef ref = parse_dataset_ref(p.input);
  if (!ref.dataset.empty())
    throw config_error(p.input_name + ": " + algo + " reads the datasets " + datasets +
                       "; give the file name alone, got '" + p.input + "'");
  return ref.file;
}

// The natural size: the one asked for, or the file's; both given must agree.
index_t resolve_size(const TcuProblem& p, index_t from_file, const char* algo) {
  if (p.size > 0 && p.size != from_file)
    throw config_error(p.size_name + " " + std::to_string(p.size) + " does not match the " + algo +
                       " input " + p.input + " (size " + std::to_string(from_file) + ")");
  return from_file;
}

// A size asked for (a config error naming it `size_name`) or, when `from` names it, read
// from that input dataset (an input error naming the file).
void check_size(const std::string& size_name, const char* algo, index_t size, index_t max,
                const char* rule, const std::string& from = "") {
  if (size >= 1 && size <= max) return;
  const std::string need =
      std::string(algo) + " needs " + rule + " in [1, " + std::to_string(max) + "]";
  if (from.empty()) throw config_error(size_name + " " + std::to_string(size) + ": " + need);
  throw input_error(from + ": size " + std::to_string(size) + ": " + need);
}

// The dataset of --input a size was read from, FILE:/DSET; empty for generated data.
std::string size_source(const TcuProblem& p, const char* default_dataset) {
  if (p.input.empty()) return "";
  const DatasetRef ref = parse_dataset_ref(p.input);
  return ref.file + ":" + (ref.dataset.empty() ? default_dataset : ref.dataset);
}

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
// (multiply_chains, kGemmWidth columns at a time: the same calls in the same order). Needs
// R >= s and K, N multiples of s (R a multiple of s on a weak unit: a chain per chunk of s
// rows, chunks inside j, so one block at a time there).
void unit_gemm(TensorUnit& u, index_t R, index_t K, index_t N, const double* A, index_t lda,
               const double* B, index_t ldb, double* C, index_t ldc, bool accumulate) {
  constexpr index_t kGemmWidth = 256;  // C columns per kernel pass (B's panels fill L2)
  const index_t s = u.side();
  const index_t rows = u.weak() ? s : R;
  const index_t group = rows == R ? std::max<index_t>(1, kGemmWidth / s) : 1;
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

// The check of a product against reference_product: exact for integer data, else
// |C - Cref| <= gamma (|A| |B|) entrywise with gamma = (2K + 2) 2^-53 (the standard
// dot-product error bound, for both sides).
struct ProductCheck {
  bool ok = true;
  double max_abs_error = 0;
};
ProductCheck check_product(const Mat& C, const Mat& A, const Mat& B, index_t R, index_t K,
                           index_t N, bool exact) {
  const Mat ref = reference_product(A, B, R, K, N);
  Mat absA(A.size()), absB(B.size());
  std::transform(A.begin(), A.end(), absA.begin(), [](double v) { return std::abs(v); });
  std::transform(B.begin(), B.end(), absB.begin(), [](double v) { return std::abs(v); });
  const Mat mag = reference_product(absA, absB, R, K, N);
  const double gamma = dbl(2 * K + 2) * std::ldexp(1.0, -53);
  ProductCheck r;
  for (size_t e = 0; e < ref.size(); ++e) {
    const double err = std::abs(C[e] - ref[e]);
    r.max_abs_error = std::max(r.max_abs_error, err);
    if (exact ? C[e] != ref[e] : !(err <= gamma * mag[e])) r.ok = false;
  }
  return r;
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

// ---------------------------------------------------------------------------------------
// Sparse matrices (Theorem 3)

// Each row of the matrix gets min(d, side) distinct columns with values in [1, 9].
std::vector<SparseEntry> random_sparse(index_t side, index_t d, std::mt19937_64& gen) {
  std::vector<SparseEntry> e;
  std::uniform_int_distribution<index_t> col(0, side - 1);
  std::uniform_int_distribution<int> val(1, 9);
  const index_t k = std::min(d, side);
  std::vector<index_t> picked;
  for (index_t i = 0; i < side; ++i) {
    picked.clear();
    while (static_cast<index_t>(picked.size()) < k) {
      const index_t c = col(gen);
      if (std::find(picked.begin(), picked.end(), c) == picked.end()) picked.push_back(c);
    }
    std::sort(picked.begin(), picked.end());
    for (index_t c : picked) e.push_back({i, c, static_cast<double>(val(gen))});
  }
  return e;
}

std::vector<SparseEntry> dense_to_entries(const Mat& a, index_t side, const std::string& name) {
  std::vector<SparseEntry> e;
  for (index_t i = 0; i < side; ++i)
    for (index_t j = 0; j < side; ++j) {
      const double v = a[sz(i * side + j)];
      if (v == 0) continue;
      if (v < 0 || v != std::nearbyint(v))
        throw input_error(name +
                          ": spmm needs non-negative integer entries (the sketch "
                          "recovery is exact for them), found " +
                          std::to_string(v));
      e.push_back({i, j, v});
    }
  return e;
}

}  // namespace

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

std::vector<SparseEntry> reference_sparse_product(std::vector<SparseEntry> A,
                                                  const std::vector<SparseEntry>& B, index_t side) {
  std::sort(A.begin(), A.end(), [](const SparseEntry& x, const SparseEntry& y) {
    return x.row != y.row ? x.row < y.row : x.col < y.col;
  });
  std::vector<std::vector<SparseEntry>> brows(sz(side));
  for (const auto& e : B) brows[sz(e.row)].push_back(e);
  std::vector<double> acc(sz(side), 0.0);
  std::vector<char> touched(sz(side), 0);
  std::vector<index_t> cols;
  std::vector<SparseEntry> C;
  size_t a = 0;
  for (index_t i = 0; i < side; ++i) {
    cols.clear();
    for (; a < A.size() && A[a].row == i; ++a)
      for (const auto& b : brows[sz(A[a].col)]) {
        if (!touched[sz(b.col)]) {
          touched[sz(b.col)] = 1;
          cols.push_back(b.col);
        }
        acc[sz(b.col)] += A[a].v * b.v;
      }
    std::sort(cols.begin(), cols.end());
    for (index_t j : cols) {
      if (acc[sz(j)] != 0) C.push_back({i, j, acc[sz(j)]});
      acc[sz(j)] = 0;
      touched[sz(j)] = 0;
    }
  }
  return C;
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
// A square product on the unit (matmul, strassen), checked against the CPU triple loop.
using SquareProduct = Mat (*)(TensorUnit&, const Mat&, const Mat&, index_t, nlohmann::json*);
TcuRun run_square_product(TensorUnit& u, const TcuProblem& p, const char* algo,
                          SquareProduct multiply) {
  const MatrixPair mp = load_pair(p, algo);
  TcuRun run;
  run.details = {
      {"size", mp.side}, {"theorem_n", dbl(mp.side) * dbl(mp.side)}, {"input", mp.source}};
  const Mat C = multiply(u, mp.A, mp.B, mp.side, &run.details);
  const ProductCheck chk = check_product(C, mp.A, mp.B, mp.side, mp.side, mp.side, mp.exact);
  run.verified = chk.ok;
  run.reference = mp.exact ? "CPU triple loop, exact equality (integer data)"
                           : "CPU triple loop, |C - Cref| <= (2n+2) 2^-53 (|A||B|) entrywise";
  run.details["max_abs_error"] = chk.max_abs_error;
  return run;
}
}  // namespace

TcuRun tcu_matmul(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "matmul", tcu_matmul_dense);
}

// =======================================================================================
// Theorem 1: Strassen (n0 = 4, p0 = 7), recursion ending on the unit at s x s blocks.
// Time ((n/m)^w0)(m + l), w0 = log_4 7.

namespace {
const double kStrassenW0 = std::log(7.0) / std::log(4.0);
}
double bound_strassen(double n, double m, double l) {
  return std::pow(n / m, kStrassenW0) * (m + l);
}
const char* formula_strassen() {
  return "(n/m)^w0 (m + l), w0 = log_4 7 = 1.4037";
}
double exponent_strassen() {
  return kStrassenW0;
}

std::vector<double> tcu_strassen_dense(TensorUnit& u, const std::vector<double>& A,
                                       const std::vector<double>& B, index_t side,
                                       nlohmann::json* details) {
  const index_t s = u.side();
  // Padding: to D = s 2^k >= side with zero rows and columns, so that halving ends at s.
  index_t D = s;
  int levels = 0;
  while (D < side) D *= 2, ++levels;
  const Mat Ap = pad_square(A, side, D), Bp = pad_square(B, side, D);
  Mat Cp(sz(D * D), 0.0);
  strassen_rec(u, D, Ap.data(), D, Bp.data(), D, Cp.data(), D);
  if (details) {
    (*details)["padded_side"] = D;
    (*details)["padding"] = D == side ? "none" : "zero rows/columns up to sqrt(m) 2^k";
    (*details)["recursion_levels"] = levels;
    (*details)["base_products"] = std::pow(7.0, levels);
    (*details)["base_block_side"] = s;
  }
  return unpad_square(Cp, D, side);
}

TcuRun tcu_strassen(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "strassen", tcu_strassen_dense);
}

// =======================================================================================
// Theorem 3: sparse matrix multiplication, output-sensitive.
//
// Compression (after the hashing idea of the paper's reference [12]): the rows of A are
// hashed into b buckets by a random h, the columns of B into b buckets by a random g, with
// b = ceil(sqrt(U)) for U an upper bound on the output nonzeros still unknown (at first
// sum_k nnz(A(:,k)) nnz(B(k,:))). Three row sketches of A (weights 1, i+1, (i+1)^2) stacked
// as a 3b x sqrt(n) matrix and three column sketches of B (weights 1, j+1, (j+1)^2) are
// built on the CPU (O(I) operations); their dense products on the unit (Theorem 2
// blocking) give, for each bucket (a, c) of C,
//   S0 = sum c_ij, S1 = sum (i+1) c_ij, S2 = sum (i+1)^2 c_ij, T1, T2 likewise in j,
// over the entries with h(i) = a, g(j) = c. With positive integer entries a bucket holds a
// single entry iff S1 = q S0 and S2 = q^2 S0 (Cauchy-Schwarz equality) and the same in j:
// the entry is then (q - 1, q' - 1) with value S0, recovered exactly. Recovered entries are
// subtracted from the next rounds' sketches (CPU); rounds with fresh hashes repeat until
// every bucket is empty (positive values: an empty residual bucket holds no unknown entry).
// Once ceil(sqrt(U)) >= sqrt(n) the hashes are the identity (b = sqrt(n)) and the round is
// the plain dense product. The rounds' products are the sqrt(Z) x sqrt(n) by sqrt(n) x
// sqrt(Z) products of Theorem 3 (computed with the standard w0 = 3/2); about 1/e of the
// unknown entries are alone in their bucket per round, so the total is about e Z buckets.
//
// Default input: each row of A and of B has 3 nonzeros (values 1..9) in random columns,
// so I = 6 sqrt(n) and Z <= 9 sqrt(n); the bound is evaluated for those values.

namespace {
constexpr index_t kSpmmPerRow = 3;
double spmm_theorem(double n, double m, double l, double Z, double I) {
  if (Z <= 0) return I;
  return std::sqrt(n / Z) * std::pow(Z / m, 1.5) * (m + l) + I;
}
}  // namespace

double bound_spmm(double n, double m, double l) {
  const double side = std::sqrt(n);
  const double Z = std::min(double(kSpmmPerRow * kSpmmPerRow) * side, n);
  const double I = 2.0 * double(kSpmmPerRow) * side;
  return spmm_theorem(n, m, l, Z, I);
}
const char* formula_spmm() {
  return "sqrt(n/Z) (Z/m)^1.5 (m + l) + I with the default input's Z = min(9 sqrt(n), n), "
         "I = 6 sqrt(n)";
}
double exponent_spmm() {
  return 1.0;
}

namespace {

// Input validation of spmm (not part of the algorithm, not charged): positive integer
// values, and the largest sketch value, sum_ij (i+1)^2 C_ij (or (j+1)^2), below 2^53 so
// that the unit's doubles and the singleton tests are exact.
void check_spmm_input(const std::vector<SparseEntry>& A, const std::vector<SparseEntry>& B,
                      index_t side) {
  std::vector<double> brow(sz(side), 0.0), bw(sz(side), 0.0);
  for (const auto* M : {&A, &B})
    for (const auto& e : *M)
      if (!(e.v > 0) || e.v != std::nearbyint(e.v) || e.row < 0 || e.row >= side || e.col < 0 ||
          e.col >= side)
        throw input_error("spmm: entries must be positive integers inside the matrix");
  for (const auto& e : B) {
    brow[sz(e.row)] += e.v;
    bw[sz(e.row)] += dbl(e.col + 1) * dbl(e.col + 1) * e.v;
  }
  double rows = 0, cols = 0;
  for (const auto& e : A) {
    rows += dbl(e.row + 1) * dbl(e.row + 1) * e.v * brow[sz(e.col)];
    cols += e.v * bw[sz(e.col)];
  }
  if (std::max(rows, cols) >= std::ldexp(1.0, 53))
    throw input_error("spmm: values too large for the exact sketch (weighted sums reach 2^53)");
}

}  // namespace

std::vector<SparseEntry> tcu_spmm_entries(TensorUnit& u, std::vector<SparseEntry> A,
                                          std::vector<SparseEntry> B, index_t side,
                                          std::uint64_t seed, nlohmann::json* details) {
  const index_t s = u.side();
  const index_t I = static_cast<index_t>(A.size() + B.size());
  check_spmm_input(A, B, side);

  // Upper bound on nnz(C): sum_k nnz(A(:,k)) nnz(B(k,:)) (I counts + 2 sqrt(n) operations).
  std::vector<index_t> ca(sz(side), 0), rb(sz(side), 0);
  for (const auto& e : A) ++ca[sz(e.col)];
  for (const auto& e : B) ++rb[sz(e.row)];
  u.cpu(u64(I));
  index_t Zub = 0;
  for (index_t k = 0; k < side; ++k) Zub += ca[sz(k)] * rb[sz(k)];
  u.cpu(u64(2 * side));
  Zub = std::min(Zub, side * side);

  std::vector<SparseEntry> found;
  std::mt19937_64 gen(seed ^ 0x5a17c0ffeeULL);
  nlohmann::json rounds = nlohmann::json::array();
  index_t U = Zub;
  const index_t Kp = round_up(side, s);
  for (int round = 0;; ++round) {
    if (round >= 200) throw std::runtime_error("spmm: sketch recovery did not converge");
    const auto want = static_cast<index_t>(std::ceil(std::sqrt(dbl(std::max<index_t>(U, 1)))));
    const bool identity = want >= side;
    const index_t b = identity ? side : std::max(want, std::min(s, side));
    std::vector<index_t> h(sz(side)), g(sz(side));
    if (identity) {
      std::iota(h.begin(), h.end(), 0);
      std::iota(g.begin(), g.end(), 0);
    } else {
      std::uniform_int_distribution<index_t> bucket(0, b - 1);
      for (auto& x : h) x = bucket(gen);
      for (auto& x : g) x = bucket(gen);
    }
    // Row sketches of A: SA (3b x Kp), rows [0,b) weight 1, [b,2b) (i+1), [2b,3b) (i+1)^2.
    // Column sketches of B: SB0 (Kp x b) weight 1, SB12 (Kp x 2b) weights (j+1), (j+1)^2.
    Mat SA(sz(3 * b * Kp), 0.0), SB0(sz(Kp * b), 0.0), SB12(sz(Kp * 2 * b), 0.0);
    for (const auto& e : A) {
      const double w = dbl(e.row + 1), wv = w * e.v;
      SA[sz(h[sz(e.row)] * Kp + e.col)] += e.v;
      SA[sz((b + h[sz(e.row)]) * Kp + e.col)] += wv;
      SA[sz((2 * b + h[sz(e.row)]) * Kp + e.col)] += w * wv;
    }
    for (const auto& e : B) {
      const double w = dbl(e.col + 1), wv = w * e.v;
      SB0[sz(e.row * b + g[sz(e.col)])] += e.v;
      SB12[sz(e.row * 2 * b + g[sz(e.col)])] += wv;
      SB12[sz(e.row * 2 * b + b + g[sz(e.col)])] += w * wv;
    }
    u.cpu(u64(5 * I));  // per nonzero: w v, w (w v) and three additions (w = i+1: an index)
    // On the unit: [SA0; SA1; SA2] x SB0 -> S0, S1, S2 and SA0 x SB12 -> T1, T2.
    const Mat SA0(SA.begin(), SA.begin() + b * Kp);
    const Mat P1 = padded_product(u, 3 * b, Kp, b, SA, SB0);
    const Mat P2 = padded_product(u, b, Kp, 2 * b, SA0, SB12);
    // Residual sketches: subtract what is already known (5 subtractions, 4 products each).
    std::vector<std::int64_t> R0(sz(b * b)), R1(sz(b * b)), R2(sz(b * b)), Q1(sz(b * b)),
        Q2(sz(b * b));
    for (index_t a = 0; a < b; ++a)
      for (index_t c = 0; c < b; ++c) {
        const size_t e = sz(a * b + c);
        R0[e] = std::llround(P1[sz(a * b + c)]);
        R1[e] = std::llround(P1[sz((b + a) * b + c)]);
        R2[e] = std::llround(P1[sz((2 * b + a) * b + c)]);
        Q1[e] = std::llround(P2[sz(a * 2 * b + c)]);
        Q2[e] = std::llround(P2[sz(a * 2 * b + b + c)]);
      }
    for (const auto& f : found) {
      const size_t e = sz(h[sz(f.row)] * b + g[sz(f.col)]);
      const std::int64_t v = std::llround(f.v), wi = f.row + 1, wj = f.col + 1;
      R0[e] -= v;
      R1[e] -= wi * v;
      R2[e] -= wi * wi * v;
      Q1[e] -= wj * v;
      Q2[e] -= wj * wj * v;
    }
    u.cpu(u64(9 * static_cast<index_t>(found.size())));
    // Scan the buckets: 1 comparison for an empty one; a non-empty one costs 2 divisions,
    // 2 remainders, 4 products and 4 comparisons for the singleton tests.
    index_t recovered = 0, unresolved = 0, nonempty = 0;
    for (size_t e = 0; e < R0.size(); ++e) {
      if (R0[e] < 0) throw std::runtime_error("spmm: negative residual sketch (internal error)");
      if (R0[e] == 0) continue;
      ++nonempty;
      const std::int64_t v = R0[e], qi = R1[e] / v, qj = Q1[e] / v;
      const bool single = R1[e] % v == 0 && R2[e] == qi * qi * v && Q1[e] % v == 0 &&
                          Q2[e] == qj * qj * v && qi >= 1 && qi <= side && qj >= 1 && qj <= side;
      if (single) {
        found.push_back({qi - 1, qj - 1, static_cast<double>(v)});
        ++recovered;
      } else {
        ++unresolved;
      }
    }
    u.cpu(u64(b * b + 12 * nonempty));
    rounds.push_back({{"buckets", b},
                      {"identity_hash", identity},
                      {"recovered", recovered},
                      {"unresolved_buckets", unresolved}});
    if (unresolved == 0) break;
    U = std::max(U - recovered, 2 * unresolved);
  }
  std::sort(found.begin(), found.end(), [](const SparseEntry& x, const SparseEntry& y) {
    return x.row != y.row ? x.row < y.row : x.col < y.col;
  });
  if (details) {
    (*details)["compression"] =
        "rows of A / columns of B hashed into b = ceil(sqrt(U)) buckets with weights 1, i+1, "
        "(i+1)^2; singleton buckets decoded exactly, repeated with fresh hashes on the residual";
    (*details)["I"] = I;
    (*details)["Z_upper_bound"] = Zub;
    (*details)["rounds"] = rounds;
    (*details)["padding"] = "sketches zero-padded to multiples of sqrt(m)";
  }
  return found;
}

TcuRun tcu_spmm(TensorUnit& u, const TcuProblem& p) {
  index_t side = 0;
  std::vector<SparseEntry> A, B;
  std::string source;
  if (!p.input.empty()) {
    const std::string file = input_file(p, "spmm", "/A and /B");
    Mat a, b;
    const index_t na = read_square(file, "/A", a), nb = read_square(file, "/B", b);
    if (na != nb) throw input_error(file + ": /A and /B differ in size");
    side = resolve_size(p, na, "spmm");
    check_size(p.size_name, "spmm", side, kMaxDenseSide, "a matrix side", size_source(p, "/A"));
    A = dense_to_entries(a, side, file + ":/A");
    B = dense_to_entries(b, side, file + ":/B");
    source = p.input;
  } else {
    check_size(p.size_name, "spmm", p.size, kMaxSparseSide, "a matrix side");
    side = p.size;
    std::mt19937_64 gen(p.seed);
    A = random_sparse(side, kSpmmPerRow, gen);
    B = random_sparse(side, kSpmmPerRow, gen);
    source = std::to_string(kSpmmPerRow) + " nonzeros (1..9) per row of A and B, seed " +
             std::to_string(p.seed);
  }
  const double n = dbl(side) * dbl(side);
  TcuRun run;
  run.details = {{"size", side}, {"theorem_n", n}, {"input", source}};
  const std::vector<SparseEntry> C = tcu_spmm_entries(u, A, B, side, p.seed, &run.details);
  const std::vector<SparseEntry> ref = reference_sparse_product(A, B, side);
  const double Z = dbl(static_cast<index_t>(ref.size()));
  run.verified = C == ref;
  run.reference = "CPU sparse row-by-row product, exact equality of every entry";
  run.details["Z"] = static_cast<index_t>(ref.size());
  run.details["bound_with_measured_Z_I"] =
      spmm_theorem(n, dbl(u.m()), dbl(u.latency()), Z, run.details["I"].get<double>());
  run.details["theorem_condition_Z_ge_m"] = Z >= dbl(u.m());
  return run;
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
    std::vector<index_t> dims;
    b = read_real(file, "/b", dims);
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
// (A^2 and D^(2) A; one at the last level), both on the unit with the Theorem 2 blocking
// (w0 = 3/2). Time (n^2/m)^1.5 (m + l) log2 n.

double bound_apsd(double n, double m, double l) {
  return std::pow(n * n / m, 1.5) * (m + l) * std::max(1.0, std::log2(n));
}
const char* formula_apsd() {
  return "(n^2/m)^w0 (m + l) log2 n, w0 = 3/2";
}
double exponent_apsd() {
  return 3.0;
}

namespace {

// Seidel's APD(A) for the connected graph with 0/1 adjacency A (zero diagonal).
Mat seidel(TensorUnit& u, const Mat& A, index_t n, int& levels) {
  ++levels;
  const size_t nn = sz(n * n);
  const Mat Z = padded_product(u, n, n, n, A, A);
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
  const Mat T = seidel(u, B, n, levels);
  const Mat X = padded_product(u, n, n, n, T, A);
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
                                    int* levels) {
  int depth = 0;
  Mat A(adj);
  for (index_t i = 0; i < n; ++i) A[sz(i * n + i)] = 0;
  for (auto& v : A) v = v != 0 ? 1.0 : 0.0;
  Mat D = seidel(u, A, n, depth);
  if (levels) *levels = depth;
  return D;
}

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
    // Connected by construction: a random spanning tree whose vertex v (in a random order)
    // hangs off one of the 4 vertices before it (long paths: several Seidel levels), plus
    // floor(sqrt(n)) random extra edges.
    std::mt19937_64 gen(p.seed);
    std::vector<index_t> perm(sz(n));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), gen);
    adj.assign(sz(n * n), 0.0);
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
  const Mat D = tcu_seidel_apsd(u, adj, n, &levels);
  bool ok = true;
  index_t diameter = 0;
  for (size_t e = 0; e < ref.size(); ++e) {
    ok = ok && D[e] == dbl(ref[e]);
    diameter = std::max(diameter, ref[e]);
  }
  TcuRun run;
  run.verified = ok;
  run.reference = "BFS from every vertex, exact equality of all distances";
  run.details = {
      {"size", n},
      {"theorem_n", dbl(n)},
      {"input", source},
      {"recursion_levels", levels},
      {"diameter", diameter},
      {"products", 2 * levels - 1},
      {"padding",
       round_up(n, u.side()) == n ? "none" : "products zero-padded to a multiple of sqrt(m)"}};
  return run;
}

}  // namespace triada
