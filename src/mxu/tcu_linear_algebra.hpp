#pragma once
// The linear-algebra and graph TCU algorithms of "A Computational Model for Tensor Core
// Units" (Sec. 4.1-4.4): Theorems 1-6 on explicit inputs, and the CPU references they are
// checked against, defined in one file per theorem (tcu_<name>.cpp) and tcu_products.cpp.
// The algorithm entries tcu_<name> (tcu_algorithms.hpp) generate or read inputs, call these
// and verify; tests call them directly on hand-computable cases.
//
// Cost accounting: every product runs on the TensorUnit (r sqrt(m) + l per call); every
// other arithmetic operation or comparison is charged with TensorUnit::cpu, one unit each.
// Copies, zero padding and index arithmetic (including hashing indices) are free.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada {

// A nonzero of a sparse matrix.
struct SparseEntry {
  index_t row = 0, col = 0;
  double v = 0;
  bool operator==(const SparseEntry&) const = default;
};

// Theorem 2: C = A B (side x side, row-major). Sides that are not a multiple of s are
// zero-padded to the next multiple; the unit then runs (S/s)^2 calls of S rows each
// (weak unit: (S/s)^3 calls of s rows). `details` (optional) gets padding facts.
std::vector<double> tcu_matmul_dense(TensorUnit& unit, const std::vector<double>& A,
                                     const std::vector<double>& B, index_t side,
                                     nlohmann::json* details = nullptr);

// Theorem 1: Strassen (2 x 2 blocks, 7 products) down to s x s blocks, which run on the
// unit; sides are zero-padded to s 2^k.
std::vector<double> tcu_strassen_dense(TensorUnit& unit, const std::vector<double>& A,
                                       const std::vector<double>& B, index_t side,
                                       nlohmann::json* details = nullptr);

// The check of a product C = A B of side x side matrices against reference_product: exact
// equality for `exact` (integer) data, else entrywise |C - Cref| <= (2n + 2) u (|A||B|), the
// dot-product bound of both sides. A Strassen product (`strassen`: padded to side D, s x s
// base blocks) does not satisfy that entrywise bound; its own is normwise: the reference's
// (n + 1) u (|A||B|) plus strassen_error_factor(D, s) u max|A| max|B| (mxu/tcu_error_bounds).
struct StrassenBlocks {
  index_t side = 0;  // D = s 2^k
  index_t base = 0;  // s
};
struct ProductCheck {
  bool ok = true;
  double max_abs_error = 0;
};
ProductCheck check_square_product(const std::vector<double>& C, const std::vector<double>& A,
                                  const std::vector<double>& B, index_t side, bool exact,
                                  const StrassenBlocks* strassen = nullptr);

// C = A (R x K) B (K x N), any sizes >= 1, on the unit with `product`: classical is
// Theorem 2's blocking (tall strips, zero padding to R >= s and K, N multiples of s); fast
// is Strassen (Theorem 1) on D x D blocks (fast_product_side), the depth's partial tiles
// summed on the CPU (one addition per entry of a tile after its first depth chunk).
std::vector<double> tcu_product(TensorUnit& unit, index_t R, index_t K, index_t N,
                                const std::vector<double>& A, const std::vector<double>& B,
                                TcuProduct product);
// The fast product's block side: s 2^k, the smallest such side >= min(R, K, N).
index_t fast_product_side(index_t s, index_t R, index_t K, index_t N);

// Reports the product a run used (details.product) and the theorem's bound under both
// products (details.bounds.fast, .classical); the run's bound is that of `product`.
void set_product_bounds(TcuRun& run, TcuProduct product, double n, const TensorUnit& unit,
                        const std::function<double(double, double, double, TcuProduct)>& bound,
                        const std::string& formula, double exponent);

// Theorem 3: C = A B for sparse A, B (side x side) with any finite real values, by the
// hashed sketches described in tcu_spmm.cpp; the entries of C whose computed value is not
// zero, sorted by (row, col). `seed` drives the hash functions. Throws input_error for an
// entry outside the matrix, a repeated entry or a non-finite value.
std::vector<SparseEntry> tcu_spmm_entries(TensorUnit& unit, std::vector<SparseEntry> A,
                                          std::vector<SparseEntry> B, index_t side,
                                          std::uint64_t seed, nlohmann::json* details = nullptr,
                                          TcuProduct product = TcuProduct::fast);

// Theorem 4 / Figure 4: solves A x = b (N equations) by blocked forward elimination
// without pivoting on c = [A b; 0 0] and back substitution. Throws input_error on a zero
// pivot.
std::vector<double> tcu_ge_solve(TensorUnit& unit, const std::vector<double>& A,
                                 const std::vector<double>& b, index_t N,
                                 nlohmann::json* details = nullptr);

// Theorem 5 / Figure 7: transitive closure of the directed graph with 0/1 adjacency adj
// (n x n): c[i][j] = 1 iff j is reachable from i by a path of length >= 1.
std::vector<double> tcu_transitive_closure(TensorUnit& unit, const std::vector<double>& adj,
                                           index_t n);

// Theorem 6: Seidel's all-pairs shortest distances of a connected undirected graph (0/1
// symmetric adjacency, zero diagonal), its products run with `product`. `levels`
// (optional) gets the recursion depth.
std::vector<double> tcu_seidel_apsd(TensorUnit& unit, const std::vector<double>& adj, index_t n,
                                    int* levels = nullptr, TcuProduct product = TcuProduct::fast);

// ---- CPU references (never charged) ----------------------------------------------------
// Triple loop, C = A (R x K) B (K x N).
std::vector<double> reference_product(const std::vector<double>& A, const std::vector<double>& B,
                                      index_t R, index_t K, index_t N);
// Row-by-row sparse product with a dense accumulator; entries sorted by (row, col), exact
// zeros dropped.
std::vector<SparseEntry> reference_sparse_product(std::vector<SparseEntry> A,
                                                  const std::vector<SparseEntry>& B, index_t side);
// Gaussian elimination with partial pivoting; throws input_error if A is singular.
std::vector<double> reference_solve(std::vector<double> A, std::vector<double> b, index_t N);
// BFS from every vertex: reach[v][w] = 1 iff a path of length >= 1 leads from v to w.
std::vector<double> reference_reachability(const std::vector<double>& adj, index_t n);
// BFS distances from every vertex (-1: unreachable).
std::vector<index_t> reference_distances(const std::vector<double>& adj, index_t n);

}  // namespace triada
