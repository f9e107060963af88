#pragma once
// What the linear-algebra TCU algorithms (Theorems 1-6, one file each) share, defined in
// tcu_products.cpp: sizes, padding, the products on the unit and the inputs of the square
// and graph algorithms. Internal to src/mxu.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/types.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_inputs.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada::tcu_la {

using Mat = std::vector<double>;  // row-major

// Largest natural size each algorithm accepts (dense side x side doubles must fit in memory).
constexpr index_t kMaxDenseSide = 4096;

inline std::uint64_t u64(index_t v) {
  return static_cast<std::uint64_t>(v);
}
inline double dbl(index_t v) {
  return static_cast<double>(v);
}
inline std::size_t sz(index_t v) {
  return static_cast<std::size_t>(v);
}

using tcu_in::check_size;
using tcu_in::input_file;
using tcu_in::read_square;
using tcu_in::resolve_size;
using tcu_in::size_source;

// One product of a tall strip (r x s) by an s x s block (one call; on a weak unit one call
// per chunk of s rows, r a multiple of s there).
void strip_call(TensorUnit& u, index_t r, const double* A, index_t lda, const double* B,
                index_t ldb, double* C, index_t ldc, bool accumulate);
// Theorem 2's blocking: C (R x N) (+)= A (R x K) * B (K x N), R >= s, K and N multiples of s.
void unit_gemm(TensorUnit& u, index_t R, index_t K, index_t N, const double* A, index_t lda,
               const double* B, index_t ldb, double* C, index_t ldc, bool accumulate);
// Zero padding of a side x side matrix to padded x padded, and back.
Mat pad_square(const Mat& a, index_t side, index_t padded);
Mat unpad_square(const Mat& p, index_t padded, index_t side);
// C = A (R x K) B (K x N) by Strassen on D x D blocks (fast_product_side).
Mat fast_product(TensorUnit& u, index_t R, index_t K, index_t N, const Mat& A, const Mat& B);

// A square product on the unit (matmul, strassen: `fast`) of --input's /A and /B or small
// random integers, checked against the CPU triple loop with the bound that holds for it.
using SquareProduct = Mat (*)(TensorUnit&, const Mat&, const Mat&, index_t, nlohmann::json*);
TcuRun run_square_product(TensorUnit& u, const TcuProblem& p, const char* algo,
                          SquareProduct multiply, bool fast);
// A 0/1 adjacency matrix from --input (dataset /adjacency unless one is named); its side.
index_t read_adjacency(const TcuProblem& p, const char* algo, Mat& adj);

}  // namespace triada::tcu_la
