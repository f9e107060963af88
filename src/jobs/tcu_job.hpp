#pragma once
// triada-tcu's job: one algorithm of "A Computational Model for Tensor Core Units" on the
// planar MXU (or a size x m sweep of it), its model cost next to the theorem's bound, as a
// summary, a JSON report and, for a product of arrays in memory, the product.
#include <mpi.h>

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "core/types.hpp"
#include "jobs/tcu_config.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada {

// The product C of matmul or strassen and the cost of the unit that computed it (the
// report's `tcu` figures).
struct TcuMatrixProduct {
  index_t side = 0;
  std::vector<double> values;  // side x side, C order
  TcuCost cost;
};

struct TcuResult {
  // The program's exit code, the same on every rank: 0 verified, 4 if a result failed its
  // check in fp64. In a lower-precision cell mode a failed check is expected: `verified`
  // stays false in the report, the summary says "not verified (cell mode X computes in
  // lower precision)" and the code is 0 (doc/precision.md).
  int code = 0;
  // The JSON report (triada-tcu-report/1, with its provenance) on every rank, as the file
  // of cfg.report holds it (which may be a target that cannot be read back: "-", a FIFO).
  nlohmann::json report;
  // On rank 0, for a single run of matmul or strassen on arrays in memory (cfg.arrays):
  // the product it computed and checked.
  std::optional<TcuMatrixProduct> product;
};

class TcuJob {
 public:
  // Checks the config (validate: config_error with triada-tcu's message).
  explicit TcuJob(TcuConfig cfg);
  const TcuConfig& config() const { return cfg_; }

  // Runs the job, prints the summary (or the sweep table) to `out`, writes the report.
  // Collective over `comm`: a sweep's points are split over the ranks (round-robin by
  // decreasing size), a single run is rank 0's; rank 0 prints to `out` and writes the
  // report file.
  TcuResult run(MPI_Comm comm, std::ostream& out) const;

 private:
  TcuConfig cfg_;
};

}  // namespace triada
