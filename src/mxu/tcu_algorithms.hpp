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
  // matmul and strassen: the product C they computed and checked (side x side, C order).
  std::vector<double> product;
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

  // An entry runs as its run function: tcu_matmul(unit, problem).
  TcuRun operator()(TensorUnit& unit, const TcuProblem& p) const { return run(unit, p); }
};

// All algorithms, in the paper's order.
const std::vector<TcuAlgorithm>& tcu_algorithms();
// Throws config_error naming the unknown algorithm and listing the known ones.
const TcuAlgorithm& find_tcu_algorithm(const std::string& name);

// The algorithms, one entry each, defined in its theorem's file (tcu_<name>.cpp; intmul
// and karatsuba share tcu_intmul.cpp); tcu_algorithms() lists them.
extern const TcuAlgorithm tcu_strassen;   // Theorem 1
extern const TcuAlgorithm tcu_matmul;     // Theorem 2
extern const TcuAlgorithm tcu_spmm;       // Theorem 3
extern const TcuAlgorithm tcu_ge;         // Theorem 4
extern const TcuAlgorithm tcu_tclosure;   // Theorem 5
extern const TcuAlgorithm tcu_apsd;       // Theorem 6
extern const TcuAlgorithm tcu_dft;        // Theorem 7
extern const TcuAlgorithm tcu_stencil;    // Theorem 8
extern const TcuAlgorithm tcu_intmul;     // Theorem 9
extern const TcuAlgorithm tcu_karatsuba;  // Theorem 10
extern const TcuAlgorithm tcu_polyeval;   // Theorem 11

}  // namespace triada
