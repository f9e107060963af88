// Multi-mode cells (M3XU paper): exactness of the two-step FP32 product, rounding to the
// narrow formats against independent references, GEMM accuracy and the error ordering.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/error.hpp"
#include "precision/cell_mode.hpp"
#include "support/catch.hpp"
#include "support/exact_sum.hpp"

using namespace triada;

namespace {
std::vector<float> edge_floats() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {
      0.0f,
      -0.0f,
      1.0f,
      -1.0f,
      2.0f,
      0.5f,
      3.0f,
      std::numeric_limits<float>::denorm_min(),
      -std::numeric_limits<float>::denorm_min(),
      std::numeric_limits<float>::min(),
      std::nextafter(std::numeric_limits<float>::min(), 0.0f),  // largest subnormal
      std::numeric_limits<float>::max(),
      -std::numeric_limits<float>::max(),
      std::nextafter(1.0f, 2.0f),
      std::nextafter(1.0f, 0.0f),
      1.0f / 3.0f,
      16777215.0f,
      4095.0f,
      4096.0f,
      4097.0f};
  for (int e = -149; e <= 127; e += 7) v.push_back(std::ldexp(1.0f, e));
  (void)inf;
  return v;
}
// Independent rounding of a binary32 to p significand bits (nearest even), via frexp.
float ref_round(float x, int p) {
  if (x == 0 || !std::isfinite(x)) return x;
  int e = 0;
  const double m = std::frexp(static_cast<double>(x), &e);  // x = m * 2^e, 0.5 <= |m| < 1
  const double scaled = std::ldexp(m, p);                   // p significant bits above the point
  return static_cast<float>(std::ldexp(std::nearbyint(scaled), e - p));
}
}  // namespace

TEST_CASE("the M3XU split gives two halves of at most 12 bits that sum to the value",
          "[precision]") {
  std::mt19937 gen(1);
  std::vector<float> vals = edge_floats();
  for (int i = 0; i < 200000; ++i) {
    float f = std::bit_cast<float>(static_cast<std::uint32_t>(gen()));
    if (std::isfinite(f)) vals.push_back(f);
  }
  for (float x : vals) {
    const M3xuSplit s = m3xu_split(x);
    CHECK(static_cast<double>(s.hi) + static_cast<double>(s.lo) == static_cast<double>(x));
    for (float h : {s.hi, s.lo}) {
      if (h == 0) continue;
      int e = 0;
      const double m = std::frexp(static_cast<double>(h), &e);
      CHECK(std::ldexp(m, 12) == std::trunc(std::ldexp(m, 12)));  // fits in 12 bits
    }
  }
}

TEST_CASE("m3xu-fp32 products equal the exact product of the two fp32 inputs bit for bit",
          "[precision]") {
  std::vector<float> vals = edge_floats();
  std::mt19937 gen(2);
  std::vector<std::pair<float, float>> pairs;
  for (float a : vals)
    for (float b : vals) pairs.emplace_back(a, b);
  for (int i = 0; i < 1000000; ++i) {
    const float a = std::bit_cast<float>(static_cast<std::uint32_t>(gen()));
    const float b = std::bit_cast<float>(static_cast<std::uint32_t>(gen()));
    if (std::isfinite(a) && std::isfinite(b)) pairs.emplace_back(a, b);
  }
  std::size_t bad = 0;
  for (const auto& [a, b] : pairs) {
    // binary32 x binary32 fits binary64 exactly: 48 significand bits, exponents in range.
    const double exact = static_cast<double>(a) * static_cast<double>(b);
    const double got = m3xu_product(a, b);
    if (std::bit_cast<std::uint64_t>(got) != std::bit_cast<std::uint64_t>(exact)) ++bad;
  }
  CHECK(bad == 0);
  CHECK(pairs.size() > 900000);
}

TEST_CASE("Inf and NaN propagate through every mode as in IEEE", "[precision]") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (int i = 0; i < kCellModes; ++i) {
    const CellMode m = static_cast<CellMode>(i);
    CAPTURE(to_string(m));
    CHECK(std::isnan(mac(m, 0.0, nan, 1.0)));
    CHECK(std::isnan(mac(m, nan, 1.0, 1.0)));
    CHECK(std::isinf(mac(m, 0.0, inf, 2.0)));
    CHECK(std::isnan(mac(m, 0.0, inf, 0.0)));   // inf * 0
    CHECK(std::isnan(mac(m, inf, -inf, 1.0)));  // inf - inf
    CHECK(std::isinf(store(m, mac(m, 1.0, inf, 1.0))));
  }
}

TEST_CASE("a W register seeded with Y0 holds it in the mode's format", "[precision]") {
  const double v = 1.0 + 0x1p-40, tiny = -0x1p-200;
  for (int i = 0; i < kCellModes; ++i) {
    const CellMode m = static_cast<CellMode>(i);
    CAPTURE(to_string(m));
    const bool wide = m == CellMode::fp64;
    CHECK(seed_register(m, v) == (wide ? v : 1.0));
    CHECK(std::signbit(seed_register(m, -0.0)));
    CHECK(seed_register(m, tiny) == (wide ? tiny : 0.0));  // binary32 underflows, to -0
    CHECK(std::signbit(seed_register(m, tiny)));
    CHECK(std::isnan(seed_register(m, std::nan(""))));
    const cplx c = seed_register(m, cplx{v, -v});
    CHECK(c.real() == (wide ? v : 1.0));
    CHECK(c.imag() == (wide ? -v : -1.0));
  }
}

TEST_CASE("m3xu-fp32-wide stores a complex W rounded to binary32 per component", "[precision]") {
  const double v = 1.0 + 0x1p-40;
  const cplx c = store(CellMode::m3xu_fp32_wide, cplx{v, -3 * v});
  CHECK(c.real() == 1.0);
  CHECK(c.imag() == -3.0);
  CHECK(store(CellMode::m3xu_fp32_wide, v) == 1.0);
  // Every other mode's W already holds its format: the store keeps it.
  for (const CellMode m : {CellMode::fp64, CellMode::m3xu_fp32, CellMode::m3xu_fp32c})
    CHECK(store(m, cplx{v, v}) == cplx{v, v});
}

TEST_CASE("tf32, bf16 and fp16 rounding match independent references", "[precision]") {
  std::mt19937 gen(3);
  for (int i = 0; i < 200000; ++i) {
    const float x = std::ldexp(std::uniform_real_distribution<float>(-1, 1)(gen),
                               std::uniform_int_distribution<int>(-14, 15)(gen));
    CHECK(round_tf32(x) == ref_round(x, 11));
    CHECK(round_bf16(x) == ref_round(x, 8));
    CHECK(round_fp16(x) == static_cast<float>(static_cast<_Float16>(x)));
  }
  // fp16's range: overflow to Inf, subnormals on a 2^-24 grid.
  CHECK(std::isinf(round_fp16(70000.0f)));
  CHECK(round_fp16(65504.0f) == 65504.0f);
  CHECK(round_fp16(std::ldexp(1.0f, -25)) == 0.0f);  // a tie rounds to even (0)
  CHECK(round_fp16(std::ldexp(3.0f, -25)) == std::ldexp(1.0f, -23));
  CHECK(round_bf16(1.0f + std::ldexp(1.0f, -8)) == 1.0f);  // a tie rounds to even
}

namespace {
// C = A * B in a cell mode, the way a cell accumulates (store rounding at the end).
std::vector<double> gemm(CellMode m, const std::vector<float>& A, const std::vector<float>& B,
                         int n, int k, int p) {
  std::vector<double> C(static_cast<size_t>(n * p));
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) {
      double w = 0;
      for (int t = 0; t < k; ++t) w = mac(m, w, A[i * k + t], B[t * p + j]);
      C[i * p + j] = store(m, w);
    }
  return C;
}
}  // namespace

TEST_CASE("m3xu-fp32 GEMM is an fp32 FMA GEMM bit for bit, m3xu-fp32-wide rounds once",
          "[precision]") {
  std::mt19937 gen(4);
  std::uniform_real_distribution<float> u(-1, 1);
  const int n = 24, k = 96, p = 20;
  std::vector<float> A(n * k), B(k * p);
  for (auto& x : A) x = u(gen);
  for (auto& x : B) x = u(gen);
  const auto m3 = gemm(CellMode::m3xu_fp32, A, B, n, k, p);
  const auto wide = gemm(CellMode::m3xu_fp32_wide, A, B, n, k, p);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < p; ++j) {
      // m3xu-fp32: one exact product added to a binary32 W per step, one rounding each: an
      // fp32 FMA chain (std::fmaf), bit for bit.
      float w = 0;
      double sum = 0, abs_sum = 0;
      for (int t = 0; t < k; ++t) {
        w = std::fmaf(A[i * k + t], B[t * p + j], w);
        const double prod = double(A[i * k + t]) * B[t * p + j];  // exact
        sum += prod;
        abs_sum += std::fabs(prod);
      }
      const double got = m3[i * p + j], got_wide = wide[i * p + j];
      CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(double(w)));
      // m3xu-fp32-wide: the binary64 sum of the exact products rounded once to binary32,
      // bit for bit; so within half a binary32 ulp of that sum, which is itself within
      // (k - 1) 2^-53 sum |a b| of the exact sum (recursive summation).
      CHECK(got_wide == double(static_cast<float>(sum)));
      test::ExactSum err;  // exact sum - got_wide, rounded to binary64
      for (int t = 0; t < k; ++t) err.add(double(A[i * k + t]) * B[t * p + j]);
      err.add(-got_wide);
      const float r = static_cast<float>(got_wide);
      const double half_ulp = (std::nextafter(std::fabs(r), INFINITY) - std::fabs(r)) / 2.0;
      CHECK(std::fabs(err.to_binary64()) <= half_ulp + (k - 1) * 0x1p-53 * abs_sum);
    }
}

TEST_CASE("errors order bf16 > tf32 > 3xbf16 > 3xtf32, fp32 = m3xu-fp32 > m3xu-fp32-wide",
          "[precision]") {
  std::mt19937 gen(6);
  std::uniform_real_distribution<float> u(-1, 1);
  const int n = 32, k = 128, p = 32;
  std::vector<float> A(n * k), B(k * p);
  for (auto& x : A) x = u(gen);
  for (auto& x : B) x = u(gen);
  const auto ref = gemm(CellMode::fp64, A, B, n, k, p);
  auto err = [&](CellMode m) {
    const auto c = gemm(m, A, B, n, k, p);
    double e = 0, scale = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      e = std::max(e, std::fabs(c[i] - ref[i]));
      scale = std::max(scale, std::fabs(ref[i]));
    }
    return e / scale;
  };
  const double bf16 = err(CellMode::bf16), tf32 = err(CellMode::tf32), fp16 = err(CellMode::fp16),
               x3 = err(CellMode::x3tf32), x3b = err(CellMode::x3bf16), fp32 = err(CellMode::fp32),
               m3 = err(CellMode::m3xu_fp32), wide = err(CellMode::m3xu_fp32_wide);
  CAPTURE(bf16, tf32, fp16, x3, x3b, fp32, m3, wide);
  CHECK(bf16 > tf32);
  CHECK(bf16 > fp16);
  CHECK(tf32 > x3b);
  CHECK(x3b > x3);
  CHECK(m3 == fp32);
  CHECK(fp32 > wide);
  CHECK(wide < 1e-7);
}

TEST_CASE("cell modes parse, print and count their sub-steps", "[precision]") {
  for (const char* w : {"fp64", "fp32", "tf32", "bf16", "fp16", "m3xu-fp32", "m3xu-fp32c",
                        "m3xu-fp32-wide", "3xtf32", "4xtf32", "3xbf16"})
    CHECK(to_string(parse_cell_mode(w)) == w);
  CHECK_THROWS_AS(parse_cell_mode("fp8"), config_error);
  // Sub-steps relative to the fp16 unit, as the M3XU paper counts (doc/precision.md):
  // fp64 is the TriADA cell, one fp64 FMA unit: a complex MAC is its four real FMAs.
  CHECK(substeps(CellMode::fp64) == 1);
  CHECK(substeps(CellMode::fp64, true) == 4);
  // A p-bit complex MAC is four real products (Observation 3: p-bit CGEMM takes 4c), on
  // the fp16-class units and on the FP32-MXU (fp32, one step of its own unit).
  for (const CellMode m : {CellMode::fp32, CellMode::tf32, CellMode::bf16, CellMode::fp16}) {
    CHECK(substeps(m) == 1);
    CHECK(substeps(m, true) == 4);
  }
  // A 2p-bit MAC on the p-bit unit: four partial products (hh, ll, hl, lh; Corollaries 1-2:
  // a quarter of the p-bit rate); complex: 4 x 4 = 16 (Corollary 3: 16c). m3xu-fp32c on
  // real data uses its real part: one product, 4.
  for (const CellMode m : {CellMode::m3xu_fp32, CellMode::m3xu_fp32c, CellMode::m3xu_fp32_wide}) {
    CHECK(substeps(m) == 4);
    CHECK(substeps(m, true) == 16);
  }
  // Split software schemes: one pass per narrow product, four real products per complex MAC.
  CHECK(substeps(CellMode::x3tf32) == 3);
  CHECK(substeps(CellMode::x3tf32, true) == 12);
  CHECK(substeps(CellMode::x4tf32) == 4);
  CHECK(substeps(CellMode::x4tf32, true) == 16);
  CHECK(substeps(CellMode::x3bf16) == 3);
  CHECK(substeps(CellMode::x3bf16, true) == 12);
}
