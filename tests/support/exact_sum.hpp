#pragma once
// Test-only exact arithmetic: the sum of finite binary64 values held exactly in a wide
// fixed-point integer (bit 0 = 2^-1130, below the last bit of every binary64 significand;
// 35 64-bit limbs reach 2^1110), rounded once to a binary format with round to nearest
// even. Written here,
// from integers, as the oracle of the library's binary32 roundings of sums and products
// (precision/cell_mode.hpp); nothing here calls the library.
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

namespace triada::test {

class ExactSum {
 public:
  // Adds x exactly (finite x only).
  void add(double x) {
    if (x == 0) {
      all_neg_zero_ = all_neg_zero_ && std::signbit(x);
      return;
    }
    all_neg_zero_ = false;
    int e = 0;
    const double m = std::frexp(std::fabs(x), &e);  // |x| = m 2^e, 0.5 <= m < 1
    const auto mant = static_cast<std::uint64_t>(std::ldexp(m, 53));
    add_shifted(x < 0 ? neg_ : pos_, mant, e - 53 + kBias);
  }
  // a * b exactly, for binary32 a and b (a 48-bit integer times a power of two).
  void add_product(float a, float b) {
    const double p = static_cast<double>(a) * static_cast<double>(b);  // exact
    add(p);
  }

  // The sum rounded to nearest even with p significant bits, the last bit never below
  // 2^min_exp (subnormals), magnitudes of 2^max_exp and more as Inf. binary32: (24, -149,
  // 128); binary64: (53, -1074, 1024). An exact zero is -0 only if every term was -0.
  double round(int p, int min_exp, int max_exp) const {
    Limbs mag{};
    const bool negative = less(pos_, neg_);
    sub(negative ? neg_ : pos_, negative ? pos_ : neg_, mag);
    const int top = highest_bit(mag);
    if (top < 0) return all_neg_zero_ ? -0.0 : 0.0;
    const int lead = top - kBias;  // the leading bit is 2^lead
    const int lsb = std::max(lead - (p - 1), min_exp);
    const int k = lsb + kBias;  // bits [0, k) are dropped
    std::uint64_t q = bits_from(mag, k);
    if (k > 0 && bit(mag, k - 1) && (any_below(mag, k - 1) || (q & 1u))) ++q;
    const double v = std::ldexp(static_cast<double>(q), lsb);
    const double r = v >= std::ldexp(1.0, max_exp) ? std::numeric_limits<double>::infinity() : v;
    return negative ? -r : r;
  }
  float to_binary32() const { return static_cast<float>(round(24, -149, 128)); }
  double to_binary64() const { return round(53, -1074, 1024); }

 private:
  static constexpr int kLimbs = 35, kBias = 1130;
  using Limbs = std::array<std::uint64_t, kLimbs>;
  __extension__ using u128 = unsigned __int128;

  static void add_shifted(Limbs& a, std::uint64_t v, int shift) {
    const int li = shift / 64, sh = shift % 64;
    // v (< 2^53) shifted by sh spans at most two limbs.
    const u128 w = static_cast<u128>(v) << sh;
    std::uint64_t carry = 0;
    for (int i = li; i < kLimbs && (i < li + 2 || carry); ++i) {
      const std::uint64_t part = i == li       ? static_cast<std::uint64_t>(w)
                                 : i == li + 1 ? static_cast<std::uint64_t>(w >> 64)
                                               : 0;
      const u128 s = static_cast<u128>(a[i]) + part + carry;
      a[i] = static_cast<std::uint64_t>(s);
      carry = static_cast<std::uint64_t>(s >> 64);
    }
  }
  static bool less(const Limbs& a, const Limbs& b) {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (a[i] != b[i]) return a[i] < b[i];
    return false;
  }
  static void sub(const Limbs& a, const Limbs& b, Limbs& out) {  // a >= b
    std::uint64_t borrow = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const std::uint64_t d = a[i] - b[i] - borrow;
      borrow = (a[i] < b[i] || (a[i] == b[i] && borrow)) ? 1 : 0;
      out[i] = d;
    }
  }
  static int highest_bit(const Limbs& a) {
    for (int i = kLimbs - 1; i >= 0; --i)
      if (a[i]) return 64 * i + 63 - __builtin_clzll(a[i]);
    return -1;
  }
  static bool bit(const Limbs& a, int i) { return (a[i / 64] >> (i % 64)) & 1u; }
  static bool any_below(const Limbs& a, int i) {  // a bit in [0, i) set
    for (int l = 0; l < i / 64; ++l)
      if (a[l]) return true;
    return i % 64 && (a[i / 64] & ((std::uint64_t{1} << (i % 64)) - 1));
  }
  static std::uint64_t bits_from(const Limbs& a, int k) {  // a >> k, < 2^54 here
    const int li = k / 64, sh = k % 64;
    u128 w = a[li];
    if (li + 1 < kLimbs) w |= static_cast<u128>(a[li + 1]) << 64;
    return static_cast<std::uint64_t>(w >> sh);
  }

  Limbs pos_{}, neg_{};
  bool all_neg_zero_ = true;
};

}  // namespace triada::test
