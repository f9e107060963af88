// Catch2 main of the unit tests: v2 generates it from its header; under v3 this file is
// empty and the tests link Catch2::Catch2WithMain (tests/CMakeLists.txt).
#if TRIADA_CATCH2_MAJOR < 3
#define CATCH_CONFIG_MAIN
#include "support/catch.hpp"
#endif
