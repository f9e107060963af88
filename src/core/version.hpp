#pragma once
// The library's version: the CMake project VERSION, as macros (generated
// core/version_config.hpp, for compile-time checks) and at run time.
#include <string>

#include "core/version_config.hpp"

namespace triada {

// The version the library was built as, e.g. "0.1.0" (TRIADA_VERSION of its build).
std::string version_string();

}  // namespace triada
