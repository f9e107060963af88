#pragma once
// triada-transform's options parsed into its config (jobs/transform_config.hpp, doc/design.md
// §10.6): every option is declared once with its description and default (so --help
// documents it), parsed from the command line and the mesh INI file (command line wins),
// validated; the variables_map never leaves options.cpp.
#include <optional>
#include <ostream>

#include "jobs/transform_config.hpp"

namespace triada {

// Parses argv. Returns nullopt after printing --help to `out`. Throws config_error with
// one clear line for any bad option, key or value.
std::optional<TransformConfig> parse_transform_options(int argc, char** argv, std::ostream& out);

}  // namespace triada
