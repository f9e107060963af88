#pragma once
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <type_traits>

namespace triada {

using index_t = std::int64_t;
using cplx = std::complex<double>;
// Extents or coordinates along axes 1, 2, 3 (stored at [0], [1], [2]); axis 1 slowest (C order).
using ext3 = std::array<index_t, 3>;

template <class T>
inline constexpr bool is_complex_v = std::is_same_v<T, cplx>;

// Whole blocks of q covering v, and v rounded up to a multiple of q (v >= 0, q >= 1).
constexpr index_t ceil_div(index_t v, index_t q) {
  return (v + q - 1) / q;
}
constexpr index_t round_up(index_t v, index_t q) {
  return ceil_div(v, q) * q;
}

// Zero test used by ESOP: a complex value is zero only if both parts are.
inline bool is_zero(double v) {
  return v == 0.0;
}
inline bool is_zero(const cplx& v) {
  return v.real() == 0.0 && v.imag() == 0.0;
}

// Multiply (complex written out, never through the C99 Annex G __muldc3 path).
inline double mul(double a, double b) {
  return a * b;
}
inline cplx mul(const cplx& a, const cplx& b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

// The cell's multiply-add w + y * c, defined once for every executor: a fused
// multiply-add with one rounding (as a hardware MAC cell does). A complex MAC is four
// real fused multiply-adds in this fixed order, so every executor gets the same bits.
inline double mac(double w, double y, double c) {
  return std::fma(y, c, w);
}
inline cplx mac(const cplx& w, const cplx& y, const cplx& c) {
  const double re = std::fma(-y.imag(), c.imag(), std::fma(y.real(), c.real(), w.real()));
  const double im = std::fma(y.imag(), c.real(), std::fma(y.real(), c.imag(), w.imag()));
  return {re, im};
}

inline std::string to_string(const ext3& e) {
  return std::to_string(e[0]) + "x" + std::to_string(e[1]) + "x" + std::to_string(e[2]);
}

}  // namespace triada
