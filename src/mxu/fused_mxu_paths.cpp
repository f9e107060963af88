// The planar MXU's fused executor, the same for every kernel path: fp64 calls go to the
// path in use (kernels/isa.hpp), each compiled from fused_mxu.cpp; other cell modes run
// the cell rule's loop here, through the modes' out-of-line arithmetic.
#include "kernels/isa.hpp"
#include "kernels/isa_config.hpp"  // generated: the paths this build compiled
#include "mxu/fused_mxu.hpp"

namespace triada {

// Each compiled path's entry (fused_mxu.cpp, in the path's namespace).
#if TRIADA_ISA_HAVE_AVX512
inline namespace isa_avx512 {
std::uint64_t fused_mxu_fp64_isa(const MxuCall& c, Mode mode, MxuScratch& x);
}
#endif
#if TRIADA_ISA_HAVE_AVX2
inline namespace isa_avx2 {
std::uint64_t fused_mxu_fp64_isa(const MxuCall& c, Mode mode, MxuScratch& x);
}
#endif
#if TRIADA_ISA_HAVE_PORTABLE
inline namespace isa_portable {
std::uint64_t fused_mxu_fp64_isa(const MxuCall& c, Mode mode, MxuScratch& x);
}
#endif

std::uint64_t fused_mxu_fp64(const MxuCall& c, Mode mode, MxuScratch& x) {
  switch (kernels::isa()) {
#if TRIADA_ISA_HAVE_AVX512
    case kernels::Isa::avx512:
      return isa_avx512::fused_mxu_fp64_isa(c, mode, x);
#endif
#if TRIADA_ISA_HAVE_AVX2
    case kernels::Isa::avx2:
      return isa_avx2::fused_mxu_fp64_isa(c, mode, x);
#endif
#if TRIADA_ISA_HAVE_PORTABLE
    case kernels::Isa::portable:
      return isa_portable::fused_mxu_fp64_isa(c, mode, x);
#endif
    default:  // isa() returns only compiled paths
      return 0;
  }
}

namespace {

// Non-zeros of x[0, len) (v != 0: -0 is zero, NaN is not, as is_zero).
std::uint64_t count_nonzero(const double* x, index_t len) {
  std::uint64_t n = 0;
  for (index_t i = 0; i < len; ++i) n += is_zero(x[i]) ? 0 : 1;
  return n;
}

}  // namespace

std::uint64_t fused_mxu_scalar(const MxuCall& c, Mode mode, CellMode cell_mode, MxuScratch& x) {
  const index_t s = c.s;
  const bool esop = mode == Mode::esop;
  x.w.resize(static_cast<size_t>(s));
  x.nnz_b.resize(static_cast<size_t>(s));
  if (esop)
    for (index_t t = 0; t < s; ++t) x.nnz_b[t] = count_nonzero(c.B + t * c.ldb, s);
  double* w = x.w.data();
  std::uint64_t macs = 0;
  for (index_t i = 0; i < c.r; ++i) {
    const double* a = c.A + i * c.lda;
    double* out = c.C + i * c.ldc;
    for (index_t k = 0; k < s; ++k) w[k] = mma_start(cell_mode, c.accumulate ? out[k] : 0.0);
    for (index_t t = 0; t < s; ++t) {  // step t: the pivot A[i][t] meets row t of B
      const double y = a[t];
      const double* b = c.B + t * c.ldb;
      if (!esop) {
        for (index_t k = 0; k < s; ++k) w[k] = mma_mac(cell_mode, w[k], y, b[k]);
        continue;
      }
      if (is_zero(y)) continue;  // no pivot on the line: the row's cells wait
      for (index_t k = 0; k < s; ++k)
        if (!is_zero(b[k])) w[k] = mma_mac(cell_mode, w[k], y, b[k]);
      macs += x.nnz_b[t];
    }
    for (index_t k = 0; k < s; ++k)
      out[k] = mma_store(cell_mode, c.accumulate ? out[k] : 0.0, w[k]);
  }
  return esop ? macs : static_cast<std::uint64_t>(c.r * s * s);
}

}  // namespace triada
