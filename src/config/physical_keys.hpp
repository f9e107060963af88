#pragma once
// The physical model's mesh-config keys: [technology], [timing], [area] and the wire-energy
// keys of [energy] (doc/physical.md §7). Each is also a --section.key option.
#include <boost/program_options.hpp>
#include <functional>
#include <string>

#include "physical/physical_model.hpp"

namespace triada {

void add_physical_options(boost::program_options::options_description& d);

// The keys' values, validated; `source` names a key for errors (the option or FILE: [s] k).
PhysicalParams physical_from(const boost::program_options::variables_map& vm,
                             const std::function<std::string(const std::string&)>& source);

}  // namespace triada
