#pragma once
// What an input file must be before anything opens it: an existing regular file (or a
// symlink to one). Opening a FIFO blocks until a writer appears, a device never ends, so
// every input path (tensors, coefficient files, tcu/conv inputs, configs) is checked here.
#include <string>

namespace triada {

// "" for a regular file or a path that does not exist; otherwise what it is instead
// ("a directory", "a FIFO", "a socket", "a character device", "a block device", ...).
std::string non_regular_kind(const std::string& path);

// Throws input_error "<label>: no such file" / "<label>: is a directory" /
// "<label>: not a regular file (a FIFO)"; `label` names the input (usually its path).
void require_regular_file(const std::string& path, const std::string& label);

}  // namespace triada
