// Catch2 main of the unit tests where the Catch2 package has no compiled one
// (Catch2::Catch2WithMain, tests/CMakeLists.txt): v2 generates it from its header.
#define CATCH_CONFIG_MAIN
#include "support/catch.hpp"
