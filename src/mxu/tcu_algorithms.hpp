#pragma once
// The algorithms of "A Computational Model for Tensor Core Units" (Theorems 1-11), each
// running its matrix products on a TensorUnit and checked against an independent
// reference. One table (tcu_registry.cpp) lists them for triada-tcu.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mxu/tensor_unit.hpp"

namespace triada {

// The matrix product an algorithm runs where its theorem names one (spmm: Theorem 3,
// apsd: Theorem 6): classical = Theorem 2's blocking (omega_0 = 3/2), fast = Strassen
// (Theorem 1 with n0 = 4, p0 = 7, omega_0 = log_4 7), the Strassen-like product the
// theorems' bounds assume.
enum class TcuProduct { classical, fast };
TcuProduct parse_tcu_product(const std::string& word);  // throws config_error
std::string to_string(TcuProduct p);
double product_omega0(TcuProduct p);  // 3/2 or log_4 7
// omega_0 as bound formulas state it: "log_4 7 = 1.4037 (fast product)" or "3/2 (classical
// product)".
std::string omega0_text(TcuProduct p);

struct TcuProblem {
  std::int64_t size = 0;   // natural size: matrix side, vertices, vector length, bits, coefficients
  std::uint64_t seed = 1;  // inputs generated from it unless `input` is given
  std::string input;       // optional HDF5 file "file.h5[:/dset]" (every algorithm)
  // What messages call the size and the input (a program passes its option names).
  std::string size_name = "size";
  std::string input_name = "input";
  // Parameters of single algorithms (0 or empty: the algorithm's default).
  TcuProduct product = TcuProduct::fast;  // spmm, apsd
  std::int64_t sweeps = 0;                // stencil: k
  std::vector<double> kernel{};           // stencil: the 9 weights w[(a+1)*3 + (b+1)]
  std::int64_t points = 0;                // polyeval: p
  // Prefix of the parameters' names in messages ("--" for a program's options).
  std::string option_prefix{};
};

struct TcuRun {
  bool verified = false;   // true only if the result matched the reference
  std::string reference;   // what it was checked against, e.g. "GMP mpz_mul"
  nlohmann::json details;  // algorithm-specific facts (padding, compression, errors, ...)
  // The theorem's bound when the run's parameters change its expression (spmm's measured Z
  // and I and product, apsd's product, stencil's k, polyeval's p); else the table's.
  std::optional<double> bound;
  std::string bound_formula;
  std::optional<double> growth_exponent;
};

struct TcuAlgorithm {
  const char* name;          // --algo
  const char* theorem;       // e.g. "Theorem 2"
  const char* size_meaning;  // what the size is
  // Runs on the unit (which accumulates the cost); throws config_error for a size the
  // algorithm cannot take (the message names the size and the rule).
  TcuRun (*run)(TensorUnit& unit, const TcuProblem& p);
  // The theorem's time expression (constants 1) for natural size n, unit size m, latency l.
  double (*bound)(double n, double m, double l);
  const char* (*bound_formula)();  // the expression as text, e.g. "(n/m)(sqrt(n m) + l)"
  // The theorem's growth exponent in n for fixed m, l (the --sweep fit compares with it).
  double (*growth_exponent)();
};

// All algorithms, in the paper's order.
const std::vector<TcuAlgorithm>& tcu_algorithms();
// Throws config_error naming the unknown algorithm and listing the known ones.
const TcuAlgorithm& find_tcu_algorithm(const std::string& name);

// Implementations (one per algorithm).
TcuRun tcu_matmul(TensorUnit&, const TcuProblem&);
TcuRun tcu_strassen(TensorUnit&, const TcuProblem&);
TcuRun tcu_spmm(TensorUnit&, const TcuProblem&);
TcuRun tcu_ge(TensorUnit&, const TcuProblem&);
TcuRun tcu_tclosure(TensorUnit&, const TcuProblem&);
TcuRun tcu_apsd(TensorUnit&, const TcuProblem&);
TcuRun tcu_dft(TensorUnit&, const TcuProblem&);
TcuRun tcu_stencil(TensorUnit&, const TcuProblem&);
TcuRun tcu_intmul(TensorUnit&, const TcuProblem&);
TcuRun tcu_karatsuba(TensorUnit&, const TcuProblem&);
TcuRun tcu_polyeval(TensorUnit&, const TcuProblem&);

double bound_matmul(double n, double m, double l);
double bound_strassen(double n, double m, double l);
double bound_spmm(double n, double m, double l);
double bound_ge(double n, double m, double l);
double bound_tclosure(double n, double m, double l);
double bound_apsd(double n, double m, double l);
double bound_dft(double n, double m, double l);
double bound_stencil(double n, double m, double l);
double bound_intmul(double n, double m, double l);
double bound_karatsuba(double n, double m, double l);
double bound_polyeval(double n, double m, double l);

const char* formula_matmul();
double exponent_matmul();
const char* formula_strassen();
double exponent_strassen();
const char* formula_spmm();
double exponent_spmm();
const char* formula_ge();
double exponent_ge();
const char* formula_tclosure();
double exponent_tclosure();
const char* formula_apsd();
double exponent_apsd();
const char* formula_dft();
double exponent_dft();
const char* formula_stencil();
double exponent_stencil();
const char* formula_intmul();
double exponent_intmul();
const char* formula_karatsuba();
double exponent_karatsuba();
const char* formula_polyeval();
double exponent_polyeval();

}  // namespace triada
