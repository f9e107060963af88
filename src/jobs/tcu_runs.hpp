#pragma once
// The parts of the TCU job (jobs/tcu_job.hpp) that its tests and tools call alone: one run
// of an algorithm with its report object, a run's problem, the sweep's series and fit.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "jobs/tcu_config.hpp"
#include "jobs/tcu_job.hpp"
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
// `product`, if given, receives the product the algorithm computed (matmul, strassen; else
// it is left as it is) with the unit's cost.
nlohmann::json run_tcu_once(const TcuAlgorithm& algo, const TcuProblem& problem, std::int64_t m,
                            std::int64_t latency, bool weak, CellMode cell_mode = CellMode::fp64,
                            const MxuMemoryParams& memory = {},
                            MxuExecutor executor = MxuExecutor::fused,
                            TcuMatrixProduct* product = nullptr);

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

}  // namespace triada
