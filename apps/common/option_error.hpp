#pragma once
// Library errors never name a command-line option; the program that parsed the value does.
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"

namespace triada {

// Runs a library parser of the value of `option`: its config_error becomes
// "<option>: <message>", the user's text escaped and the whole at most 300 characters
// (the words named() gives a message that names the option itself).
template <class F>
auto for_option(const std::string& option, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const config_error& e) {
    throw config_error(printable(option + ": " + e.what(), 300));
  }
}

}  // namespace triada
