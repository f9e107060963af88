#pragma once
// The MXU memory side's mesh-config keys, [mxu] (doc/design.md §3.11); each is also a
// --mxu.key option where a program takes the mesh keys on its command line.
#include <boost/program_options.hpp>
#include <functional>
#include <string>

#include "physical/mxu_memory.hpp"

namespace triada {

void add_mxu_options(boost::program_options::options_description& d);

// The keys' values, validated; `source` names a key for errors (the option or FILE: [s] k).
MxuMemoryParams mxu_memory_from(const boost::program_options::variables_map& vm,
                                const std::function<std::string(const std::string&)>& source);

// "34", "0.7", "12.8": a positive decimal in (0, 1e6] with at most 6 decimals, exactly;
// false otherwise.
bool parse_decimal(const std::string& s, Decimal& out);

}  // namespace triada
