#include "io/dataset_ref.hpp"

#include "core/error.hpp"

namespace triada {

DatasetRef parse_dataset_ref(const std::string& spec) {
  // Only the last ":/" separates: file names may contain ':' themselves.
  const auto sep = spec.rfind(":/");
  DatasetRef ref;
  if (sep == std::string::npos) {
    ref.file = spec;
  } else {
    ref.file = spec.substr(0, sep);
    ref.dataset = spec.substr(sep + 1);
  }
  if (ref.file.empty()) throw config_error("'" + spec + "': missing file name (FILE[:/DATASET])");
  return ref;
}

}  // namespace triada
