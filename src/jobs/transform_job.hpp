#pragma once
// triada-transform as a library type (doc/design.md §10.6): a TransformJob is built from a
// TransformConfig, which it validates, and runs on a communicator: on the config's HDF5
// files (what the program runs), on arrays in the caller's memory (the Python module, C++
// programs), or as the config's --dry-run or --model-only. Every run returns its report
// and counters as data.
#include <mpi.h>

#include <array>
#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "core/types.hpp"
#include "counters/counters.hpp"
#include "geometry/brick.hpp"
#include "geometry/plan.hpp"
#include "jobs/array_view.hpp"
#include "jobs/transform_config.hpp"

namespace triada {

// The tensors of a run on arrays. The config names them: its input and output must be set
// (messages and the report say x and y), its initial where `initial` is given, its coeffs
// where an axis is gemt (the report names the matrices C1..C3).
struct ArrayInputs {
  ArrayView x, initial;  // initial.given: the affine form's Y0
  std::array<ArrayView, 3> coeffs;
  bool distributed =
      false;            // x and initial are this rank's parts (their boxes: TransformJob::plan)
  ext3 global_shape{};  // distributed: X's shape (Y0's is the output's)
  bool gather = true;   // the result whole on world rank 0; else each brick rank's part
};

// The result as it left the engine (no copy where one brick holds it all, or not gathered).
struct ArrayResult {
  bool present = false;  // rank 0 when gathered, every brick rank otherwise
  bool is_complex = false;
  std::vector<double> real;
  std::vector<cplx> complex;
  Brick box;  // the part held, global coordinates (the whole output when gathered)
};

// What a run returns, on world rank 0 (the other ranks: a null report, no counters) but y.
struct TransformResult {
  // The JSON report (triada-report/1) as --report writes it; --dry-run: the plan
  // (triada-plan/1).
  nlohmann::json report;
  // The run's counters, reduced over the ranks (--model-only: dense mode's closed forms;
  // --dry-run: none).
  RunCounters counters;
  // A run on arrays: the output, where ArrayInputs::gather puts it (y.present says).
  ArrayResult y;
};

class TransformJob {
 public:
  // Throws config_error (validate) for a config the program would refuse.
  explicit TransformJob(TransformConfig cfg);

  const TransformConfig& config() const { return cfg_; }

  // Collective over `world`: the run the config says (--dry-run, --model-only, else its
  // HDF5 files), its summary or plan printed on `out` by world rank 0 unless quiet. Errors
  // are thrown on every rank (config_error, input_error, ...).
  TransformResult run(MPI_Comm world, std::ostream& out) const;

  // Collective over `world`: the transform of the arrays `in` (which must outlive the call);
  // result.y holds the output. A --dry-run or --model-only config is refused (config_error).
  TransformResult run(const ArrayInputs& in, MPI_Comm world, std::ostream& out) const;

  // Collective over `world`: the plan of a run on `world` of tensors of these shapes, the
  // bricks each rank holds (Plan::brick_cells).
  Plan plan(MPI_Comm world, const ext3& in_shape, const ext3& out_shape) const;

 private:
  TransformConfig cfg_;
};

}  // namespace triada
