#pragma once
// Coefficient (change-of-basis) matrices of doc/design.md §4. A stage along axis a computes
//   W[.., k, ..] = sum_n V[.., n, ..] * C[n, k],   C of shape N x K (rows n, columns k),
// so C is stored row-major: C(n, k) = data[n * cols + k]. An actuator streams row n
// at time step n (TriADA paper Eqs. 6.1-6.3).
#include <cstddef>
#include <string>
#include <vector>

#include "core/types.hpp"

namespace triada {

enum class TransformKind { dft, dct, dht, wht, gemt };
// numpy/scipy's norm: ortho scales both directions by 1/sqrt(N) (DCT: the orthonormal
// matrix); backward (their default) scales only the inverse, forward only the forward.
enum class Norm { ortho, backward, forward };

struct CoeffMatrix {
  index_t rows = 0;         // N (input extent along the axis)
  index_t cols = 0;         // K (output extent)
  bool is_complex = false;  // true if any entry has a non-zero imaginary part by construction
  std::vector<cplx> data;   // row-major, rows * cols

  const cplx& operator()(index_t n, index_t k) const { return data[n * cols + k]; }
  cplx& operator()(index_t n, index_t k) { return data[n * cols + k]; }
};

// The elements of a rows x cols matrix, after making sure `copies` of it fit in memory as
// complex128 (the engine's matrices): throws input_error "<label>: needs X, Y available"
// (or naming an overflow) before anything is allocated. Every matrix from a user's sizes
// (files, arrays, built-in transforms) goes through it.
std::size_t matrix_elements(index_t rows, index_t cols, int copies, const std::string& label);

// "dft" | "dct" | "dht" | "wht" | "gemt"; throws config_error naming the bad word.
TransformKind parse_transform(const std::string& word);
std::string to_string(TransformKind k);
Norm parse_norm(const std::string& word);  // "ortho" | "backward" | "forward"
std::string to_string(Norm n);

// The N x N matrix of a built-in transform (not gemt) in the given norm; with
// inverse = true the exact inverse matrix in the same norm, so that
// forward followed by inverse is the identity to rounding.
// Entries are built from the reduced integer phase ((n*k) mod N, (2n+1)k mod 4N)
// before sin/cos. Throws input_error if N < 1 or (wht) N is not a power of two;
// `what` names the input in the message (e.g. "axis 2 of in.h5:/x").
CoeffMatrix make_coefficients(TransformKind kind, index_t n, Norm norm, bool inverse,
                              const std::string& what);
// make_coefficients' checks of N alone, without building the matrix (--dry-run).
void check_transform_size(TransformKind kind, index_t n, const std::string& what);

// Throws input_error (naming `what`) if c is not square.
void check_square(const CoeffMatrix& c, const std::string& what);

// Inverse of a square matrix by Gauss-Jordan elimination with partial pivoting.
// Throws input_error (naming `what`) if it is not square or is singular.
CoeffMatrix invert(const CoeffMatrix& c, const std::string& what);

}  // namespace triada
