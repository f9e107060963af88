#pragma once
// Where a transform's tensors come from and where its result goes (the library's own, not
// installed): the options' HDF5 files (file_tensors: the program), a caller's memory
// (array_tensors, jobs/memory_tensors.hpp: TransformJob's run on arrays) or --model-only's
// shape alone, through one interface, so that all run the same job and give the same report.
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/engine.hpp"
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

// --model-only's tensors: X of its shape (named "--model-only N1xN2xN3"), no file read.
std::unique_ptr<TensorFacts> model_shape_facts(const TransformConfig& cfg);

}  // namespace triada
