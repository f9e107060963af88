#pragma once
// triada-conv's command line parsed into its config (jobs/conv_config.hpp, doc/design.md
// §10.6); the variables_map never leaves the parser.
#include <iosfwd>
#include <optional>

#include "jobs/conv_config.hpp"

namespace triada {

// Parses the command line's words into a config and validates it (validate()). Returns
// nothing for --help (text in `help`). Throws config_error with one clear line for a bad,
// unknown or missing option, and for a malformed network file (naming file:line).
std::optional<ConvConfig> parse_conv_options(int argc, char** argv, std::ostream& help);

}  // namespace triada
