#pragma once
// How an error reaches the user: the programs print it, the Python module raises it.
#include <string>

namespace triada {

// Control bytes of user text (a file name, a value) as \xNN: an error message fit for one
// line of a terminal (the Python module raises the same text).
std::string escape_controls(const std::string& what);

}  // namespace triada
