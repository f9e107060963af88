#include "jobs/transform_activity.hpp"

#include <cstdint>
#include <limits>

#include "core/error.hpp"
#include "io/xdmf.hpp"
#include "jobs/provenance.hpp"
#include "jobs/provenance_attributes.hpp"

namespace triada {

namespace {

// "/total" or "/stage1", "/stage2", ... (stage order).
std::string group_of(int stage) {
  return stage < 0 ? "/total" : "/stage" + std::to_string(stage + 1);
}

// Every dataset of the file, group by group: the total first, then the stages.
std::vector<std::pair<int, Counter>> layout(const Plan& plan) {
  std::vector<std::pair<int, Counter>> l;
  for (int s = -1; s < static_cast<int>(plan.stages.size()); ++s)
    for (Counter c : kCellCounters) l.push_back({s, c});
  return l;
}

std::string dataset_of(int stage, Counter c) {
  return group_of(stage) + "/" + counter_info(c).name;
}

// The groups' attributes: what each stage was; the run's on the root.
void set_attributes(TensorWriter& w, const TransformConfig& cfg, const Provenance& prov,
                    const Plan& plan) {
  w.attributes_on("/");
  w.set_attribute("transform", transform_list(cfg));
  w.set_attribute("esop", cfg.mesh.mode == Mode::esop ? "on" : "off");
  w.set_attribute("stage_order", to_string(plan.stage_order));
  w.set_attribute("cells",
                  std::vector<index_t>(plan.virtual_cells.begin(), plan.virtual_cells.end()));
  w.set_attribute("mesh", std::vector<index_t>(plan.mesh.begin(), plan.mesh.end()));
  w.set_attribute("definition",
                  std::string("events of each virtual cell (i1, i2, i3): macs (W += y * c), "
                              "y_bus_sends (pivot drove its Y line), y_bus_receives (took a value "
                              "off its Y line and updated), waits (got a coefficient, its line "
                              "was empty); /total sums the stages"));
  set_provenance_attributes(w, prov);
  for (int s = 0; s < static_cast<int>(plan.stages.size()); ++s) {
    w.attributes_on(group_of(s));
    w.set_attribute("axis", static_cast<index_t>(plan.stages[s].axis));
    w.set_attribute("y_bus", std::string(to_string(plan.stages[s].y_bus())));
    w.set_attribute("x_bus", std::string(to_string(plan.stages[s].x_bus())));
  }
}

std::string sidecar_text(const TransformConfig& cfg, const Plan& plan) {
  std::vector<XdmfArray> arrays;
  for (const auto& [s, c] : layout(plan)) {
    const std::string name = group_of(s).substr(1) + "_" + counter_info(c).name;
    arrays.push_back({name, dataset_of(s, c), ElementType::uint32, 0});
  }
  return xdmf_document("activity", cfg.activity, plan.virtual_cells, arrays);
}

}  // namespace

std::vector<RunFile> activity_files(const TransformConfig& cfg) {
  if (cfg.activity.empty()) return {};
  // Not marked HDF5: the activity never shares a file with the output or an input.
  return {{cfg.activity, "--activity", true, false},
          {xdmf_path(cfg.activity), "--activity's sidecar", true, false}};
}

TextOutput probe_activity(const TransformConfig& cfg) {
  if (cfg.activity.empty()) return {};
  check_output_writable(DatasetRef{cfg.activity, ""}, cfg.force);
  return TextOutput(xdmf_path(cfg.activity), cfg.force);
}

void check_activity_fits(const Plan& plan) {
  std::uint64_t most = 0;
  for (const StagePlan& s : plan.stages) most += static_cast<std::uint64_t>(s.n());
  if (most > std::numeric_limits<std::uint32_t>::max())
    throw config_error("--activity: a cell's counts could pass 2^32 on this problem");
}

void write_activity(const TransformConfig& cfg, const Provenance& prov, const Topology& topo,
                    const CellActivity& activity, std::optional<TensorWriter>& writer,
                    TextOutput& sidecar) {
  const Plan& plan = topo.plan();
  const auto l = layout(plan);
  std::vector<DatasetSpec> specs;
  for (const auto& [s, c] : l)
    specs.push_back({dataset_of(s, c), plan.virtual_cells, ElementType::uint32});
  TensorWriter& w = writer.emplace(topo.bricks(), cfg.activity, specs, cfg.force);
  // One dataset at a time: no rank holds more than one count per cell of its brick.
  for (std::size_t i = 0; i < l.size(); ++i)
    w.write_brick(i, activity.cells, cell_counts(activity, l[i].first, l[i].second));
  set_attributes(w, cfg, prov, plan);
  w.finish();
  sidecar.stage(sidecar_text(cfg, plan));  // rank 0's is the active one
}

}  // namespace triada
