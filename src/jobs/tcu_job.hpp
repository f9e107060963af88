#pragma once
// triada-tcu: runs one algorithm of "A Computational Model for Tensor Core Units" on the
// planar MXU (or a size x m sweep of it), prints the model cost next to the theorem's bound
// and writes a JSON report.
#include <mpi.h>

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "jobs/tcu_config.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "physical/mxu_memory.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

// One run of `algo` on an (m, l)-TCU whose cells compute in `cell_mode`: the report object
// (algo, size, m, latency, weak, verified, reference, details, the `tcu` cost object with
// cell_mode, substeps and cycles, and `precision`: the mode and the error the algorithm
// reports against its reference, as `max_rel_error` when that error is relative), `memory`:
// the memory side's counters (one work unit, cold buffer, mxu/memory_side.hpp) and
// `io_lower_bound`: Theorem 12's external-memory bound where one is known (else a reason).
nlohmann::json run_tcu_once(const TcuAlgorithm& algo, const TcuProblem& problem, std::int64_t m,
                            std::int64_t latency, bool weak, CellMode cell_mode = CellMode::fp64,
                            const MxuMemoryParams& memory = {},
                            MxuExecutor executor = MxuExecutor::fused);

// The problem of a run of `cfg` at `size` (0: from the input) on `input` ("": generated),
// its messages naming the options.
TcuProblem tcu_problem(const TcuConfig& cfg, std::int64_t size, const std::string& input);

// The theorem's n for a run: details.theorem_n when the algorithm reports it (matmul:
// side^2), else the natural size.
double tcu_theorem_n(const nlohmann::json& details, std::int64_t size);

// Least-squares slope of log(y) against log(x) (needs >= 2 distinct x; NaN otherwise).
double fit_loglog_slope(const std::vector<double>& x, const std::vector<double>& y);

// Default sweep series of an algorithm: natural sizes for unit size m, and unit sizes.
std::vector<std::int64_t> tcu_default_sizes(const std::string& algo, std::int64_t m);
std::vector<std::int64_t> tcu_default_ms(const std::string& algo);

// Runs the configured job, prints the summary (or the sweep table) to `out`, writes the
// report. Returns the exit code: 0 verified, 4 if any result failed its check in fp64. In a
// lower-precision cell mode a failed check is expected: `verified` stays false in the
// report, the summary says "not verified (cell mode X computes in lower precision)" and the
// exit code is 0 (doc/precision.md).
// Collective over `comm`: a sweep's points are split over the ranks (round-robin by
// decreasing size), a single run is rank 0's; rank 0 prints to `out` and writes the report;
// the exit code is the same on every rank.
int run_tcu_job(const TcuConfig& cfg, MPI_Comm comm, std::ostream& out);
// The same, the report's text also in *report_text on rank 0, whether or not cfg.report
// names a file (which may be a target that cannot be read back: "-", a FIFO).
int run_tcu_job_keeping_report(const TcuConfig& cfg, MPI_Comm comm, std::ostream& out,
                               std::string* report_text);

}  // namespace triada
