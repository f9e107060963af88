#pragma once
// The one reader of real arrays (matrices, vectors, rank-4 tensors) from an HDF5 input,
// read whole and serially as float64: HDF5 converts integer and float element types. The
// coefficient matrices of triada-transform, which may be complex, are read by tensor_io.
//
// Its callers have always worded their messages differently, and tests check the words,
// so a request names its wording (ArrayWords).
#include <string>
#include <vector>

#include "core/types.hpp"

namespace triada {

enum class ArrayWords {
  // "FILE: not a readable HDF5 file", "FILE:/D: expected an integer or real dataset",
  // "FILE:/D: expected a rank-1 or rank-2 dataset, got rank R" (type checked first). A
  // dataset HDF5 cannot open is an HDF5 error (wrap the call in h5::reading_input).
  plain,
  // "LABEL: not an HDF5 file", "LABEL: cannot open (why)", "LABEL:/D: not a dataset",
  // "LABEL:/D: rank R, expected N", "LABEL:/D: unsupported element type (integer or float
  // expected)" (rank checked first); LABEL is e.g. "--input FILE".
  labelled,
};

struct RealArrayRequest {
  std::string file;
  std::string dataset;  // "" = the file's only dataset of rank min_rank
  std::string label;    // names the file in messages: the file itself or "--input FILE"
  int min_rank = 1, max_rank = 1;
  ArrayWords words = ArrayWords::plain;
};

struct RealArray {
  std::vector<index_t> dims;  // extents, slowest first
  std::vector<double> data;   // C order
};

// Throws input_error naming the input for a missing or unreadable file or dataset, a
// wrong rank or element type, or a shape too large for memory.
RealArray read_real_array(const RealArrayRequest& request);

}  // namespace triada
