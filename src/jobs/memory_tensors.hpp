#pragma once
// A transform's tensors in the caller's memory (C++ or numpy arrays), for run_transform: X and Y0
// whole on world rank 0 (scattered to the brick ranks) or as each brick rank's own part,
// gemt's matrices on rank 0 (broadcast), the result gathered to rank 0 or left with each
// brick rank. Messages and the report name the tensors as the Python module's arguments: x,
// initial, C1..C3, y.
#include <array>
#include <memory>
#include <vector>

#include "jobs/array_view.hpp"
#include "jobs/transform_job.hpp"

namespace triada {

struct ArrayInputs {
  ArrayView x, initial;  // initial.given: the affine form's Y0
  std::array<ArrayView, 3> coeffs;
  bool distributed = false;  // x and initial are this rank's parts (their boxes: layout())
  ext3 global_shape{};       // distributed: X's shape (Y0's is the output's)
  bool gather = true;        // the result whole on world rank 0; else each brick rank's part
};

// The result as it left the engine (no copy where one brick holds it all, or not gathered).
struct ArrayResult {
  bool present = false;  // rank 0 when gathered, every brick rank otherwise
  bool is_complex = false;
  std::vector<double> real;
  std::vector<cplx> complex;
  Brick box;  // the part held, global coordinates (the whole output when gathered)
};

// Keeps references to cfg, in and result, which must outlive it.
std::unique_ptr<TransformTensors> array_tensors(const TransformConfig& cfg, const ArrayInputs& in,
                                                ArrayResult& result);

}  // namespace triada
