#pragma once
// A mesh key whose value must be refused: mesh_config throws a config_error whose one line
// contains `part` (the key's option name, or the choices it lists).
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "support/catch.hpp"

namespace triada::test {

inline void refuses_key(const std::string& key, const std::string& value, const std::string& part) {
  CAPTURE(key, value);
  CHECK_THROWS_AS(mesh_config("", {{key, value}}), config_error);
  CHECK_THROWS_WITH(mesh_config("", {{key, value}}), Catch::Contains(part));
}

}  // namespace triada::test
