#include "jobs/transform_config.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "config/options.hpp"
#include "core/error.hpp"

namespace triada {

namespace {

std::string in_quotes(const std::string& s) {
  return "'" + printable(s) + "'";
}

// --model-only N1,N2,N3 replaces the data options, which it refuses by name.
void validate_model_only(const TransformConfig& c) {
  const ext3& n = *c.model_shape;
  parse_ext3(std::to_string(n[0]) + "," + std::to_string(n[1]) + "," + std::to_string(n[2]),
             "--model-only");
  const std::pair<const char*, bool> data[] = {
      {"input", !c.input.file.empty()},     {"output", !c.output.file.empty()},
      {"trace", !c.trace.empty()},          {"coeffs", !c.coeffs.empty()},
      {"initial", !c.initial.file.empty()}, {"activity", !c.activity.empty()}};
  for (const auto& [name, given] : data)
    if (given) throw config_error("--model-only reads and writes no data: drop " + c.spelled(name));
  if (c.xdmf) throw config_error("--model-only reads and writes no data: drop --xdmf");
  if (c.check) throw config_error("--model-only runs nothing to --check");
}

// The transforms: named, the same as kinds, gemt with its matrices.
void validate_transforms(const TransformConfig& c) {
  const std::string option = c.spelled("transform");
  if (parse_transform_list(c.transform_spec, option) != c.kinds)
    throw config_error(option + ": " + in_quotes(c.transform_spec) +
                       " is not the config's transforms " + transform_list(c));
  named("--norm", [&] { return parse_norm(to_string(c.norm)); });
  const bool any_gemt =
      std::find(c.kinds.begin(), c.kinds.end(), TransformKind::gemt) != c.kinds.end();
  if (any_gemt && c.coeffs.empty() && !c.model_shape)  // --model-only: dense N x N matrices
    throw config_error(option + " gemt needs --coeffs FILE.h5 with datasets /C1 /C2 /C3");
  if (!any_gemt && !c.coeffs.empty())
    throw config_error("--coeffs is only used with --transform gemt");
}

void validate_world_size(const TransformConfig& c) {
  if (c.plan_world_size == 0) return;  // this run's
  if (!c.dry_run) throw config_error("--world-size plans a run: it needs --dry-run");
  if (c.plan_world_size < 0)
    parse_positive("--world-size", std::to_string(c.plan_world_size));  // throws
  if (c.plan_world_size > (1 << 20)) throw config_error("--world-size: at most 1048576 ranks");
}

}  // namespace

std::array<TransformKind, 3> parse_transform_list(const std::string& spec,
                                                  const std::string& option) {
  std::vector<std::string> words = list_items(option, spec);
  if (words.size() != 1 && words.size() != 3)
    throw config_error(option +
                       ": expected one transform or three (one per axis) separated by single "
                       "commas, got " +
                       in_quotes(spec));
  if (words.size() == 1) words = {words[0], words[0], words[0]};
  std::array<TransformKind, 3> kinds{};
  for (int a = 0; a < 3; ++a) kinds[a] = named(option, [&] { return parse_transform(words[a]); });
  return kinds;
}

void validate(const TransformConfig& c) {
  validate_mesh(c.mesh);
  if (c.model_shape) validate_model_only(c);
  if (!c.model_shape && c.input.file.empty()) throw config_error("missing --input (see --help)");
  if (!c.model_shape && c.output.file.empty()) throw config_error("missing --output (see --help)");
  if (c.transform_spec.empty()) throw config_error("missing --transform (see --help)");
  validate_transforms(c);
  named("--stage-order", [&] { return parse_stage_order(to_string(c.stage_order)); });
  validate_world_size(c);
  if (c.executor != "fused" && c.executor != "reference")
    throw config_error("--executor: expected fused or reference, got " + in_quotes(c.executor));
  named("--transport", [&] { return parse_transport(to_string(c.transport)); });
}

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
