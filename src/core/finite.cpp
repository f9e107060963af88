#include "core/finite.hpp"

#include <cstdio>

#include "core/error.hpp"

namespace triada {

std::string value_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string value_text(const cplx& v) {
  return "(" + value_text(v.real()) + ", " + value_text(v.imag()) + ")";
}

void throw_non_finite(const std::string& name, std::size_t flat, const std::vector<index_t>& dims,
                      const std::string& value) {
  std::vector<std::size_t> at(dims.empty() ? 1 : dims.size(), 0);
  std::size_t rest = flat;
  for (std::size_t d = at.size(); d-- > 1;) {  // the fastest extent last
    const auto n = static_cast<std::size_t>(dims[d]);
    at[d] = rest % n;
    rest /= n;
  }
  at[0] = rest;
  std::string where;
  for (const std::size_t i : at) where += (where.empty() ? "(" : ", ") + std::to_string(i);
  throw input_error(name + ": element " + where + ") is " + value +
                    "; non-finite values are refused");
}

}  // namespace triada
