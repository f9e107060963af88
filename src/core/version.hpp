#pragma once
// The library's version: the CMake project VERSION, as macros (generated
// core/version_config.hpp, for compile-time checks) and at run time; and the git commit of
// the sources it was built from.
#include <string>

#include "core/version_config.hpp"

namespace triada {

// The version the library was built as, e.g. "0.1.0" (TRIADA_VERSION of its build).
std::string version_string();

// The commit of the source tree at build time: the full hash, "<hash>-dirty" if tracked
// files had uncommitted changes, "unknown" outside a git checkout. Defined in a .cpp that
// cmake/GitCommit.cmake generates at every build (rewritten only when the commit changes).
std::string git_commit();

}  // namespace triada
