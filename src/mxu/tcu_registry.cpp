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
  // In the paper's order; each entry is defined in its theorem's file.
  static const std::vector<TcuAlgorithm> table = {
      tcu_matmul, tcu_strassen, tcu_spmm,   tcu_ge,        tcu_tclosure, tcu_apsd,
      tcu_dft,    tcu_stencil,  tcu_intmul, tcu_karatsuba, tcu_polyeval};
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
