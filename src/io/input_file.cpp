#include "io/input_file.hpp"

#include <filesystem>
#include <system_error>

#include "core/error.hpp"

namespace triada {

namespace fs = std::filesystem;

namespace {
std::string kind_of(const fs::file_status& st) {
  switch (st.type()) {
    case fs::file_type::regular:
    case fs::file_type::not_found:
    case fs::file_type::none:
      return "";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    default:
      return "neither a file nor a directory";
  }
}
}  // namespace

std::string non_regular_kind(const std::string& path) {
  std::error_code ec;
  return kind_of(fs::status(path, ec));  // follows symlinks: a link to a file is fine
}

void require_regular_file(const std::string& path, const std::string& label) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (st.type() == fs::file_type::none)  // status failed, e.g. a directory not searchable
    throw input_error(label + ": cannot access (" + ec.message() + ")");
  if (!fs::exists(st)) throw input_error(label + ": no such file");
  if (fs::is_directory(st)) throw input_error(label + ": is a directory");
  const std::string kind = kind_of(st);
  if (!kind.empty()) throw input_error(label + ": not a regular file (" + kind + ")");
}

}  // namespace triada
