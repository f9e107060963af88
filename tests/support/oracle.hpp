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

// max |got - ref| / max |ref| (ref all zero: max |got|). Throws std::logic_error if
// the sizes differ.
double max_rel_error(const std::vector<cplx>& got, const std::vector<cplx>& ref);

// Deterministic test data from a std::mt19937_64 seeded with `seed`: a `zero_fraction`
// of elements are 0; the others are uniform in [-1, 1) or, with `integers`, small
// integers in [-8, 8]; `complex_values` gives them a random imaginary part too.
std::vector<cplx> random_tensor(const ext3& shape, std::uint64_t seed, double zero_fraction,
                                bool complex_values, bool integers);

}  // namespace triada::test
