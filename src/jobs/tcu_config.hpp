#pragma once
// What a TCU run is (doc/design.md §10.6): the configuration the job takes (jobs/tcu_job.hpp)
// and its checks; triada-tcu builds it from its command line, the Python module from its
// arguments.
#include <cstdint>
#include <string>
#include <vector>

#include "counters/progress.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_arrays.hpp"
#include "mxu/tensor_unit.hpp"
#include "physical/mxu_memory.hpp"
#include "precision/cell_mode.hpp"

namespace triada {

struct TcuConfig {
  std::string algo;
  std::int64_t size = 0;  // 0: from --input (single run) or the sweep's series
  std::int64_t m = 0;     // 0: not given
  std::int64_t latency = 0;
  std::uint64_t seed = 1;
  std::string input;   // HDF5 input of the algorithm (--help lists the datasets)
  bool weak = false;   // weak TCU model (Theorem 12): calls with r = sqrt(m) only
  std::string report;  // JSON report path ("" = none)
  bool force = false;  // --force: replace an existing report
  bool sweep = false;
  std::vector<std::int64_t> sizes;            // --sizes (sweep), empty = the algorithm's default
  std::vector<std::int64_t> ms;               // --ms (sweep), empty = --m or the default series
  CellMode cell_mode = CellMode::fp64;        // --cell-mode: the unit's cell arithmetic
  std::string mesh;                           // --mesh: INI whose [mxu] keys give the memory side
  MxuMemoryParams memory;                     // [mxu] of --mesh (built-in defaults without it)
  MxuExecutor executor = MxuExecutor::fused;  // --executor
  TcuProduct product = TcuProduct::fast;      // --product (spmm, apsd)
  bool both_products = false;                 // --product both: the other one runs too
  std::int64_t sweeps = 0;                    // --k (stencil), 0 = the default k
  std::vector<double> kernel;                 // --kernel (stencil), empty = the default
  std::int64_t points = 0;                    // --points (polyeval), 0 = p = n
  ProgressMode progress = ProgressMode::automatic;  // --progress (counters/progress.hpp)
  std::string command_line;  // the words of the run, shell-quoted (report/provenance.hpp)
  // Not an option (the library's callers): --input's datasets in memory, by path ("/A"),
  // read instead of a file's (mxu/tcu_arrays.hpp); `input` then only names them.
  tcu_in::MemoryDatasets arrays;
};

// Refuses a config triada-tcu would refuse: a value out of its range, an unknown algorithm,
// a unit size m that is no unit (or whose tile the [mxu] buffer cannot hold), an
// algorithm's parameter given to another, the rules of --sweep and of a single run.
// config_error with the program's message (options named as --name), checks in its order.
void validate(const TcuConfig& c);

}  // namespace triada
