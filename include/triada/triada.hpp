#pragma once
// The whole installed library in one include: #include <triada/triada.hpp> and link
// triada::triada (find_package(triada)). Single headers are also reachable as
// "core/types.hpp" etc. (include/triada is an include directory of the package).
#include <string>

#include "actuator/coefficients.hpp"
#include "cell/cell_rule.hpp"
#include "core/error.hpp"
#include "core/types.hpp"
#include "core/version.hpp"
#include "counters/counters.hpp"
#include "engine/engine.hpp"
#include "geometry/brick.hpp"
#include "geometry/plan.hpp"
#include "io/tensor_io.hpp"
#include "kernels/isa.hpp"
#include "mesh/mpi.hpp"
#include "mesh/topology.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// The version of the linked library, e.g. "0.1.0" (core/version.hpp).
std::string version_string();

}  // namespace triada
