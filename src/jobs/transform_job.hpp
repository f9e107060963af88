#pragma once
// triada-transform as a library call: validate inputs collectively, plan, read the input
// bricks, run the mesh, write the output, report. The tensors come from the options' HDF5
// files (file_tensors: the program) or from a caller's memory (array_tensors,
// jobs/memory_tensors.hpp: the Python module, C++ programs), through one interface,
// TransformTensors, so all run the same job and give the same report.
#include <mpi.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "geometry/layout_quality.hpp"
#include "geometry/memory_model.hpp"
#include "io/output_files.hpp"
#include "io/tensor_io.hpp"
#include "jobs/transform_config.hpp"
#include "report/provenance.hpp"

namespace triada {

// How messages and the report name a run's tensors: "in.h5:/x" for files, "x" in memory.
struct TensorNames {
  std::string input_given;  // X as the user named it (axis messages, memory model)
  std::string input;        // X resolved (report, output attribute)
  std::string initial;      // Y0 resolved; empty without one
  std::string output;       // Y
};

// What the checks of a run that need no tensor data look at (check_problem): the run's
// files and its tensors' shapes and types, from the tensors, their metadata or --model-only's
// shape. Errors are input_errors naming the tensor.
class TensorFacts {
 public:
  virtual ~TensorFacts() = default;
  // World rank 0, first: the files of the run (for check_distinct).
  virtual std::vector<RunFile> run_files() const = 0;
  // World rank 0: X's (and, with an initial output, Y0's) facts, checked. `out_shape`: the
  // output's, the whole shape of a Y0 given in parts (its check against it is the job's).
  virtual TensorInfo inspect_input() = 0;
  virtual TensorInfo inspect_initial(const ext3& out_shape) = 0;
  // World rank 0: gemt's C_axis's rows, cols and type, its data not read where it can be
  // avoided (files: only the dataset's metadata); `what` names it.
  virtual CoeffMatrix gemt_facts(int axis, std::string& what) = 0;
  // Every rank, after validation: the names, from the facts rank 0 found.
  virtual TensorNames names(const TensorInfo& x, const TensorInfo& y0) const = 0;
};

// Where a run's tensors come from and where its result goes. Each member says on which
// ranks it is called; errors are input_errors naming the tensor.
class TransformTensors : public TensorFacts {
 public:
  // World rank 0, after the files' check: the output can be written.
  virtual void check_output() = 0;
  // gemt's C_axis as given (on world rank 0, then on its actuator's rank); `what` names it.
  virtual CoeffMatrix gemt_matrix(int axis, std::string& what) = 0;
  CoeffMatrix gemt_facts(int axis, std::string& what) override { return gemt_matrix(axis, what); }
  // Collective over the world after validation (memory: the matrices to every rank).
  virtual void share(MPI_Comm world) = 0;
  // Brick ranks, collective over them: this brick's part `box` of X, or of Y0 if `initial`.
  virtual void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
                    std::vector<double>& out) = 0;
  virtual void read(const Topology& topo, const TensorInfo& info, bool initial, const Brick& box,
                    std::vector<cplx>& out) = 0;
  // Brick ranks, collective over them: the result written (files: with its attributes and
  // the run's provenance), not yet visible; publish() (every rank) makes it visible once
  // every output is written.
  virtual void write(const TensorNames& names, const Provenance& prov, const Topology& topo,
                     EngineResult<double>& res) = 0;
  virtual void write(const TensorNames& names, const Provenance& prov, const Topology& topo,
                     EngineResult<cplx>& res) = 0;
  virtual void publish() = 0;
};

// The HDF5 files of cfg (--input, --initial, --coeffs, --output): the program's tensors.
// Keeps a reference to cfg.
std::unique_ptr<TransformTensors> file_tensors(const TransformConfig& cfg);

// Collective over `world`. Throws (collectively where the cause is bad input) on error.
// Prints the summary to `out` on world rank 0 unless cfg.quiet. Returns the report on world
// rank 0 (null elsewhere).
nlohmann::json run_transform(const TransformConfig& cfg, TransformTensors& tensors, MPI_Comm world,
                             std::ostream& out);

// The program: run_transform on the files of cfg.
void run_transform_job(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

// The request for a plan of cfg's run on these shapes (the world's size not yet set).
PlanRequest transform_plan_request(const TransformConfig& cfg, const ext3& in_shape,
                                   const ext3& out_shape);
// The plan of a run of cfg on `world` for these shapes (what run_transform, --dry-run and
// --model-only build): with [ranks] grid = auto, the grid the time model finds fastest
// ([machine] keys); refused (collectively) where --activity's counts could not fit it.
Plan transform_plan(const TransformConfig& cfg, MPI_Comm world, const ext3& in_shape,
                    const ext3& out_shape);
// The time model's view of --transport.
ModelTransport model_transport(PivotTransport t);

// What rank 0 learns from the tensors before anything runs; broadcast to every rank.
struct ProblemFacts {
  ext3 in_shape{};
  ext3 out_shape{};
  int input_complex = 0;
  int coeffs_complex = 0;
  int initial_complex = 0;  // --initial's Y0 (its shape is out_shape)
  bool complex_run() const { return input_complex || coeffs_complex; }
};

// World rank 0: every check of a run that needs no tensor data, the one function the run,
// --dry-run and --model-only all call, in this order: no output is the same file as an
// input or another output; then `probe` (the run: its outputs can be written; a plan: its
// --report); then X's and Y0's shape and type and each axis's K (built-in sizes, gemt
// matrices by gemt_facts), which it returns. What only data shows (a non-finite or singular
// matrix) and what the machine cannot hold are left to the run.
ProblemFacts check_problem(const TransformConfig& cfg, TensorFacts& tensors, TensorInfo& info,
                           TensorInfo& y0, const std::function<void()>& probe);
// --model-only's tensors: X of its shape (named "--model-only N1xN2xN3"), no file read.
std::unique_ptr<TensorFacts> model_shape_facts(const TransformConfig& cfg);

// What the memory model needs to know about a run of cfg (geometry/memory_model.hpp).
MemoryModelOptions memory_options(const TransformConfig& cfg, bool complex_run, bool one_node);

// The nearest world sizes whose automatic grid is good for the plan's shapes (rank 0).
std::vector<LayoutChoice> good_layouts_for(const TransformConfig& cfg, const Plan& plan);
// On world rank 0 unless cfg.quiet: a one-line warning on stderr if the plan's rank layout
// is poor (geometry/layout_quality.hpp), naming world sizes that would do better.
void warn_poor_layout(const TransformConfig& cfg, const Plan& plan, MPI_Comm world);

// --dry-run (cfg.dry_run): the plan of the run without reading data or writing the output
// (jobs/transform_dry_run.cpp): rank layout, memory per rank, MPI traffic per stage, the
// modelled time, the layout's verdict; text on `out` (rank 0), JSON to --report.
// Collective over `world`.
void run_dry_run(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

// --model-only (cfg.model_shape set): the report of a dense input of that shape, without
// data; rank 0 writes --report and prints the summary. Collective over `world`.
void run_model_only(const TransformConfig& cfg, MPI_Comm world, std::ostream& out);

}  // namespace triada
