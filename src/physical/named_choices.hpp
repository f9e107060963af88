#pragma once
// An enum's names as a table of (name, value) pairs: parsing a word against it and naming a
// value (the physical model's and the off-chip memory's key words).
#include <array>
#include <cstddef>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace triada {

// The value named `s`; else config_error "expected <what> a | b | c, got 's'".
template <class E, std::size_t N>
E parse_choice(const std::string& s, const std::array<std::pair<const char*, E>, N>& choices,
               const char* what) {
  std::string names;
  for (const auto& [name, value] : choices) {
    if (s == name) return value;
    names += (names.empty() ? "" : " | ") + std::string(name);
  }
  throw config_error(std::string("expected ") + what + " " + names + ", got '" + s + "'");
}

template <class E, std::size_t N>
std::string name_of(E e, const std::array<std::pair<const char*, E>, N>& choices) {
  for (const auto& [name, value] : choices)
    if (value == e) return name;
  return "?";
}

}  // namespace triada
