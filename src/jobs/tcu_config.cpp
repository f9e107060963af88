#include "jobs/tcu_config.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/mxu_option_values.hpp"
#include "mxu/memory_side.hpp"

namespace triada {

namespace {

// A unit size m of `option` (--m, or an item of --ms) is checked by building a unit (one
// rule, in TensorUnit's constructor), and against the memory side's buffer (which must hold
// the staging and one right tile).
void check_m(const std::string& option, std::int64_t m, const TcuConfig& c) {
  const TensorUnit probe = named(option, [&] { return TensorUnit(m, c.latency); });
  named((c.mesh.empty() ? "" : c.mesh + " with ") + option + " " + std::to_string(m),
        [&] { MemorySide memory(c.memory, probe.side()); });
}

// --sizes or --ms: positive integers (refused as the words of their values would be).
void check_list(const std::string& option, const std::vector<std::int64_t>& list) {
  for (const std::int64_t v : list)
    if (v < 1) parse_positive_list(option, spelled(list));
}

bool finite(const std::vector<double>& v) {
  for (const double x : v)
    if (!std::isfinite(x)) return false;
  return true;
}

// --product, --k, --kernel, --points: for their algorithms only, and in their ranges.
void check_parameters(const TcuConfig& c) {
  only_for(c.product != TcuProduct::fast || c.both_products, "--product", c.algo, {"spmm", "apsd"});
  only_for(c.sweeps != 0, "--k", c.algo, {"stencil"});
  only_for(!c.kernel.empty(), "--kernel", c.algo, {"stencil"});
  only_for(c.points != 0, "--points", c.algo, {"polyeval"});
  if (c.both_products && c.sweep)
    throw config_error(
        "--product both: runs one problem twice; give fast or classical with --sweep");
  if (c.sweeps < 0) parse_positive("--k", std::to_string(c.sweeps));
  if (!c.kernel.empty() && (c.kernel.size() != 9 || !finite(c.kernel)))
    parse_tcu_kernel(spelled(c.kernel));
  if (c.points < 0) parse_positive("--points", std::to_string(c.points));
  if (c.points != 0 && !c.input.empty())
    throw config_error("--points: polyeval reads its points from --input's /points; drop --points");
}

// A sweep generates its inputs over series of sizes; a single run needs its unit and size.
void check_run(const TcuConfig& c) {
  if (c.sweep) {
    if (!c.input.empty()) throw config_error("--sweep generates its inputs; drop --input");
    if (c.size != 0) throw config_error("--size is not used with --sweep (give --sizes a,b,c)");
  } else {
    if (!c.sizes.empty() || !c.ms.empty())
      throw config_error("--sizes and --ms are only used with --sweep");
    if (c.m == 0) throw config_error("missing --m (see --help)");
    if (c.size == 0 && c.input.empty()) throw config_error("missing --size (see --help)");
  }
}

}  // namespace

void validate(const TcuConfig& c) {
  if (c.algo.empty()) throw config_error("missing --algo (see --help)");
  named("--algo", [&] { find_tcu_algorithm(c.algo); });
  if (c.latency < 0) parse_latency(std::to_string(c.latency));
  if (c.seed > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    parse_seed(std::to_string(c.seed));
  if (c.size < 0) parse_positive("--size", std::to_string(c.size));
  if (c.m < 0) parse_positive("--m", std::to_string(c.m));
  if (c.m > 0) check_m("--m", c.m, c);
  check_list("--sizes", c.sizes);
  check_list("--ms", c.ms);
  for (const std::int64_t m : c.ms) check_m("--ms", m, c);
  check_parameters(c);
  check_run(c);
}

}  // namespace triada
