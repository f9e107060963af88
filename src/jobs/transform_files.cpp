// The program's tensors: the HDF5 files of --input, --initial, --coeffs and --output (read
// and written by hyperslab, each brick rank its own part; the output atomic).
#include <filesystem>
#include <optional>

#include "core/error.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "io/xdmf.hpp"
#include "jobs/provenance.hpp"
#include "jobs/provenance_attributes.hpp"
#include "jobs/transform_tensors.hpp"

namespace triada {

namespace {

class FileTensors final : public TransformTensors {
 public:
  explicit FileTensors(const TransformConfig& cfg) : cfg_(cfg) {}

  std::vector<RunFile> run_files() const override {
    return {{cfg_.input.file, cfg_.spelled("input"), false, true},
            {cfg_.coeffs, "--coeffs", false, true},
            {cfg_.mesh.file, "--mesh", false, false},
            {cfg_.output.file, cfg_.spelled("output"), true, true},
            {cfg_.report, "--report", true, false},
            {cfg_.trace, "--trace", true, false},
            {batch_trace_path(cfg_.trace), "--trace's batches", true, false},
            // Not marked HDF5: Y0 may not even share a file with the output it seeds.
            {cfg_.initial.file, "--initial", false, false},
            {cfg_.xdmf ? xdmf_path(cfg_.output.file) : "", "--xdmf", true, false}};
  }
  // Rank 0: the output and, with --xdmf, its sidecar can be written.
  void check_output() override {
    check_output_writable(cfg_.output, cfg_.force);
    if (cfg_.xdmf) sidecar_ = TextOutput(xdmf_path(cfg_.output.file), cfg_.force);
  }

  TensorInfo inspect_input() override {
    const TensorInfo info = inspect_tensor(cfg_.input);
    check_not_input(info);
    return info;
  }
  TensorInfo inspect_initial(const ext3&) override { return inspect_tensor(cfg_.initial); }

  CoeffMatrix gemt_matrix(int axis, std::string& what) override {
    const std::string dset = "/C" + std::to_string(axis);
    what = cfg_.coeffs + ":" + dset;
    return read_matrix(cfg_.coeffs, dset);
  }
  CoeffMatrix gemt_facts(int axis, std::string& what) override {
    const std::string dset = "/C" + std::to_string(axis);
    what = cfg_.coeffs + ":" + dset;
    return inspect_matrix(cfg_.coeffs, dset);
  }

  TensorNames names(const TensorInfo& x, const TensorInfo& y0) const override {
    return {cfg_.input.str(), cfg_.input.file + ":" + x.dataset,
            cfg_.initial.file.empty() ? "" : cfg_.initial.file + ":" + y0.dataset,
            cfg_.output.str()};
  }
  void share(MPI_Comm) override {}

  void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
            std::vector<double>& out) override {
    read_brick(topo.bricks(), initial ? cfg_.initial.file : cfg_.input.file, info, box, out);
  }
  void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
            std::vector<cplx>& out) override {
    read_brick(topo.bricks(), initial ? cfg_.initial.file : cfg_.input.file, info, box, out);
  }

  void write(const TensorNames& names, const Provenance& prov, const Topology& topo,
             EngineResult<double>& res) override {
    write_typed(names, prov, topo, res);
  }
  void write(const TensorNames& names, const Provenance& prov, const Topology& topo,
             EngineResult<cplx>& res) override {
    write_typed(names, prov, topo, res);
  }
  void publish() override {
    if (writer_) writer_->publish();
    sidecar_.publish();
  }

 private:
  // An output dataset in the input's own file must not be the input itself.
  void check_not_input(const TensorInfo& info) const {
    const std::string out = output_dataset_path(cfg_.output);
    std::error_code ec;
    if (out == info.dataset && std::filesystem::equivalent(cfg_.input.file, cfg_.output.file, ec))
      throw input_error(cfg_.output.str() + ": --output is the input dataset " + cfg_.input.file +
                        ":" + info.dataset);
  }

  // This brick's part of the output with its attributes, finished but not yet published.
  template <class T>
  void write_typed(const TensorNames& names, const Provenance& prov, const Topology& topo,
                   const EngineResult<T>& res) {
    const Plan& plan = topo.plan();
    const RunCounters& rc = res.counters;
    TensorWriter& w =
        writer_.emplace(topo.bricks(), cfg_.output, plan.out_shape, is_complex_v<T>, cfg_.force);
    w.write_brick(res.out_box, res.out);
    w.set_attribute("transform", transform_list(cfg_));
    w.set_attribute("norm", to_string(cfg_.norm));
    w.set_attribute("direction", cfg_.inverse ? "inverse" : "forward");
    w.set_attribute("stage_order", to_string(plan.stage_order));
    w.set_attribute("esop", cfg_.mesh.mode == Mode::esop ? "on" : "off");
    w.set_attribute("cell_mode", to_string(cfg_.mesh.cell_mode));
    w.set_attribute("input", names.input);
    if (!names.initial.empty()) w.set_attribute("initial", names.initial);
    w.set_attribute("mesh", std::vector<index_t>(plan.mesh.begin(), plan.mesh.end()));
    w.set_attribute("brick_ranks",
                    std::vector<index_t>(plan.ranks.grid.begin(), plan.ranks.grid.end()));
    std::vector<index_t> steps;
    for (const auto& s : rc.stages) steps.push_back(static_cast<index_t>(s.steps));
    w.set_attribute("steps_per_stage", steps);
    w.set_attribute("steps", static_cast<index_t>(rc.total_steps()));
    set_provenance_attributes(w, prov);
    w.finish();
    if (sidecar_.active()) stage_sidecar<T>(w, plan.out_shape);
  }

  // Rank 0 (the one that probed it): the output's XDMF sidecar, naming the dataset.
  template <class T>
  void stage_sidecar(const TensorWriter& w, const ext3& shape) {
    const std::string dset = output_dataset_path(cfg_.output);
    const std::string name = dset.substr(dset.rfind('/') + 1);
    const XdmfArray y{name, dset, is_complex_v<T> ? ElementType::complex128 : ElementType::float64,
                      w.data_offset()};
    sidecar_.stage(xdmf_document(name, cfg_.output.file, shape, {y}));
  }

  const TransformConfig& cfg_;
  std::optional<TensorWriter> writer_;
  TextOutput sidecar_;  // --xdmf, rank 0's
};

}  // namespace

std::unique_ptr<TransformTensors> file_tensors(const TransformConfig& cfg) {
  return std::make_unique<FileTensors>(cfg);
}

}  // namespace triada
