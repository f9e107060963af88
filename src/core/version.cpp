#include "core/version.hpp"

namespace triada {

// From the library's build, not the caller's headers: a program linked against another
// build than it was compiled with reports the library it runs.
std::string version_string() {
  return TRIADA_VERSION;
}

}  // namespace triada
