#pragma once
// Test-only reference implementations (doc/design.md §10.4: the independent check). Nothing
// here calls the library's make_coefficients: transforms come from FFTW (dft, dct,
// dht) or from a direct evaluation written here (wht), with the numpy/scipy scaling
// conventions of doc/design.md §4.
#include <array>
#include <cstdint>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/types.hpp"

namespace triada::test {

// x: whole tensor, C order, shape (N1, N2, N3). Applies along each axis a the 1D
// transform kinds[a] (dft, dct, dht via FFTW; wht by direct O(N^2) evaluation),
// forward or inverse, in the given norm (numpy.fft / scipy.fft conventions). Real-to-
// real kinds act on the real and imaginary parts separately. gemt is rejected.
std::vector<cplx> oracle_transform(const std::vector<cplx>& x, const ext3& shape,
                                   const std::array<TransformKind, 3>& kinds, Norm norm,
                                   bool inverse);

// Direct per-axis evaluation Y = X x_1 C1 x_2 C2 x_3 C3 (doc/design.md §3), C_a of shape
// N_a x K_a (CoeffMatrix layout), long double accumulation. Output shape (K1, K2, K3).
std::vector<cplx> oracle_gemt(const std::vector<cplx>& x, const ext3& shape,
                              const std::array<const CoeffMatrix*, 3>& c);

// How oracle_streaming evaluates: the stage order, ESOP (skip a product with a zero
// operand) or dense (every product), binary64 or binary32 (fp32 cells) arithmetic.
struct StreamingOptions {
  std::array<int, 3> order{3, 1, 2};
  bool esop = true;
  bool fp32 = false;  // real data only
};

// The affine 3-mode product Y = Y0 + X x1 C1 x2 C2 x3 C3 evaluated directly in streaming
// (natural row) order, the cell's arithmetic written out here: stage by stage in
// `order`, every output element starts at +0, in the last stage at Y0 (y0: a whole tensor
// of the output's shape, or null for +0; binary32-rounded with fp32), and adds for
// t = 0 .. N_a - 1 the product V[.., t, ..] * C_a[t, k] as one fused multiply-add
// (fp32: fmaf of the binary32-rounded operands; complex: the real FMAs
// re = fma(-yi, ci, fma(yr, cr, wr)), im = fma(yi, cr, fma(yr, ci, wi))). Under ESOP a
// zero y or a zero coefficient adds nothing. This is what the mesh must compute bit for
// bit (doc/design.md §3.1-3.5), whatever the ranks, executor or transport.
std::vector<double> oracle_streaming(const std::vector<double>& x, const ext3& shape,
                                     const std::array<const CoeffMatrix*, 3>& c,
                                     const StreamingOptions& opt,
                                     const std::vector<double>* y0 = nullptr);
std::vector<cplx> oracle_streaming(const std::vector<cplx>& x, const ext3& shape,
                                   const std::array<const CoeffMatrix*, 3>& c,
                                   const StreamingOptions& opt,
                                   const std::vector<cplx>* y0 = nullptr);

// max |got - ref| / max |ref| (ref all zero: max |got|). Throws std::logic_error if
// the sizes differ.
double max_rel_error(const std::vector<cplx>& got, const std::vector<cplx>& ref);

// Deterministic test data from a std::mt19937_64 seeded with `seed`: a `zero_fraction`
// of elements are 0; the others are uniform in [-1, 1) or, with `integers`, small
// integers in [-8, 8]; `complex_values` gives them a random imaginary part too.
std::vector<cplx> random_tensor(const ext3& shape, std::uint64_t seed, double zero_fraction,
                                bool complex_values, bool integers);

}  // namespace triada::test
