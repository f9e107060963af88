// Theorem 2 of "A Computational Model for Tensor Core Units": dense matrix multiplication
// with tall left strips (conventions: tcu_linear_algebra.hpp).
#include <cmath>
#include <vector>

#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_la_common.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {

using namespace tcu_la;

// =======================================================================================
// Theorem 2: dense matrix multiplication with tall left strips.
// Time (n/m)(sqrt(n m) + l): n/m calls, each a sqrt(n) x sqrt(m) strip times a block.

namespace {

double bound_matmul(double n, double m, double l) {
  return std::pow(n, 1.5) / std::sqrt(m) + n / m * l;
}
const char* formula_matmul() {
  return "n^1.5/sqrt(m) + (n/m) l = (n/m)(sqrt(n m) + l)";
}
double exponent_matmul() {
  return 1.5;
}

}  // namespace

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

TcuRun run_matmul(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "matmul", tcu_matmul_dense, false);
}

}  // namespace

const TcuAlgorithm tcu_matmul{"matmul",     "Theorem 2",    "matrix side sqrt(n)", run_matmul,
                              bound_matmul, formula_matmul, exponent_matmul};

}  // namespace triada
