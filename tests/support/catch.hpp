#pragma once
// Catch2 v2 (Debian 12) or v3 (newer distributions), whichever tests/CMakeLists.txt found
// (TRIADA_CATCH2_MAJOR). Under v3 the v2 names the tests use are provided: Approx,
// Catch::Contains, Catch::StartsWith. Every test includes this instead of Catch2 itself.
#ifndef TRIADA_CATCH2_MAJOR
#error "TRIADA_CATCH2_MAJOR is set by tests/CMakeLists.txt (2 or 3)"
#endif

#if TRIADA_CATCH2_MAJOR >= 3
#include <catch2/catch_all.hpp>
#include <string>

namespace Catch {
inline Matchers::StringContainsMatcher Contains(const std::string& s,
                                                CaseSensitive cs = CaseSensitive::Yes) {
  return Matchers::ContainsSubstring(s, cs);
}
using Matchers::StartsWith;
}  // namespace Catch
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
