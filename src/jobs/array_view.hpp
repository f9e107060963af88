#pragma once
// An array in the caller's memory as the jobs read it (a C++ vector, a numpy array without
// its Python object, so the engine runs without the GIL): its bytes, shape, strides and
// element type, read with the types the CLI reads from HDF5 (any integer, float32, float64,
// complex64, complex128) into the engine's double or complex<double> registers.
#include <cstddef>
#include <string>
#include <vector>

#include "actuator/coefficients.hpp"
#include "core/types.hpp"
#include "geometry/brick.hpp"

namespace triada {

struct ArrayView {
  bool given = false;
  const std::byte* data = nullptr;
  std::vector<index_t> shape;
  std::vector<index_t> strides;  // in bytes, as numpy's
  char kind = 0;                 // numpy's dtype kind: 'i', 'u', 'f', 'c', 'b', ...
  int itemsize = 0;
  std::string type_name;  // numpy's dtype name: "int16", "float64", "complex64", ...

  bool supported() const;  // an element type the CLI reads
  bool is_complex() const { return kind == 'c'; }
  // "4x5x6"
  std::string shape_string() const;
};

// A C-order float64 or complex128 array of `shape` over `data` (which must outlive the view).
ArrayView array_view(const double* data, const std::vector<index_t>& shape);
ArrayView array_view(const cplx* data, const std::vector<index_t>& shape);

// Checks `a` as the CLI checks a dataset: rank `rank`, a supported type, no zero extent.
// Throws input_error naming it ("x: rank 2, expected a rank-3 tensor").
void check_array(const ArrayView& a, int rank, const std::string& name);

// The elements of `box` (global coordinates) of a rank-3 array whose element [0, 0, 0] is
// at global `origin`, in C order, converted (real values into complex as (v, 0)).
void copy_box(const ArrayView& a, const Brick& box, const ext3& origin, std::vector<double>& out);
void copy_box(const ArrayView& a, const Brick& box, const ext3& origin, std::vector<cplx>& out);

// "C1: the 4x5 matrix": a matrix's label in messages, the CLI's with the argument's name.
std::string matrix_label(const std::string& name, index_t rows, index_t cols);

// A rank-2 array `name` as a coefficient matrix (complex if its type is), refused as the
// CLI refuses a file's (matrix_elements) if its complex128 copy does not fit in memory.
CoeffMatrix to_matrix(const ArrayView& a, const std::string& name);

}  // namespace triada
