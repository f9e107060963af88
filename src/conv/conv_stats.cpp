// The statistics of a convolution run: utilisation, the counters summed over unit ranges,
// the relative error against a reference and the energy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "conv/conv.hpp"
#include "core/error.hpp"

namespace triada {

namespace {
constexpr size_t kSummedCounters = 11;
}  // namespace

double ConvStats::utilisation() const {
  return macs_dense ? static_cast<double>(useful_macs) / static_cast<double>(macs_dense) : 0.0;
}

double ConvStats::effective_utilisation() const {
  // A call of r rows takes r S model time and could do r S^2 MACs: S MACs per time unit.
  const double capacity = static_cast<double>(model_time()) * static_cast<double>(side);
  return capacity > 0 ? static_cast<double>(useful_macs) / capacity : 0.0;
}

// The counters summed over unit ranges, in one fixed order (add_unit_stats, MPI sums).
std::vector<std::uint64_t> summed_counters(const ConvStats& s) {
  return {s.calls, s.rows,       s.cell_steps,  s.cycles,        s.tensor_time,  s.lowering_time,
          s.macs,  s.macs_dense, s.useful_macs, s.lowered_bytes, s.padding_bytes};
}

void set_summed_counters(ConvStats& s, const std::vector<std::uint64_t>& v) {
  if (v.size() != kSummedCounters)
    throw internal_error("set_summed_counters: wrong number of counters");
  s.calls = v[0], s.rows = v[1], s.cell_steps = v[2], s.cycles = v[3];
  s.tensor_time = v[4], s.lowering_time = v[5], s.macs = v[6], s.macs_dense = v[7];
  s.useful_macs = v[8], s.lowered_bytes = v[9], s.padding_bytes = v[10];
}

void add_unit_stats(ConvStats& total, const ConvStats& part) {
  std::vector<std::uint64_t> a = summed_counters(total);
  const std::vector<std::uint64_t> b = summed_counters(part);
  for (size_t i = 0; i < a.size(); ++i) a[i] += b[i];
  set_summed_counters(total, a);
  total.peak_extra_bytes = std::max(total.peak_extra_bytes, part.peak_extra_bytes);
}

double max_relative_error(const std::vector<double>& y, const std::vector<double>& ref) {
  if (y.size() != ref.size()) return std::numeric_limits<double>::infinity();
  double err = 0, scale = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (!std::isfinite(y[i])) return std::numeric_limits<double>::infinity();
    err = std::max(err, std::abs(y[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  if (scale == 0) return err == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return err / scale;
}

double conv_energy_pj(const ConvStats& s, double mac_pj, double static_pj_per_cell_step) {
  return static_cast<double>(s.macs) * mac_pj + static_cast<double>(s.cell_steps) *
                                                    static_cast<double>(s.side * s.side) *
                                                    static_pj_per_cell_step;
}

}  // namespace triada
