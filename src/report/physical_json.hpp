#pragma once
// The report's `physical` section (doc/design.md §5, doc/physical.md §7) and the summary's
// physical line.
#include <nlohmann/json.hpp>
#include <string>

#include "physical/physical_model.hpp"

namespace triada {

// `plan`: the mesh and fold the chip section names.
nlohmann::json physical_json(const PhysicalResult& r, const PhysicalParams& p, const Plan& plan);
std::string physical_summary_line(const PhysicalResult& r, const PhysicalParams& p);

}  // namespace triada
