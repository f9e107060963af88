#pragma once
// triada-conv's per-layer CSV report (--csv), as SCALE-Sim users read theirs: one row per
// layer and method, written from the JSON report's layer objects so that both always agree.
#include <nlohmann/json.hpp>
#include <string>

namespace triada {

// The CSV text of the report's "layers" array: a header row, then one row per layer and
// method run. The columns index, layer, kind, shape, gemm_m/n/k and method describe the
// row; every other column is the method object's key of the same name,
// an empty field where the object lacks it (or it is null). Integers are written as
// integers, reals in the shortest form that reads back to the same double.
std::string conv_csv(const nlohmann::json& layers);

}  // namespace triada
