#pragma once
// The time model's mesh-config keys, [machine] (doc/design.md §8.11): the machine a run is
// priced on, from a calibration file (triada-bench --calibrate) or the built-in constants,
// and the network assumed between nodes. Each is also a --machine.key option.
#include <boost/program_options.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "geometry/time_model.hpp"

namespace triada {

void add_machine_options(boost::program_options::options_description& d);

// The keys' values, validated (a calibration file read and checked); `source` names a key
// for errors (the option or FILE: [s] k).
MachineModel machine_from(const boost::program_options::variables_map& vm,
                          const std::function<std::string(const std::string&)>& source);

// The constants a calibration (schema triada-calibration/1) measured; `name` names it in
// errors (config_error: a key missing, a value not a positive number).
MachineModel machine_from_calibration(const nlohmann::json& cal, const std::string& name);

}  // namespace triada
