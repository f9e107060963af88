#pragma once
// Checked size arithmetic: every product of sizes a user controls (shapes, matrix sides,
// mesh extents) goes through checked_mul, so a huge declared size ends the run with one
// clear input_error instead of a wrapped number that sizes a buffer or a report.
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "core/error.hpp"

namespace triada {

// a * b, or input_error "<what>: <a> x <b> does not fit a 64-bit size" if the product
// overflows T (or is negative: sizes never are).
template <class T, class U>
T checked_mul(T a, U b, const std::string& what) {
  static_assert(std::is_integral_v<T> && std::is_integral_v<U>);
  T r{};
  if (std::cmp_less(a, 0) || std::cmp_less(b, 0) || __builtin_mul_overflow(a, b, &r))
    throw input_error(what + ": " + std::to_string(a) + " x " + std::to_string(b) +
                      " does not fit a 64-bit size");
  return r;
}

// a + b, or input_error naming `what` if the sum overflows T (totals of byte counts).
template <class T>
T checked_add(T a, T b, const std::string& what) {
  static_assert(std::is_integral_v<T>);
  T r{};
  if (__builtin_add_overflow(a, b, &r))
    throw input_error(what + ": " + std::to_string(a) + " + " + std::to_string(b) +
                      " does not fit a 64-bit size");
  return r;
}

// Product of several sizes (e.g. the extents of a shape), each step checked.
template <class T, class Range>
T checked_product(const Range& sizes, const std::string& what) {
  T p = 1;
  for (const auto s : sizes) p = checked_mul(p, static_cast<T>(s), what);
  return p;
}

// Runs f(); an allocation that still fails (std::bad_alloc, or a std::length_error from
// a container asked for more than max_size()) becomes one input_error naming `what`.
template <class F>
decltype(auto) out_of_memory_is_input_error(const std::string& what, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw input_error(what + ": out of memory");
  } catch (const std::length_error&) {
    throw input_error(what + ": out of memory (a buffer larger than any allocation)");
  }
}

}  // namespace triada
