#pragma once
// triada-gen's options as a plain struct (doc/design.md §10.6). Every option is a string while
// parsing so that each bad value gets its own one line.
#include <optional>
#include <ostream>
#include <string>

#include "counters/progress.hpp"
#include "io/generate.hpp"
#include "io/tensor_io.hpp"

namespace triada {

struct GenConfig {
  DatasetRef output;
  ElementType type = ElementType::float64;
  std::string dist_name = "uniform";
  GenSpec spec;        // shape, distribution, sparsity, zero lines / planes, seed
  std::string report;  // --report: a JSON record of what was written (empty: none)
  bool force = false;
  ProgressMode progress = ProgressMode::automatic;  // --progress (counters/progress.hpp)
  std::string command_line;  // the words of the run, shell-quoted (report/provenance.hpp)
};

// Returns nothing for --help (the text goes to `help`). Throws config_error with one line
// for a bad, unknown or missing option.
std::optional<GenConfig> parse_gen_options(int argc, char** argv, std::ostream& help);

}  // namespace triada
