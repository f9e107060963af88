#pragma once
// triada-tcu's options parsed from words, as the program would (help text discarded).
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "apps/tcu/options.hpp"

namespace triada {

inline std::optional<TcuConfig> parse_tcu_words(std::vector<std::string> args) {
  args.insert(args.begin(), "triada-tcu");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::ostringstream help;
  return parse_tcu_options(static_cast<int>(argv.size()), argv.data(), help);
}

}  // namespace triada
