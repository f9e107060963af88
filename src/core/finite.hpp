#pragma once
// The rule for non-finite operands (doc/design.md §6.6): no program computes with NaN or Inf.
// The simulated cells skip zero operands (ESOP, the MXU's zero skipping), which agrees with
// IEEE arithmetic only for finite values (0 * Inf is NaN, and skipping it is not), and the
// programs' checks against fp64 compare finite results; so every input that holds a
// non-finite value is refused before any work (input_error, exit 1), naming the input and
// its first non-finite element in C order.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace triada {

inline bool is_finite_value(double v) {
  return std::isfinite(v);
}
inline bool is_finite_value(const cplx& v) {
  return std::isfinite(v.real()) && std::isfinite(v.imag());
}

// The C-order index of the first non-finite value of `v`, or v.size() if there is none.
template <class T>
std::size_t first_non_finite(const std::vector<T>& v) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!is_finite_value(v[i])) return i;
  return v.size();
}

// "nan", "inf", "-inf"; a complex value as "(re, im)".
std::string value_text(double v);
std::string value_text(const cplx& v);

// Throws input_error "NAME: element (i, j, k) is VALUE; non-finite values are refused" for
// the element at C-order index `flat` of an array of extents `dims` (slowest first; a flat
// list if empty).
[[noreturn]] void throw_non_finite(const std::string& name, std::size_t flat,
                                   const std::vector<index_t>& dims, const std::string& value);

// Throws as throw_non_finite if `v`, an array of extents `dims` read from the input `name`,
// holds a non-finite value.
template <class T>
void require_finite(const std::vector<T>& v, const std::vector<index_t>& dims,
                    const std::string& name) {
  const std::size_t at = first_non_finite(v);
  if (at < v.size()) throw_non_finite(name, at, dims, value_text(v[at]));
}

}  // namespace triada
