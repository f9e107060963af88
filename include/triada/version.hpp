#pragma once
// The library's version (TRIADA_VERSION macros, version_string()) and source commit.
#include "core/version.hpp"
