#pragma once
// The one place that knows the instruction set: a vector of kLanes doubles (Vec), a lane
// mask (Mask), and the few operations the kernels are written against. Three sets:
// AVX-512 (8 lanes), AVX2 + FMA (4 lanes), and a portable one (4 lanes of std::fma).
// Every set computes each lane with one fused multiply-add, so the bits never depend on
// the set, only the speed does. Which set a translation unit gets is its kernel path
// (kernels/isa_variant.hpp); the code lives in that path's inline namespace. A file not
// compiled per path (conv/conv_implicit.cpp, for copy_short) gets the portable set.
//
// Per-path tuning lives here, in each set's section and nowhere else: kBlockRows (rows of
// the register block; its columns are two vectors, kernels::kNR), kPanelChunkBytes (the
// pivot panels of one chunk of a right batch, kernels/packing.hpp) and kMxuChunkBytes
// (the packed B of one depth chunk of the planar MXU, mxu/fused_mxu.cpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "core/types.hpp"
#include "kernels/isa_variant.hpp"

#if TRIADA_ISA_VARIANT != TRIADA_ISA_PORTABLE
#include <immintrin.h>
#endif

// The sets, in this path's region (kernels/isa_begin.hpp).
#include "kernels/isa_begin.hpp"
namespace triada::simd {
inline namespace TRIADA_ISA_NS {

inline constexpr std::uint64_t kExpBits = 0x7FF0000000000000ull;  // Inf and NaN: all ones

#if TRIADA_ISA_VARIANT == TRIADA_ISA_AVX512

inline constexpr index_t kLanes = 8;
// 14 x 16 register block: 28 accumulators, two B vectors and a broadcast fill the 32
// vector registers (16 rows would spill accumulators to the stack every step).
inline constexpr index_t kBlockRows = 14;
inline constexpr index_t kPanelChunkBytes = index_t{256} << 10;
inline constexpr index_t kMxuChunkBytes = index_t{384} << 10;
using Vec = __m512d;
using Mask = __mmask8;

inline Mask first_lanes(index_t n) {  // lanes [0, n) of one vector, n clamped to [0, 8]
  return static_cast<Mask>(n >= 8 ? 0xFF : n <= 0 ? 0 : (1u << n) - 1);
}
inline Vec zero() {
  return _mm512_setzero_pd();
}
inline Vec broadcast(const double* p) {
  return _mm512_set1_pd(*p);
}
inline Vec load(const double* p) {
  return _mm512_loadu_pd(p);
}
inline Vec load(Mask k, const double* p) {
  return _mm512_maskz_loadu_pd(k, p);
}
inline void store(double* p, Vec v) {
  _mm512_storeu_pd(p, v);
}
inline void store(Mask k, double* p, Vec v) {
  _mm512_mask_storeu_pd(p, k, v);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm512_fmadd_pd(a, b, c);
}
// Bits of the lanes `k` of v that are != 0 (NaN too, as for the cell rule's v != 0);
// inf_nan gets the bits of those that are Inf or NaN.
inline unsigned nonzero_lanes(Vec v, Mask k, unsigned& inf_nan) {
  const __m512i e = _mm512_set1_epi64(static_cast<long long>(kExpBits));
  inf_nan = _mm512_mask_cmpeq_epi64_mask(k, _mm512_and_si512(_mm512_castpd_si512(v), e), e);
  return _mm512_mask_cmp_pd_mask(k, v, _mm512_setzero_pd(), _CMP_NEQ_UQ);
}
// Bits i < len (<= 8) set where x[i] != 0 (NaN too); inf_nan gets those of Inf and NaN.
// A masked load costs several times a plain one (AMD Zen 4): mask the tail only.
inline unsigned nonzero8(const double* x, index_t len, unsigned& inf_nan) {
  const Mask k = first_lanes(len);
  return nonzero_lanes(len >= 8 ? load(x) : load(k, x), k, inf_nan);
}
// c[0] lane j += 1 where x[j] != 0 (NaN counts, -0 does not), j < 8: non-zero counts.
inline void count_nonzero8(const double* x, Vec* c) {
  const __mmask8 nz = _mm512_cmp_pd_mask(load(x), zero(), _CMP_NEQ_UQ);
  c[0] = _mm512_mask_add_pd(c[0], nz, c[0], _mm512_set1_pd(1.0));
}
// W = +0 over n elements by non-temporal stores where aligned (no read for ownership of
// lines nothing reads soon); store_fence() orders them before W is read.
inline void zero_fill(double* p, index_t n) {
  index_t i = 0;
  for (; i < n && (reinterpret_cast<std::uintptr_t>(p + i) & 63) != 0; ++i) p[i] = 0.0;
  const __m512d z = _mm512_setzero_pd();
  for (; i + 8 <= n; i += 8) _mm512_stream_pd(p + i, z);
  for (; i < n; ++i) p[i] = 0.0;
}
inline void store_fence() {
  _mm_sfence();
}

// An 8 x 8 transpose is available: dst[c * stride + m] = r[m][p0 + c] for m, c < 8,
// stored as whole vectors in the column order {0, 4, 2, 6, 1, 5, 3, 7}. GCC 12 warns
// falsely inside the shuffle intrinsics (their undefined pass-through operand, PR 105593;
// -Wuninitialized at -O1, the sanitizer build's level).
inline constexpr bool kTranspose8 = true;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
inline void transpose8(const double* const* r, index_t p0, double* dst, index_t stride) {
  __m512d t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    const __m512d a = _mm512_loadu_pd(r[i] + p0), b = _mm512_loadu_pd(r[i + 1] + p0);
    t[i] = _mm512_unpacklo_pd(a, b);      // rows i, i+1 at columns 0 2 4 6
    t[i + 1] = _mm512_unpackhi_pd(a, b);  // ... at columns 1 3 5 7
  }
  for (int i = 0; i < 8; i += 4) {  // rows i..i+3, columns {0,4} {2,6} {1,5} {3,7}
    u[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);
    u[i + 1] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xDD);
    u[i + 2] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);
    u[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xDD);
  }
  constexpr int col_lo[4] = {0, 2, 1, 3};  // column held by u[j] (and u[j + 4]) low half
  for (int j = 0; j < 4; ++j) {
    _mm512_storeu_pd(dst + col_lo[j] * stride, _mm512_shuffle_f64x2(u[j], u[j + 4], 0x88));
    _mm512_storeu_pd(dst + (col_lo[j] + 4) * stride, _mm512_shuffle_f64x2(u[j], u[j + 4], 0xDD));
  }
}
#pragma GCC diagnostic pop

// The slots of the set bits of masks[c] (slot 8c + bit), ascending, written to out (room
// for 8 past the count: whole-vector stores); returns how many. Branch-free: bit loops
// mispredict on random masks.
inline index_t set_slots(const std::uint8_t* masks, index_t P, std::int32_t* out) {
  index_t n = 0;
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (index_t c = 0; c * 8 < P; ++c) {
    const __mmask8 m = masks[c];
    const __m256i slots = _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(8 * c)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + n), _mm256_maskz_compress_epi32(m, slots));
    n += std::popcount(static_cast<unsigned>(m));
  }
  return n;
}

#elif TRIADA_ISA_VARIANT == TRIADA_ISA_AVX2

inline constexpr index_t kLanes = 4;
inline constexpr index_t kBlockRows = 6;  // 6 x 8: 12 accumulators of 16 registers
inline constexpr index_t kPanelChunkBytes = index_t{256} << 10;
inline constexpr index_t kMxuChunkBytes = index_t{384} << 10;
using Vec = __m256d;
using Mask = __m256i;  // all-ones 64-bit lanes are active

inline Mask first_lanes(index_t n) {
  const __m256i idx = _mm256_setr_epi64x(0, 1, 2, 3);
  return _mm256_cmpgt_epi64(
      _mm256_set1_epi64x(static_cast<long long>(std::clamp<index_t>(n, 0, 4))), idx);
}
inline Vec zero() {
  return _mm256_setzero_pd();
}
inline Vec broadcast(const double* p) {
  return _mm256_broadcast_sd(p);
}
inline Vec load(const double* p) {
  return _mm256_loadu_pd(p);
}
inline Vec load(Mask k, const double* p) {
  return _mm256_maskload_pd(p, k);
}
inline void store(double* p, Vec v) {
  _mm256_storeu_pd(p, v);
}
inline void store(Mask k, double* p, Vec v) {
  _mm256_maskstore_pd(p, k, v);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  return _mm256_fmadd_pd(a, b, c);
}
inline unsigned nonzero_lanes(Vec v, Mask k, unsigned& inf_nan) {
  const unsigned active = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(k)));
  const __m256i e = _mm256_set1_epi64x(static_cast<long long>(kExpBits));
  const __m256i bits = _mm256_and_si256(_mm256_castpd_si256(v), e);
  inf_nan = active & static_cast<unsigned>(
                         _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(bits, e))));
  return active & static_cast<unsigned>(
                      _mm256_movemask_pd(_mm256_cmp_pd(v, _mm256_setzero_pd(), _CMP_NEQ_UQ)));
}

inline void count_nonzero4(const double* x, Vec& c) {
  const __m256d nz = _mm256_cmp_pd(load(x), _mm256_setzero_pd(), _CMP_NEQ_UQ);
  c = _mm256_add_pd(c, _mm256_and_pd(nz, _mm256_set1_pd(1.0)));
}

#else  // portable: four lanes of std::fma (the compiler may vectorize them)

inline constexpr index_t kLanes = 4;
inline constexpr index_t kBlockRows = 6;
inline constexpr index_t kPanelChunkBytes = index_t{256} << 10;
inline constexpr index_t kMxuChunkBytes = index_t{384} << 10;
struct Vec {
  double v[4];
};
struct Mask {
  index_t n;  // lanes [0, n) are active
};

inline Mask first_lanes(index_t n) {
  return {std::clamp<index_t>(n, 0, 4)};
}
inline Vec zero() {
  return {{0.0, 0.0, 0.0, 0.0}};
}
inline Vec broadcast(const double* p) {
  return {{*p, *p, *p, *p}};
}
inline Vec load(const double* p) {
  return {{p[0], p[1], p[2], p[3]}};
}
inline Vec load(Mask k, const double* p) {
  Vec r = zero();
  for (index_t i = 0; i < k.n; ++i) r.v[i] = p[i];
  return r;
}
inline void store(double* p, Vec v) {
  std::copy(v.v, v.v + 4, p);
}
inline void store(Mask k, double* p, Vec v) {
  std::copy(v.v, v.v + k.n, p);
}
inline Vec fma(Vec a, Vec b, Vec c) {
  Vec r;
  for (int i = 0; i < 4; ++i) r.v[i] = std::fma(a.v[i], b.v[i], c.v[i]);
  return r;
}
inline unsigned nonzero_lanes(Vec v, Mask k, unsigned& inf_nan) {
  unsigned nz = 0;
  inf_nan = 0;
  for (index_t i = 0; i < k.n; ++i) {
    nz |= (v.v[i] != 0.0 ? 1u : 0u) << i;
    inf_nan |= ((std::bit_cast<std::uint64_t>(v.v[i]) & kExpBits) == kExpBits ? 1u : 0u) << i;
  }
  return nz;
}

inline void count_nonzero4(const double* x, Vec& c) {
  for (int i = 0; i < 4; ++i) c.v[i] += x[i] != 0.0 ? 1.0 : 0.0;
}

#endif

// The 4-lane sets share what AVX-512 does in one vector.
#if TRIADA_ISA_VARIANT != TRIADA_ISA_AVX512
inline unsigned nonzero8(const double* x, index_t len, unsigned& inf_nan) {
  unsigned in_lo = 0, in_hi = 0;
  const Mask k0 = first_lanes(len), k1 = first_lanes(len - 4);
  const unsigned lo = nonzero_lanes(len >= 4 ? load(x) : load(k0, x), k0, in_lo);
  const unsigned hi =
      len > 4 ? nonzero_lanes(len >= 8 ? load(x + 4) : load(k1, x + 4), k1, in_hi) : 0u;
  inf_nan = in_lo | in_hi << 4;
  return lo | hi << 4;
}
// c[h] lane j += 1 where x[4 h + j] != 0 (NaN counts, -0 does not): non-zero counts.
inline void count_nonzero8(const double* x, Vec* c) {
  count_nonzero4(x, c[0]);
  count_nonzero4(x + 4, c[1]);
}
inline void zero_fill(double* p, index_t n) {
  std::fill(p, p + n, 0.0);
}
inline void store_fence() {}
inline constexpr bool kTranspose8 = false;
inline void transpose8(const double* const* r, index_t p0, double* dst, index_t stride) {
  for (index_t c = 0; c < 8; ++c)
    for (index_t m = 0; m < 8; ++m) dst[c * stride + m] = r[m][p0 + c];
}

inline index_t set_slots(const std::uint8_t* masks, index_t P, std::int32_t* out) {
  index_t n = 0;
  for (index_t c = 0; c * 8 < P; ++c)
    for (unsigned m = masks[c]; m != 0; m &= m - 1)
      out[n++] = static_cast<std::int32_t>(8 * c + std::countr_zero(m));
  return n;
}
#endif

// n doubles, inline: a library call per short run (a tile row, a pixel's channels) costs
// more than the copy.
inline void copy_short(const double* from, double* to, index_t n) {
  index_t k = 0;
  for (; k + kLanes <= n; k += kLanes) store(to + k, load(from + k));
  for (; k < n; ++k) to[k] = from[k];
}

}  // namespace TRIADA_ISA_NS
}  // namespace triada::simd
#include "kernels/isa_end.hpp"
