#include <cmath>

#include "core/error.hpp"
#include "mxu/tcu_algorithms.hpp"

namespace triada {

TcuProduct parse_tcu_product(const std::string& word) {
  if (word == "fast") return TcuProduct::fast;
  if (word == "classical") return TcuProduct::classical;
  throw config_error("unknown product '" + word + "' (known: fast, classical)");
}

std::string to_string(TcuProduct p) {
  return p == TcuProduct::fast ? "fast" : "classical";
}

double product_omega0(TcuProduct p) {
  return p == TcuProduct::fast ? std::log(7.0) / std::log(4.0) : 1.5;
}

std::string omega0_text(TcuProduct p) {
  return p == TcuProduct::fast ? "log_4 7 = 1.4037 (fast product)" : "3/2 (classical product)";
}

const std::vector<TcuAlgorithm>& tcu_algorithms() {
  // Bound formulas: see each implementation file for the theorem's statement.
  static const std::vector<TcuAlgorithm> table = {
      {"matmul", "Theorem 2", "matrix side sqrt(n)", tcu_matmul, bound_matmul, formula_matmul,
       exponent_matmul},
      {"strassen", "Theorem 1", "matrix side sqrt(n)", tcu_strassen, bound_strassen,
       formula_strassen, exponent_strassen},
      {"spmm", "Theorem 3", "matrix side sqrt(n)", tcu_spmm, bound_spmm, formula_spmm,
       exponent_spmm},
      {"ge", "Theorem 4", "number of equations", tcu_ge, bound_ge, formula_ge, exponent_ge},
      {"tclosure", "Theorem 5", "vertices", tcu_tclosure, bound_tclosure, formula_tclosure,
       exponent_tclosure},
      {"apsd", "Theorem 6", "vertices", tcu_apsd, bound_apsd, formula_apsd, exponent_apsd},
      {"dft", "Theorem 7", "vector length", tcu_dft, bound_dft, formula_dft, exponent_dft},
      {"stencil", "Theorem 8", "matrix side", tcu_stencil, bound_stencil, formula_stencil,
       exponent_stencil},
      {"intmul", "Theorem 9", "bits", tcu_intmul, bound_intmul, formula_intmul, exponent_intmul},
      {"karatsuba", "Theorem 10", "bits", tcu_karatsuba, bound_karatsuba, formula_karatsuba,
       exponent_karatsuba},
      {"polyeval", "Theorem 11", "coefficients", tcu_polyeval, bound_polyeval, formula_polyeval,
       exponent_polyeval},
  };
  return table;
}

const TcuAlgorithm& find_tcu_algorithm(const std::string& name) {
  std::string known;
  for (const auto& a : tcu_algorithms()) {
    if (name == a.name) return a;
    known += (known.empty() ? "" : ", ") + std::string(a.name);
  }
  throw config_error("unknown algorithm '" + name + "' (known: " + known + ")");
}

}  // namespace triada
