// The explicit im2col method (Sec. II-A): the lowered matrix times the filter matrix.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_internal.hpp"
#include "core/error.hpp"

namespace triada {

using namespace conv_detail;

namespace {

// Rows [m0, m1) of the lowered matrix for groups [g0, g1), row m at L + (m - m0) ldL: row
// m = (n, h_o, w_o) holds its receptive field, columns (c, h_f, w_f) within a group, w_f
// fastest (Fig. 6 left). Writes only the field's taps inside the IFMap (L holds zeros).
void lower_groups(const ConvLayer& l, const std::vector<double>& x, index_t g0, index_t g1,
                  index_t Kgp, index_t m0, index_t m1, double* L) {
  const index_t HO = l.H_O(), WO = l.W_O(), Cg = l.C_I_group(), ldL = l.groups * Kgp;
  for (index_t m = m0; m < std::min(m1, l.M()); ++m) {
    const index_t n = m / (HO * WO), ho = m / WO % HO, wo = m % WO;
    double* row = L + (m - m0) * ldL;
    for (index_t gi = g0; gi < g1; ++gi)
      for (index_t c = 0; c < Cg; ++c)
        for (index_t fh = 0; fh < l.H_F; ++fh) {
          const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
          if (h < 0 || h >= l.H_I) continue;
          for (index_t fw = 0; fw < l.W_F; ++fw) {
            const index_t wi = wo * l.stride_w - l.pad_left + fw * l.dilation_w;
            if (wi < 0 || wi >= l.W_I) continue;
            row[gi * Kgp + (c * l.H_F + fh) * l.W_F + fw] =
                x[static_cast<size_t>(((n * l.H_I + h) * l.W_I + wi) * l.C_I + gi * Cg + c)];
          }
        }
  }
}

// The filter matrix of groups [g0, g1), Kgp x COgp each: F[(c, fh, fw)][o] = w[o][c][fh][fw].
// A transpose, eight filters at a time: eight rows of w read in order, each row of F
// written eight words at a time (one filter at a time would write a word per row of F).
void filter_groups(const ConvLayer& l, const std::vector<double>& w, index_t g0, index_t g1,
                   index_t Kgp, index_t COgp, ScratchBuffer& F) {
  constexpr index_t kFilters = 8;
  const index_t COg = l.C_O_group(), Kg = l.K_group();
  for (index_t gi = g0; gi < g1; ++gi)
    for (index_t o0 = 0; o0 < COg; o0 += kFilters) {
      const index_t o1 = std::min(COg, o0 + kFilters);
      for (index_t k = 0; k < Kg; ++k)
        for (index_t o = o0; o < o1; ++o)
          F[(gi * Kgp + k) * COgp + o] = w[static_cast<size_t>((gi * COg + o) * Kg + k)];
    }
}

// What the explicit method's GEMM reads and writes for the units of one range.
struct ExplicitOperands {
  const ConvLayer& l;
  const std::vector<double>& x;
  const double* F;            // the filter matrix, g Kgp x COgp
  index_t g0, g1, Kgp, COgp;  // the groups lowered, their padded depth and width
  index_t run_tiles;          // C_O tiles per grid of chains
  double* out;                // the range's output blocks
};

// One run of C_O tiles of a group, units v .. v + nt - 1: its columns of the lowered
// matrix start at column `lowered_col`, its right tiles at `right` (leading dimension COgp).
struct ExplicitRun {
  index_t v, nt, lowered_col;
  const double* right;
};
// The runs covering units [u0, u1), in order: each up to run_tiles tiles of one group.
std::vector<ExplicitRun> explicit_runs(const ExplicitOperands& op, index_t S, index_t u0,
                                       index_t u1) {
  const index_t tiles = op.COgp / S;
  std::vector<ExplicitRun> runs;
  for (index_t v = u0; v < u1; v += runs.back().nt) {
    const index_t gi = v / tiles, ot = v % tiles;
    runs.push_back({v, std::min({op.run_tiles, tiles - ot, u1 - v}), gi * op.Kgp,
                    op.F + gi * op.Kgp * op.COgp + ot * S});
  }
  return runs;
}

// The lowered matrix whole, each run through multiply_chains (every executor).
void explicit_whole(const ExplicitOperands& op, TensorUnit& unit, index_t u0, index_t u1) {
  if (u1 == u0) return;
  const index_t S = unit.side(), Mp = std::max(op.l.M(), S), ldL = op.l.groups * op.Kgp;
  std::vector<double> L(static_cast<size_t>(Mp * ldL), 0.0);
  lower_groups(op.l, op.x, op.g0, op.g1, op.Kgp, 0, Mp, L.data());
  std::vector<double> wide(static_cast<size_t>(Mp * op.run_tiles * S));
  double* out = op.out;
  for (const ExplicitRun& run : explicit_runs(op, S, u0, u1)) {
    unit.multiply_chains(Mp, L.data() + run.lowered_col, ldL, run.right, op.COgp, wide.data(),
                         run.nt * S, op.Kgp / S, {1, run.nt, true});
    out = place_unit_rows(op.l, S, run.v, run.nt, wide.data(), run.nt * S, 0, Mp, out);
  }
}

// The fp64 fused executor: every run's calls accounted first, in the order above; then the
// lowered matrix built and multiplied a slab of rows at a time (about kSlabBytes, so it is
// multiplied from the cache it was written to, not from memory; at least kMinRows, as
// each slab's product reads and packs the filter matrix again). Every output is its own
// chain over the same depth and the MACs a sum over rows: the same bits and counters.
void explicit_slabs(const ExplicitOperands& op, TensorUnit& unit, index_t u0, index_t u1) {
  constexpr index_t kSlabBytes = 4 << 20, kMinRows = 512;
  const index_t S = unit.side(), Mp = std::max(op.l.M(), S), ldL = op.l.groups * op.Kgp;
  const std::vector<ExplicitRun> runs = explicit_runs(op, S, u0, u1);
  for (const ExplicitRun& run : runs)
    unit.account_chains(Mp, run.right, op.COgp, op.Kgp / S, {1, run.nt, true});
  if (u1 == u0) return;
  const index_t R = std::min(Mp, std::max(kMinRows, round_up(kSlabBytes / (ldL * 8), S)));
  std::vector<double> slab(static_cast<size_t>(R * ldL)),
      wide(static_cast<size_t>(R * op.run_tiles * S));
  for (index_t m0 = 0; m0 < Mp; m0 += R) {
    const index_t r = std::min(R, Mp - m0);
    std::fill(slab.begin(), slab.begin() + r * ldL, 0.0);
    lower_groups(op.l, op.x, op.g0, op.g1, op.Kgp, m0, m0 + r, slab.data());
    double* out = op.out;
    for (const ExplicitRun& run : runs) {
      unit.run_chains(r, slab.data() + run.lowered_col, ldL, run.right, op.COgp, wide.data(),
                      run.nt * S, op.Kgp / S, {1, run.nt});
      out = place_unit_rows(op.l, S, run.v, run.nt, wide.data(), run.nt * S, m0, m0 + r, out);
    }
  }
}

}  // namespace

// Explicit im2col (Sec. II-A, Fig. 1): the lowered matrix Mp x (g Kgp) and the filter matrix
// per group Kgp x COgp, zero-padded to multiples of S where the unit needs whole tiles (that
// padding is counted apart from the lowered bytes). The lowering is per layer (every range
// lowers the groups it needs; the model charges it once, to the range holding unit 0);
// the GEMM is per unit: its depth chunks of S, one call of Mp rows each, accumulating.
ConvResult explicit_conv_units(const ConvLayer& l, const std::vector<double>& x,
                               const std::vector<double>& w, TensorUnit& unit, index_t u0,
                               index_t u1) {
  check_operands(l, x, w);
  const index_t S = unit.side();
  check_unit_range(l, S, u0, u1);
  const index_t g = l.groups, COg = l.C_O_group(), M = l.M(), Kg = l.K_group();
  const index_t Mp = std::max(M, S);  // a call streams r >= S rows
  const index_t Kgp = round_up(Kg, S), COgp = round_up(COg, S), ldL = g * Kgp;
  const TcuCost before = unit.cost();
  ScratchMeter meter;
  ConvResult res;
  res.output.assign(conv_unit_output_elements(l, S, u0, u1), 0.0);
  const index_t tiles = COgp / S, g0 = u0 / tiles, g1 = u1 > u0 ? (u1 - 1) / tiles + 1 : g0;
  const bool whole = u0 == 0 && u1 > 0;  // this range carries the per-layer terms

  // The lowering pass in the model: the IFMap read once, every lowered element written.
  if (whole) unit.cpu(l.ifmap_elements() + u(M) * u(g) * u(Kg));
  // The method holds the whole lowered matrix (its footprint); the fused executor's
  // simulation of it needs only a slab at a time (explicit_slabs).
  const MeteredPart lowered(meter, u1 > u0 ? u(Mp * ldL) * 8 : 0);
  ScratchBuffer F(meter, u1 > u0 ? g * Kgp * COgp : 0);
  filter_groups(l, w, g0, g1, Kgp, COgp, F);
  // The method's padded output block (when C_O / groups is not whole tiles, or M < S): one
  // tile of the results' buffer.
  const bool direct_out = COg % S == 0 && M >= S;
  const MeteredPart padded_out(meter, direct_out || u1 == u0 ? 0 : u(Mp * S) * 8);

  // Units run a group's run of C_O tiles at a time as one grid of chains (each tile a work
  // unit: the same calls, in the same order, as a loop over the units), up to kGridColumns
  // columns, so the lowered matrix is read once per run.
  const index_t run_tiles = std::min(unit.grid_col_blocks(), tiles);
  const ExplicitOperands op{l, x, F.data(), g0, g1, Kgp, COgp, run_tiles, res.output.data()};
  if (unit.fuses_chains())
    explicit_slabs(op, unit, u0, u1);
  else
    explicit_whole(op, unit, u0, u1);

  ConvStats& s = res.stats;
  s.method = "explicit";
  s.side = S;
  take_unit_cost(s, before, unit.cost());
  s.useful_macs = conv_unit_output_elements(l, S, u0, u1) * u(Kg);
  if (whole) {
    s.lowered_bytes = l.lowered_bytes();
    s.padding_bytes = (u(Mp * ldL) - u(M) * u(g) * u(Kg)) * 8 +
                      (u(g * Kgp * COgp) - l.weight_elements()) * 8 +
                      (direct_out ? 0 : (u(Mp) * u(g * COgp) - l.ofmap_elements()) * 8);
  }
  s.peak_extra_bytes = meter.peak();
  return res;
}

ConvResult explicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side();
  return whole_layer(explicit_conv_units(l, x, w, unit, 0, conv_work_units(l, S)), l, S);
}

}  // namespace triada
