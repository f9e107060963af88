// Theorem 1: Strassen's product, its recursion ending on the unit (conventions:
// tcu_linear_algebra.hpp).
#include <cmath>
#include <vector>

#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_la_common.hpp"
#include "mxu/tcu_linear_algebra.hpp"

namespace triada {

using namespace tcu_la;

// =======================================================================================
// Theorem 1: Strassen (n0 = 4, p0 = 7), recursion ending on the unit at s x s blocks.
// Time ((n/m)^w0)(m + l), w0 = log_4 7.

namespace {

double bound_strassen(double n, double m, double l) {
  return std::pow(n / m, product_omega0(TcuProduct::fast)) * (m + l);
}
const char* formula_strassen() {
  return "(n/m)^w0 (m + l), w0 = log_4 7 = 1.4037";
}
double exponent_strassen() {
  return product_omega0(TcuProduct::fast);
}

}  // namespace

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

namespace {

TcuRun run_strassen(TensorUnit& u, const TcuProblem& p) {
  return run_square_product(u, p, "strassen", tcu_strassen_dense, true);
}

}  // namespace

const TcuAlgorithm tcu_strassen{"strassen",       "Theorem 1",    "matrix side sqrt(n)",
                                run_strassen,     bound_strassen, formula_strassen,
                                exponent_strassen};

}  // namespace triada
