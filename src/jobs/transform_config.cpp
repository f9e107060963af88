#include "jobs/transform_config.hpp"

#include <string>

namespace triada {

std::string batch_trace_path(const std::string& trace) {
  if (trace.empty() || trace == "-" || trace.rfind("/dev/", 0) == 0 ||
      trace.rfind("/proc/", 0) == 0)
    return "";
  const std::string ext = ".csv";
  const bool csv =
      trace.size() > ext.size() && trace.compare(trace.size() - ext.size(), ext.size(), ext) == 0;
  return (csv ? trace.substr(0, trace.size() - ext.size()) : trace) + ".batches.csv";
}

std::string transform_list(const TransformConfig& cfg) {
  std::string kinds;
  for (int a = 0; a < 3; ++a) kinds += (a ? "," : "") + to_string(cfg.kinds[a]);
  return kinds;
}

}  // namespace triada
