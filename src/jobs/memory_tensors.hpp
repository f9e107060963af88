#pragma once
// A transform's tensors in the caller's memory (C++ or numpy arrays, ArrayInputs of
// jobs/transform_job.hpp), for run_transform: X and Y0 whole on world rank 0 (scattered to
// the brick ranks) or as each brick rank's own part, gemt's matrices on rank 0 (broadcast),
// the result gathered to rank 0 or left with each brick rank. Messages and the report name
// the tensors as the Python module's arguments: x, initial, C1..C3, y.
#include <memory>

#include "jobs/transform_job.hpp"
#include "jobs/transform_tensors.hpp"

namespace triada {

// Keeps references to cfg, in and result, which must outlive it.
std::unique_ptr<TransformTensors> array_tensors(const TransformConfig& cfg, const ArrayInputs& in,
                                                ArrayResult& result);

}  // namespace triada
