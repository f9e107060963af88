#include "precision/cell_mode.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "core/error.hpp"

namespace triada {

namespace {
// Round a binary32 to `keep` explicit significand bits, nearest even; Inf/NaN untouched.
float round_mantissa(float x, int keep) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7F800000u) == 0x7F800000u) return x;
  const int drop = 23 - keep;
  const std::uint32_t half = 1u << (drop - 1), mask = (1u << drop) - 1;
  const std::uint32_t rest = u & mask;
  u &= ~mask;
  if (rest > half || (rest == half && (u & (1u << drop)))) u += 1u << drop;  // may carry to Inf
  return std::bit_cast<float>(u);
}

// x rounded to binary32 (nearest even), as a binary64. Never inlined: GCC 12.2 at -O2
// miscompiles two of these returned together (a std::complex or a struct of two doubles):
// its SLP vectorizer turns the pair into one vector narrowing and widening and then drops
// both, returning x unrounded. A call per component keeps them apart (tested in
// tests/unit/test_precision.cpp).
[[gnu::noinline]] double to_binary32(double x) {
  return static_cast<double>(static_cast<float>(x));
}
}  // namespace

CellMode parse_cell_mode(const std::string& word) {
  for (const CellModeInfo& m : kCellModeTable)
    if (word == m.name) return m.mode;
  throw config_error("cell mode: unknown '" + word + "' (expected " + cell_mode_names(" or ") +
                     ")");
}

std::string to_string(CellMode m) {
  return cell_mode_info(m).name;
}

std::string cell_mode_names(const std::string& last_sep) {
  std::string s;
  for (int i = 0; i < kCellModes; ++i) {
    if (i > 0) s += i + 1 == kCellModes ? last_sep : ", ";
    s += kCellModeTable[static_cast<size_t>(i)].name;
  }
  return s;
}

int substeps(CellMode m, bool complex_data) {
  const CellModeInfo& i = cell_mode_info(m);
  return complex_data ? i.substeps_complex : i.substeps_real;
}

float round_tf32(float x) {
  return round_mantissa(x, 10);
}
float round_bf16(float x) {
  return round_mantissa(x, 7);
}

float round_fp16(float x) {
  if (!std::isfinite(x)) return x;
  const float a = std::fabs(x);
  if (a >= 65520.0f) return std::copysign(INFINITY, x);     // rounds past the largest fp16
  if (a >= 6.103515625e-05f) return round_mantissa(x, 10);  // normal fp16 range
  // Subnormal fp16: a multiple of 2^-24, nearest even (exact in binary32 arithmetic).
  const float q = std::nearbyint(a * 16777216.0f);  // 2^24; default rounding: to even
  return std::copysign(q / 16777216.0f, x);
}

M3xuSplit m3xu_split(float x) {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = u & 0x80000000u, exp = (u >> 23) & 0xFFu;
  if (exp == 0xFFu) return {x, 0.0f};  // Inf / NaN carry through the high half
  // The 24-bit significand (implicit one for normals) and the power of two of its last bit.
  std::uint32_t sig = u & 0x7FFFFFu;
  int e = exp == 0 ? -149 : static_cast<int>(exp) - 150;
  if (exp != 0) sig |= 0x800000u;
  const std::uint32_t hi_bits = sig & 0xFFF000u, lo_bits = sig & 0xFFFu;
  // hi_bits * 2^e and lo_bits * 2^e are exact binary32 values (<= 12 significant bits).
  float hi = std::ldexp(static_cast<float>(hi_bits), e);
  float lo = std::ldexp(static_cast<float>(lo_bits), e);
  if (sign) {
    hi = -hi;
    lo = -lo;
  }
  return {hi, lo};
}

double m3xu_product(float a, float b) {
  if (!std::isfinite(a) || !std::isfinite(b))
    return static_cast<double>(a) * static_cast<double>(b);
  const M3xuSplit x = m3xu_split(a), y = m3xu_split(b);
  // Each partial product has <= 24 significant bits: exact in binary32 arithmetic's wider
  // cousin; computed in binary64 to keep the exponent range of subnormal halves.
  const double hh = double(x.hi) * double(y.hi), ll = double(x.lo) * double(y.lo);
  const double hl = double(x.hi) * double(y.lo), lh = double(x.lo) * double(y.hi);
  // Step 1 (Eq. 6): hi*hi + lo*lo; step 2 (Eq. 8): hi*lo + lo*hi. The total has at most
  // 48 significant bits, so the binary64 sums are exact.
  const double step1 = hh + ll;
  const double step2 = hl + lh;
  const double p = step1 + step2;
  // A signed zero product keeps IEEE's sign (-0 when exactly one factor is negative).
  return p == 0.0 ? static_cast<double>(a) * static_cast<double>(b) : p;
}

namespace {
struct Sum {
  double s, e;  // s = RN(a + b), a + b = s + e exactly
};
// Knuth's TwoSum: exact for finite binary64 values without overflow.
Sum two_sum(double a, double b) {
  const double s = a + b, bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}
// a + b rounded to odd (Boldo and Melquiond, "Emulation of a FMA and correctly rounded sums:
// proved algorithms using rounding to odd", IEEE TC 2008): when inexact, of the two
// binary64 values around the exact sum the one with an odd last bit.
double add_round_odd(double a, double b) {
  const Sum t = two_sum(a, b);
  if (t.e == 0 || (std::bit_cast<std::uint64_t>(t.s) & 1u)) return t.s;
  return std::nextafter(t.s, t.e > 0 ? INFINITY : -INFINITY);
}
}  // namespace

// Boldo and Melquiond's sum of three: (uh, ul) = TwoSum(b, c), (th, tl) = TwoSum(a, uh),
// v = RO(tl + ul), z = RO(th + v) equals the exact sum rounded to odd in binary64 (when
// tl != 0 there was no cancellation, so |tl + ul| < 2 ulp(th) and v's error lies far below
// th's last bit; when tl == 0, v = ul exactly and z is one rounding). A value rounded to
// odd with 53 >= 24 + 2 bits rounds to nearest binary32 as the exact sum would.
float round_sum_binary32(double a, double b, double c) {
  if (!std::isfinite(a) || !std::isfinite(b) || !std::isfinite(c))
    return static_cast<float>((a + b) + c);
  const Sum u = two_sum(b, c);
  const Sum t = two_sum(a, u.s);
  const double v = add_round_odd(t.e, u.e);
  // v == 0: the sum is th exactly, with IEEE's sign of zero (th + 0 would lose a -0).
  return static_cast<float>(v == 0 ? t.s : add_round_odd(t.s, v));
}

namespace {
// Software FP32 from narrow products (CUTLASS's 3xTF32; EEHC's 3xBF16; with `four`, the
// 4xTF32 the paper says exact emulation needs): a = hi + lo, hi = narrow(a),
// lo = narrow(a - hi) (a - hi is exact: Sterbenz); the products lo*lo (four only), lo*hi,
// hi*lo, hi*hi, small ones first, each exact in binary32 and added with one fmaf.
float split_mac(float w, float a, float b, float (*narrow)(float), bool four) {
  const float ah = narrow(a), bh = narrow(b);
  // Inf/NaN operands: the big product alone carries IEEE's result (the split of a
  // non-finite value has no small part).
  if (!std::isfinite(a) || !std::isfinite(b)) return std::fmaf(ah, bh, w);
  const float al = narrow(a - ah), bl = narrow(b - bh);
  if (four) w = std::fmaf(al, bl, w);
  w = std::fmaf(al, bh, w);
  w = std::fmaf(ah, bl, w);
  return std::fmaf(ah, bh, w);
}
}  // namespace

double mac(CellMode m, double w, double y, double c) {
  const float wf = static_cast<float>(w), yf = static_cast<float>(y), cf = static_cast<float>(c);
  switch (m) {
    case CellMode::fp64:
      return std::fma(y, c, w);
    case CellMode::fp32:
      return std::fmaf(yf, cf, wf);
    case CellMode::tf32:
      return std::fmaf(round_tf32(yf), round_tf32(cf), wf);
    case CellMode::bf16:
      return std::fmaf(round_bf16(yf), round_bf16(cf), wf);
    case CellMode::fp16:
      return std::fmaf(round_fp16(yf), round_fp16(cf), wf);
    case CellMode::m3xu_fp32:
    case CellMode::m3xu_fp32c:
      // Sec. IV-A, V-B (FP32 results, "no additional error compared to conventional FP32
      // ALUs"): the exact product added to the binary32 W, one rounding.
      return round_sum_binary32(wf, m3xu_product(yf, cf), -0.0);
    case CellMode::m3xu_fp32_wide:  // the wide accumulator: the exact product added in binary64
      return w + m3xu_product(yf, cf);
    case CellMode::x3tf32:
      return split_mac(wf, yf, cf, round_tf32, false);
    case CellMode::x4tf32:
      return split_mac(wf, yf, cf, round_tf32, true);
    case CellMode::x3bf16:
      return split_mac(wf, yf, cf, round_bf16, false);
  }
  return std::fma(y, c, w);
}

cplx mac(CellMode m, const cplx& w, const cplx& y, const cplx& c) {
  if (m == CellMode::fp64) return mac(w, y, c);
  if (m == CellMode::m3xu_fp32c || m == CellMode::m3xu_fp32 || m == CellMode::m3xu_fp32_wide) {
    // Eq. 9: the four exact products (sixteen sub-steps, Corollary 3); the real part takes
    // yr*cr - yi*ci.
    const float yr = static_cast<float>(y.real()), yi = static_cast<float>(y.imag());
    const float cr = static_cast<float>(c.real()), ci = static_cast<float>(c.imag());
    const double rr = m3xu_product(yr, cr), ii = m3xu_product(yi, ci);
    const double ri = m3xu_product(yr, ci), ir = m3xu_product(yi, cr);
    if (m == CellMode::m3xu_fp32_wide) return {w.real() + (rr - ii), w.imag() + (ri + ir)};
    // Each component: W and its two exact products summed exactly, rounded once.
    return {round_sum_binary32(static_cast<float>(w.real()), rr, -ii),
            round_sum_binary32(static_cast<float>(w.imag()), ri, ir)};
  }
  // Other modes: four real multiply-adds in the fixed order of core/types.hpp.
  const double re = mac(m, mac(m, w.real(), y.real(), c.real()), -y.imag(), c.imag());
  const double im = mac(m, mac(m, w.imag(), y.real(), c.imag()), y.imag(), c.real());
  return {re, im};
}

bool rounds_on_store(CellMode m) {
  return cell_mode_info(m).rounds_on_store;
}

double store(CellMode m, double w) {
  return rounds_on_store(m) ? to_binary32(w) : w;
}

cplx store(CellMode m, const cplx& w) {
  return {store(m, w.real()), store(m, w.imag())};
}

// Width of the call's sum. An exact sum of binary32 products would need a fixed-point
// register of about 560 bits plus carries (products span 2^-298 .. 2^256, Kulisch style).
// The paper's unit holds one aligned 48-bit product sum (Sec. IV-A: "48-bit registers for
// the accumulation results"), so it too drops bits when products of distant exponents
// meet. binary64 (53 bits, rounding each addition) is at least that wide: exact whenever
// the call's products fit one 53-bit window (integer data, for instance), and never less
// accurate than the paper's register otherwise.
double mma_start(CellMode m, double c0) {
  return cell_mode_info(m).sums_call_wide ? -0.0 : c0;
}

double mma_mac(CellMode m, double w, double y, double c) {
  // The M3XU call's register is the wide accumulator: m3xu-fp32-wide's step.
  return mac(cell_mode_info(m).sums_call_wide ? CellMode::m3xu_fp32_wide : m, w, y, c);
}

double mma_store(CellMode m, double c0, double w) {
  if (!cell_mode_info(m).sums_call_wide) return store(m, w);
  return round_sum_binary32(c0, w, -0.0);
}

double seed_register(CellMode m, double w) {
  return m == CellMode::fp64 ? w : to_binary32(w);
}

cplx seed_register(CellMode m, const cplx& w) {
  return {seed_register(m, w.real()), seed_register(m, w.imag())};
}

}  // namespace triada
