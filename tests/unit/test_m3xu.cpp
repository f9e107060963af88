// The M3XU modes as the paper states them (Ha et al., Sec. IV-A and V-B: the unit writes
// FP32 results, "exactly the same as FP32") and the software baselines, each against an
// oracle written here: std::fmaf on floats, exact integer sums (support/exact_sum.hpp) and
// the split schemes by an independent rounding.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "mxu/tensor_unit.hpp"
#include "precision/cell_mode.hpp"
#include "support/catch.hpp"
#include "support/exact_sum.hpp"

using namespace triada;
using triada::test::ExactSum;

namespace {

bool same(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b) ||
         (std::isnan(a) && std::isnan(b));
}

std::vector<float> edge_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          0.5f,
                          3.0f,
                          -7.0f,
                          1.0f / 3.0f,
                          4095.0f,
                          4097.0f,
                          16777215.0f,
                          std::nextafter(1.0f, 2.0f),
                          std::nextafter(1.0f, 0.0f),
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(),
                          std::nextafter(std::numeric_limits<float>::min(), 0.0f),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          0x1p64f,
                          -0x1p-70f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN()};
  for (int e = -149; e <= 127; e += 23) v.push_back(std::ldexp(1.5f, e));
  return v;
}

// A binary32 from random bits (any finite value), or near one (exponents -20 .. 20).
float any_float(std::mt19937_64& g) {
  for (;;) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(g()));
    if (std::isfinite(f)) return f;
  }
}
float near_one(std::mt19937_64& g) {
  const float m = std::uniform_real_distribution<float>(-2, 2)(g);
  return std::ldexp(m, static_cast<int>(g() % 41) - 20);
}

// Independent rounding of a binary32 to p significant bits (nearest even), via frexp.
float ref_round(float x, int p) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  const double m = std::frexp(static_cast<double>(x), &e);
  return static_cast<float>(std::ldexp(std::nearbyint(std::ldexp(m, p)), e - p));
}

float exact3(double a, double b, double c) {
  ExactSum s;
  s.add(a);
  s.add(b);
  s.add(c);
  return s.to_binary32();
}

}  // namespace

TEST_CASE("round_sum_binary32 is the exact sum rounded once, ties and cancellation included",
          "[precision][m3xu]") {
  std::mt19937_64 g(41);
  std::size_t bad = 0, cases = 0;
  const auto check = [&](double a, double b, double c) {
    ++cases;
    if (!same(round_sum_binary32(a, b, c), exact3(a, b, c))) ++bad;
  };
  for (int i = 0; i < 100000; ++i) {
    // A binary32 W and two exact products (the M3XU complex step's shape).
    const float w = i % 2 ? near_one(g) : any_float(g);
    const double p = double(near_one(g)) * near_one(g), q = double(any_float(g)) * any_float(g);
    check(w, p, -q);
    check(w, p, -p);                              // the products cancel: W alone
    check(w, p, -static_cast<double>(float(p)));  // the sum is p's tail
    // Ties of binary32: W + half an ulp of W, the tie broken (or not) by a small third term.
    const float ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
    if (!std::isfinite(ulp)) continue;
    const double tiny = std::ldexp(1.0, -static_cast<int>(g() % 200) - 30) * (g() % 2 ? 1 : -1);
    check(w, ulp / 2, 0.0);
    check(w, -ulp / 2, -0.0);
    check(w, ulp / 2, tiny * ulp);
    check(w, double(ulp) * 3 / 2, g() % 2 ? tiny : -tiny);
    // Three terms of distant exponents around a cancellation.
    check(p, -p * (1 + 0x1p-52), w);
  }
  for (double z1 : {0.0, -0.0})
    for (double z2 : {0.0, -0.0})
      for (double z3 : {0.0, -0.0}) check(z1, z2, z3);  // the sign of an exact zero
  check(1.0, -1.0, -0.0);
  check(0x1p127, 0x1p127, 0x1p126);  // overflows binary32: Inf
  CHECK(cases > 800000);
  CHECK(bad == 0);
}

TEST_CASE("an m3xu-fp32 cell step is an fp32 FMA bit for bit (std::fmaf the oracle)",
          "[precision][m3xu]") {
  const std::vector<float> edge = edge_floats();
  std::mt19937_64 g(42);
  std::size_t bad = 0, cases = 0;
  for (const CellMode m : {CellMode::m3xu_fp32, CellMode::m3xu_fp32c}) {
    const auto check = [&](float w, float y, float c) {
      ++cases;
      if (!same(mac(m, w, y, c), std::fmaf(y, c, w))) ++bad;
    };
    for (float w : edge)
      for (float y : edge)
        for (float c : edge) check(w, y, c);
    for (int i = 0; i < 400000; ++i) {
      const float y = i % 2 ? any_float(g) : near_one(g), c = i % 3 ? near_one(g) : any_float(g);
      const float p = y * c;
      // W: random, or the negated product (cancellation) or it nudged by an ulp.
      const float w = i % 4 == 0 ? -p : i % 4 == 1 ? std::nextafter(-p, 0.0f) : near_one(g);
      check(w, y, c);
    }
  }
  CHECK(cases > 850000);
  CHECK(bad == 0);
}

TEST_CASE("an m3xu-fp32c complex step: each component the exact sum, rounded once",
          "[precision][m3xu]") {
  std::mt19937_64 g(43);
  std::size_t bad = 0;
  for (int i = 0; i < 100000; ++i) {
    const auto f = [&] { return i % 3 ? near_one(g) : any_float(g); };
    const float yr = f(), yi = f(), cr = f(), ci = f();
    // W's parts: random, or cancelling a product exactly.
    const float wr = i % 5 == 0 ? -(yr * cr) : f(), wi = i % 7 == 0 ? -(yi * cr) : f();
    if (!std::isfinite(wr) || !std::isfinite(wi)) continue;  // a product past binary32
    const cplx w{wr, wi}, y{yr, yi}, c{cr, ci};
    const double rr = double(yr) * cr, ii = double(yi) * ci, ri = double(yr) * ci,
                 ir = double(yi) * cr;  // exact
    const float re = exact3(wr, rr, -ii), im = exact3(wi, ri, ir);
    for (const CellMode m : {CellMode::m3xu_fp32c, CellMode::m3xu_fp32}) {
      const cplx got = mac(m, w, y, c);
      if (!same(got.real(), re) || !same(got.imag(), im)) ++bad;
    }
  }
  CHECK(bad == 0);
}

TEST_CASE("3xtf32, 4xtf32 and 3xbf16 follow their split schemes", "[precision][m3xu]") {
  // The oracle: a = hi + lo with hi, lo rounded by frexp (ref_round), the products
  // lo*lo (4x only), lo*hi, hi*lo, hi*hi, each added to the binary32 W by std::fmaf.
  struct Scheme {
    CellMode mode;
    int bits;
    bool four;
  };
  std::mt19937_64 g(44);
  std::size_t bad = 0;
  for (const Scheme s : {Scheme{CellMode::x3tf32, 11, false}, Scheme{CellMode::x4tf32, 11, true},
                         Scheme{CellMode::x3bf16, 8, false}})
    for (int i = 0; i < 100000; ++i) {
      const float y = near_one(g), c = near_one(g), w0 = near_one(g);
      const float yh = ref_round(y, s.bits), ch = ref_round(c, s.bits);
      const float yl = ref_round(y - yh, s.bits), cl = ref_round(c - ch, s.bits);
      float w = w0;
      if (s.four) w = std::fmaf(yl, cl, w);
      w = std::fmaf(yl, ch, w);
      w = std::fmaf(yh, cl, w);
      w = std::fmaf(yh, ch, w);
      if (!same(mac(s.mode, w0, y, c), w)) ++bad;
    }
  CHECK(bad == 0);
  // y = c = 1 + 2^-11 + 2^-22: the tf32 halves are hi = 1 and lo = 2^-11 (both ties to
  // even); 4xtf32 adds lo*lo = 2^-22, which 3xtf32 drops, and comes closer.
  const float v = 1.0f + 0x1p-11f + 0x1p-22f;
  CHECK(mac(CellMode::x4tf32, 0.0, v, v) != mac(CellMode::x3tf32, 0.0, v, v));
  CHECK(std::fabs(mac(CellMode::x4tf32, 0.0, v, v) - double(v) * v) <=
        std::fabs(mac(CellMode::x3tf32, 0.0, v, v) - double(v) * v));
}

namespace {

// One call of the planar MXU in mode `cm`, in both executors; each output checked against
// the MMA written out here: C0 (or +0) plus the call's exact products summed in binary64
// in step order (ESOP: non-zero operands only), rounded once (ExactSum).
std::size_t check_mma(CellMode cm, Mode mode, bool acc, std::mt19937_64& g, bool integers) {
  const index_t s = 4, r = 9;
  std::vector<double> A(r * s), B(s * s), C0(r * s);
  const auto value = [&](int zeros) -> double {
    if (g() % 10 < static_cast<std::uint64_t>(zeros)) return g() % 2 ? 0.0 : -0.0;
    if (integers) return static_cast<double>(static_cast<int>(g() % 8191) - 4095) / 64;
    return near_one(g);
  };
  for (double& x : A) x = value(2);
  for (double& x : B) x = value(2);
  for (double& x : C0) x = value(1);
  std::size_t bad = 0;
  for (const MxuExecutor e : {MxuExecutor::reference, MxuExecutor::fused}) {
    TensorUnit u(s * s, 0, false, mode, cm, e);
    std::vector<double> C = C0;
    u.multiply(r, A.data(), s, B.data(), s, C.data(), s, acc);
    for (index_t i = 0; i < r; ++i)
      for (index_t k = 0; k < s; ++k) {
        double sum = -0.0;  // the empty sum
        for (index_t t = 0; t < s; ++t) {
          const double a = A[i * s + t], b = B[t * s + k];
          if (mode == Mode::esop && (a == 0 || b == 0)) continue;
          sum += a * b;  // binary32 values: the product is exact
        }
        ExactSum want;
        want.add(acc ? C0[i * s + k] : 0.0);
        want.add(sum);
        if (!same(C[i * s + k], want.to_binary32())) ++bad;
        if (integers) {  // every partial sum exact: the correctly rounded MMA
          ExactSum exact;
          exact.add(acc ? C0[i * s + k] : 0.0);
          for (index_t t = 0; t < s; ++t) exact.add(A[i * s + t] * B[t * s + k]);
          if (C[i * s + k] != exact.to_binary32()) ++bad;
        }
      }
  }
  return bad;
}

}  // namespace

TEST_CASE("a tensor-unit call in the M3XU modes is one MMA: C0 plus its products, rounded once",
          "[precision][m3xu][mxu]") {
  std::mt19937_64 g(45);
  std::size_t bad = 0;
  for (const CellMode cm : {CellMode::m3xu_fp32, CellMode::m3xu_fp32c})
    for (const Mode mode : {Mode::esop, Mode::dense})
      for (const bool acc : {false, true})
        for (int rep = 0; rep < 40; ++rep) bad += check_mma(cm, mode, acc, g, rep % 2 == 0);
  CHECK(bad == 0);
}
