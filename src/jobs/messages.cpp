#include "jobs/messages.hpp"

#include <cstdio>

namespace triada {

std::string escape_controls(const std::string& what) {
  std::string out;
  for (const unsigned char c : what) {
    if (c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

}  // namespace triada
