#include "mxu/tcu_io_bound.hpp"

#include <algorithm>
#include <cmath>

namespace triada {

namespace {

constexpr const char* kTheorem12 =
    "TCU paper Theorem 12 (Sec. 5): an I/O lower bound at M = 3m, B = 1 is an Omega() bound "
    "on weak-TCU time";

// Dense n x n product with semiring operations (Theorem 2's algorithm): Hong and Kung
// (STOC 1981) proved Omega(n^3 / sqrt(M)); Irony, Toledo and Tiskin (J. Parallel Distrib.
// Comput. 64, 2004, sequential case) give it with its constant: at least
// n^3 / (2 sqrt(2) sqrt(M)) - M words moved. Negative for tiny n: reported as 0.
IoLowerBound matmul_bound(double side, std::int64_t m) {
  const double M = 3.0 * static_cast<double>(m);
  const double v = side * side * side / (2.0 * std::sqrt(2.0) * std::sqrt(M)) - M;
  return {std::max(0.0, v), "max(0, side^3 / (2 sqrt(2) sqrt(M)) - M), M = 3m, B = 1",
          std::string("Irony, Toledo, Tiskin 2004 (the explicit-constant form of Hong and Kung "
                      "1981's Omega(n^3 / sqrt(M)) for semiring matrix products); ") +
              kTheorem12,
          ""};
}

IoLowerBound unknown(const std::string& formula, const std::string& source,
                     const std::string& reason) {
  return {std::nullopt, formula, source, reason};
}

}  // namespace

IoLowerBound tcu_io_lower_bound(const std::string& algo, double size, std::int64_t m) {
  if (algo == "matmul") return matmul_bound(size, m);
  if (algo == "dft")
    return unknown("Omega(n log n / log M)", "Hong and Kung 1981, for the FFT graph",
                   "that bound holds for algorithms evaluating the radix-2 FFT graph; this one "
                   "computes sqrt(m)-point DFTs as matrix products, outside that graph, and no "
                   "bound for the DFT problem itself is known");
  if (algo == "strassen")
    return unknown("Omega((n / sqrt(M))^(log2 7) M)",
                   "Ballard, Demmel, Holtz, Schwartz, J. ACM 2012",
                   "that bound is for Strassen's recursion down to a constant base case; this "
                   "run stops at sqrt(m) x sqrt(m) blocks multiplied classically (a hybrid)");
  if (algo == "ge")
    return unknown("Omega(n^3 / sqrt(M))",
                   "Ballard, Demmel, Holtz, Schwartz, SIAM J. Matrix "
                   "Anal. Appl. 2011, classical LU",
                   "a bound on classical elimination algorithms, known only in order (no "
                   "constant for this variant); the paper's Sec. 5 names none");
  return unknown("", "",
                 "no I/O lower bound for this problem is named by the paper's Sec. 5 or known "
                 "in a form that applies to this algorithm");
}

}  // namespace triada
