#include "physical/band.hpp"

namespace triada {

namespace {

// The table of doc/physical.md §6.1, in order; at_corner applies each row.
const std::vector<BandConstant> kBand{
    {"MAC issue interval (fp64, fp32)", 1.98 / 3.74, 1.98 / 1.41, false,
     "optimistic: a published FMA's clock, 1.45 GHz at 32 nm (Kaul et al., ISSCC 2012, 10.3), "
     "3.74 GHz scaled to 7 nm; nominal: the H100's 1.98 GHz; pessimistic: the A100's "
     "1.41 GHz at 7 nm (19.5 TFLOP/s fp64 on 108 SMs, NVIDIA A100 datasheet)"},
    {"MAC energy (fp64)", 18.4 / 108.9, 43.7 / 36, false,
     "optimistic: Horowitz's 45 nm operations alone, 4 x (3.7 + 0.9) pJ, no clock, registers "
     "or leakage; nominal: FPMax's DP unit at 43.7 GFLOPS/W; pessimistic: FPMax's "
     "latency-optimised DP unit at 36 GFLOPS/W (Pu et al., abstract)"},
    {"chip.leakage_mw_per_mm2", 0.5, 2, false,
     "nominal: half of the H100's idle board power (~70 W) taken as its die's static power; "
     "optimistic a quarter, pessimistic all of it (assumptions)"},
    {"chip.clock_fraction", 0, 0.4, true,
     "optimistic: none beyond the MAC's own (FPMax's figures include its clock); nominal: a "
     "quarter (Duarte et al., IEEE TVLSI 10(6), 2002); pessimistic: 0.4 (assumption)"},
    {"memory.efficiency", 1, 0.83, true,
     "optimistic: the peak; nominal: 0.887, an H100's STREAM triad (2.97 of 3.35 TB/s); "
     "pessimistic: a V100's 750 of 900 GB/s (Jia et al., arXiv:1804.06826)"},
    {"memory.host_pj_per_bit", 0.5, 2, false,
     "the host's PHY, controller and on-die distribution: nominal 1 pJ/bit, of the order of "
     "HBM2's interface I/O (O'Connor et al., MICRO 2017); the corners assumptions"},
};

}  // namespace

const std::vector<BandConstant>& band_constants() {
  return kBand;
}

void at_corner(Corner c, CellMode mode, PhysicalParams& p, EnergyModel& em) {
  const auto v = [c](const BandConstant& b) {
    return c == Corner::optimistic ? b.optimistic : b.pessimistic;
  };
  const size_t m = static_cast<size_t>(mode);
  if (mode == CellMode::fp64 || mode == CellMode::fp32) {
    p.timing.mac_ps[m] *= v(kBand[0]);
    p.timing.mac_latency_ps[m] *= v(kBand[0]);
  }
  if (mode == CellMode::fp64) em[Counter::macs] *= v(kBand[1]);
  p.chip.leakage_mw_per_mm2 *= v(kBand[2]);
  p.chip.clock_fraction = v(kBand[3]);
  p.memory.efficiency = v(kBand[4]);
  p.memory.host_pj_per_bit *= v(kBand[5]);
}

PhysicalRange physical_range(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                             const EnergyModel& em, CellMode mode, bool complex_data, bool initial,
                             const PhysicalResult& nominal) {
  PhysicalRange out;
  out.seconds[1] = nominal.seconds;
  out.energy_j[1] = nominal.energy.total();
  for (const Corner c : {Corner::optimistic, Corner::pessimistic}) {
    PhysicalParams q = p;
    EnergyModel e = em;
    at_corner(c, mode, q, e);
    const PhysicalResult r = physical_model(plan, rc, q, e, mode, complex_data, initial);
    const size_t i = c == Corner::optimistic ? 0 : 2;
    out.seconds[i] = r.seconds;
    out.energy_j[i] = r.energy.total();
  }
  return out;
}

PhysicalResult with_range(const Plan& plan, const RunCounters& rc, const PhysicalParams& p,
                          const EnergyModel& em, CellMode mode, bool complex_data, bool initial) {
  PhysicalResult r = physical_model(plan, rc, p, em, mode, complex_data, initial);
  if (p.chip.modelled() || p.memory.modelled())
    r.range = physical_range(plan, rc, p, em, mode, complex_data, initial, r);
  return r;
}

}  // namespace triada
