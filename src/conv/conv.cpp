#include "conv/conv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "kernels/simd.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;
u64 u(index_t v) {
  return static_cast<u64>(v);
}

// Working memory of one method: every buffer it allocates registers here while it lives,
// so the peak is measured, not asserted from a formula.
class ScratchMeter {
 public:
  void add(u64 bytes) {
    current_ += bytes;
    peak_ = std::max(peak_, current_);
  }
  void remove(u64 bytes) { current_ -= bytes; }
  u64 peak() const { return peak_; }

 private:
  u64 current_ = 0, peak_ = 0;
};

// Bytes counted in the meter while this lives: a buffer of the method's, or the part of
// an executor's scratch that the method itself would hold (one tile of a batch).
class MeteredPart {
 public:
  MeteredPart(ScratchMeter& meter, u64 bytes) : meter_(meter), bytes_(bytes) { meter_.add(bytes_); }
  ~MeteredPart() { meter_.remove(bytes_); }
  MeteredPart(const MeteredPart&) = delete;
  MeteredPart& operator=(const MeteredPart&) = delete;

 private:
  ScratchMeter& meter_;
  u64 bytes_;
};

class ScratchBuffer {
 public:
  ScratchBuffer(ScratchMeter& meter, index_t count)
      : data_(static_cast<size_t>(count), 0.0), metered_(meter, data_.size() * sizeof(double)) {}
  double* data() { return data_.data(); }
  double& operator[](index_t i) { return data_[static_cast<size_t>(i)]; }

 private:
  std::vector<double> data_;
  MeteredPart metered_;
};

void check_operands(const ConvLayer& l, const std::vector<double>& x,
                    const std::vector<double>& w) {
  if (x.size() != l.ifmap_elements())
    throw internal_error("convolution: input has " + std::to_string(x.size()) +
                                " elements, the layer needs " + std::to_string(l.ifmap_elements()));
  if (w.size() != l.weight_elements())
    throw internal_error("convolution: weights have " + std::to_string(w.size()) +
                                " elements, the layer needs " +
                                std::to_string(l.weight_elements()));
}

// The unit's counters this method added.
void take_unit_cost(ConvStats& s, const TcuCost& before, const TcuCost& after) {
  s.calls = after.calls - before.calls;
  s.rows = after.rows - before.rows;
  s.cell_steps = after.cell_steps - before.cell_steps;
  s.cycles = after.cycles - before.cycles;
  s.tensor_time = after.tensor_time - before.tensor_time;
  s.lowering_time = after.cpu_time - before.cpu_time;
  s.macs = after.macs - before.macs;
  s.macs_dense = after.macs_dense - before.macs_dense;
}

}  // namespace

double ConvStats::utilisation() const {
  return macs_dense ? static_cast<double>(useful_macs) / static_cast<double>(macs_dense) : 0.0;
}

double ConvStats::effective_utilisation() const {
  // A call of r rows takes r S model time and could do r S^2 MACs: S MACs per time unit.
  const double capacity = static_cast<double>(model_time()) * static_cast<double>(side);
  return capacity > 0 ? static_cast<double>(useful_macs) / capacity : 0.0;
}

namespace {

// Register tile of the direct convolution: kDirectPixels output pixels along w_o by
// kDirectLanes output channels (24 accumulators, 12 SSE2 registers; 16 in all with the
// weights and the input word).
constexpr index_t kDirectPixels = 4, kDirectLanes = 6;

// The weights transposed per lane chunk: wt[((g chunks + oc) taps + t) lanes + k] is the
// weight of tap t = (c, h_f, w_f) of output channel oc lanes + k of group g (0 past C_O/g).
std::vector<double> direct_weights(const ConvLayer& l, const std::vector<double>& w) {
  const index_t COg = l.C_O_group(), taps = l.C_I_group() * l.H_F * l.W_F;
  const index_t chunks = ceil_div(COg, kDirectLanes);
  std::vector<double> wt(static_cast<size_t>(l.groups * chunks * taps * kDirectLanes), 0.0);
  for (index_t gi = 0; gi < l.groups; ++gi)
    for (index_t o = 0; o < COg; ++o)
      for (index_t t = 0; t < taps; ++t)
        wt[static_cast<size_t>(((gi * chunks + o / kDirectLanes) * taps + t) * kDirectLanes +
                               o % kDirectLanes)] =
            w[static_cast<size_t>((gi * COg + o) * taps + t)];
  return wt;
}

// Pixels (n, ho, wo .. wo + kDirectPixels - 1), all of whose taps lie inside the input
// along w, one lane chunk (wt at its first tap): the terms in the order (c, h_f, w_f).
void direct_tile(const ConvLayer& l, const double* x, const double* wt, index_t n, index_t ho,
                 index_t wo, index_t gi, double* out) {
  const index_t Cg = l.C_I_group();
  double a[kDirectPixels][kDirectLanes] = {};
  for (index_t c = 0; c < Cg; ++c)
    for (index_t fh = 0; fh < l.H_F; ++fh) {
      const index_t h = ho * l.stride - l.pad + fh * l.dilation;
      if (h < 0 || h >= l.H_I) continue;
      const double* xrow =
          x + ((n * l.H_I + h) * l.W_I + wo * l.stride - l.pad) * l.C_I + gi * Cg + c;
      const double* wr = wt + (c * l.H_F + fh) * l.W_F * kDirectLanes;
      for (index_t fw = 0; fw < l.W_F; ++fw, wr += kDirectLanes)
        for (index_t p = 0; p < kDirectPixels; ++p) {
          const double xv = xrow[(fw * l.dilation + p * l.stride) * l.C_I];
          for (index_t k = 0; k < kDirectLanes; ++k) a[p][k] += xv * wr[k];
        }
    }
  for (index_t p = 0; p < kDirectPixels; ++p)
    std::copy(a[p], a[p] + kDirectLanes, out + p * kDirectLanes);
}

// One pixel anywhere (the borders), the taps outside the input skipped as the plain loops do.
void direct_pixel(const ConvLayer& l, const double* x, const double* wt, index_t n, index_t ho,
                  index_t wo, index_t gi, double* out) {
  const index_t Cg = l.C_I_group();
  double a[kDirectLanes] = {};
  for (index_t c = 0; c < Cg; ++c)
    for (index_t fh = 0; fh < l.H_F; ++fh) {
      const index_t h = ho * l.stride - l.pad + fh * l.dilation;
      if (h < 0 || h >= l.H_I) continue;
      const double* xrow = x + (n * l.H_I + h) * l.W_I * l.C_I + gi * Cg + c;
      const double* wr = wt + (c * l.H_F + fh) * l.W_F * kDirectLanes;
      for (index_t fw = 0; fw < l.W_F; ++fw, wr += kDirectLanes) {
        const index_t wi = wo * l.stride - l.pad + fw * l.dilation;
        if (wi < 0 || wi >= l.W_I) continue;
        const double xv = xrow[wi * l.C_I];
        for (index_t k = 0; k < kDirectLanes; ++k) a[k] += xv * wr[k];
      }
    }
  std::copy(a, a + kDirectLanes, out);
}

// One output row (n, ho) of one lane chunk: interior tiles, single pixels at the borders.
void direct_row(const ConvLayer& l, const double* x, const double* wt, index_t n, index_t ho,
                index_t gi, index_t oc, double* y) {
  const index_t WO = l.W_O(), cols = std::min(kDirectLanes, l.C_O_group() - oc * kDirectLanes);
  // Columns [lo, hi) have every tap inside the input along w.
  const index_t lo = std::min(WO, ceil_div(l.pad, l.stride));
  const index_t last = l.W_I - 1 + l.pad - (l.W_F - 1) * l.dilation;
  const index_t hi = std::max(lo, std::min(WO, last < 0 ? 0 : last / l.stride + 1));
  double* yrow = y + (n * l.H_O() + ho) * WO * l.C_O + gi * l.C_O_group() + oc * kDirectLanes;
  double out[kDirectPixels * kDirectLanes];
  for (index_t wo = 0; wo < WO;) {
    const bool tile = wo >= lo && wo + kDirectPixels <= hi;
    if (tile)
      direct_tile(l, x, wt, n, ho, wo, gi, out);
    else
      direct_pixel(l, x, wt, n, ho, wo, gi, out);
    for (index_t p = 0; p < (tile ? kDirectPixels : 1); ++p)
      std::copy(out + p * kDirectLanes, out + p * kDirectLanes + cols, yrow + (wo + p) * l.C_O);
    wo += tile ? kDirectPixels : 1;
  }
}

}  // namespace

// The plain loops (n, o, h_o, w_o, c, h_f, w_f), reordered for speed without changing any
// output element's sum: register tiles of kDirectPixels output pixels by kDirectLanes output
// channels over the weights transposed per lane chunk (direct_weights). Every element still
// adds its terms one by one in the order (c, h_f, w_f) from 0.0, skipping the same taps, so
// the result is bitwise that of the seven loops (tests/unit/test_conv.cpp keeps them as the
// oracle of this one).
std::vector<double> direct_conv(const ConvLayer& l, const std::vector<double>& x,
                                const std::vector<double>& w) {
  check_operands(l, x, w);
  const std::vector<double> wt = direct_weights(l, w);
  const index_t taps = l.C_I_group() * l.H_F * l.W_F,
                chunks = ceil_div(l.C_O_group(), kDirectLanes);
  std::vector<double> y(static_cast<size_t>(l.ofmap_elements()), 0.0);
  for (index_t n = 0; n < l.N; ++n)
    for (index_t ho = 0; ho < l.H_O(); ++ho)
      for (index_t gi = 0; gi < l.groups; ++gi)
        for (index_t oc = 0; oc < chunks; ++oc)
          direct_row(l, x.data(), wt.data() + (gi * chunks + oc) * taps * kDirectLanes, n, ho, gi,
                     oc, y.data());
  return y;
}

// ---------------------------------------------------------------------------------------
// Work units

index_t conv_work_units(const ConvLayer& l, index_t side) {
  return l.groups * ceil_div(l.C_O_group(), side);
}

ConvUnitColumns conv_unit_columns(const ConvLayer& l, index_t side, index_t unit) {
  const index_t tiles = ceil_div(l.C_O_group(), side), COg = l.C_O_group();
  const index_t gi = unit / tiles, o0 = unit % tiles * side;
  return {gi, gi * COg + o0, std::min(side, COg - o0)};
}

std::uint64_t conv_unit_output_elements(const ConvLayer& l, index_t side, index_t u0, index_t u1) {
  std::uint64_t n = 0;
  for (index_t v = u0; v < u1; ++v) n += u(l.M()) * u(conv_unit_columns(l, side, v).count);
  return n;
}

std::uint64_t conv_unit_dense_macs(const ConvLayer& l, index_t side, bool is_explicit) {
  const u64 S = u(side), tile = S * S;
  if (is_explicit)  // Kgp / S calls of max(M, S) rows
    return u(round_up(l.K_group(), side)) / S * u(std::max(l.M(), side)) * tile;
  const index_t P = implicit_packed_taps(l, side);
  const index_t chunks = P > 1 ? 1 : ceil_div(l.C_I_group(), side);
  // a call of S rows per (row block, filter row, tap group, channel chunk)
  return u(ceil_div(l.M(), side)) * u(l.H_F) * u(ceil_div(l.W_F, P)) * u(chunks) * S * tile;
}

void place_unit_blocks(const ConvLayer& l, index_t side, index_t u0, index_t u1,
                       const std::vector<double>& blocks, std::vector<double>& nhwc) {
  if (blocks.size() != conv_unit_output_elements(l, side, u0, u1) ||
      nhwc.size() != l.ofmap_elements())
    throw internal_error("place_unit_blocks: sizes do not match the units");
  const double* b = blocks.data();
  for (index_t v = u0; v < u1; ++v) {
    const ConvUnitColumns c = conv_unit_columns(l, side, v);
    for (index_t m = 0; m < l.M(); ++m, b += c.count)
      std::copy(b, b + c.count, nhwc.data() + m * l.C_O + c.first);
  }
}

namespace {

constexpr size_t kSummedCounters = 11;

void check_unit_range(const ConvLayer& l, index_t side, index_t u0, index_t u1) {
  if (u0 < 0 || u0 > u1 || u1 > conv_work_units(l, side))
    throw internal_error("convolution: work units [" + std::to_string(u0) + ", " +
                                std::to_string(u1) + ") outside the layer's " +
                                std::to_string(conv_work_units(l, side)));
}

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
          const index_t h = ho * l.stride - l.pad + fh * l.dilation;
          if (h < 0 || h >= l.H_I) continue;
          for (index_t fw = 0; fw < l.W_F; ++fw) {
            const index_t wi = wo * l.stride - l.pad + fw * l.dilation;
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

// Rows [m0, m1) of the results of units v .. v + nt - 1, side by side in `wide` (unit j's
// columns from j S, row m at wide + (m - m0) ldc), copied to their output blocks, which
// start at `out` (each M x its columns). Returns where the next unit's block starts.
double* place_unit_rows(const ConvLayer& l, index_t S, index_t v, index_t nt, const double* wide,
                        index_t ldc, index_t m0, index_t m1, double* out) {
  for (index_t j = 0; j < nt; ++j) {
    const index_t cols = conv_unit_columns(l, S, v + j).count;
    for (index_t m = m0; m < std::min(m1, l.M()); ++m)
      std::copy_n(wide + (m - m0) * ldc + j * S, cols, out + m * cols);
    out += l.M() * cols;
  }
  return out;
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

index_t implicit_packed_taps(const ConvLayer& l, index_t side) {
  const index_t Cg = l.C_I_group();
  return Cg < side ? std::min(side / Cg, l.W_F) : 1;
}

std::uint64_t implicit_extra_bound_bytes(index_t side) {
  return 3 * u(side) * u(side) * 8;
}

namespace {

// The implicit method's blocking of one layer on an S x S unit.
// Call k of a row block: filter row fh, taps fw0 .. fw0 + taps - 1, channels c0 .. c0 + cw.
struct ImplicitCall {
  index_t fh, fw0, taps, c0, cw;
};
struct ImplicitPlan {
  index_t S, P;
  std::vector<ImplicitCall> calls;  // in call order (h_f, tap group, channel chunk)
  index_t calls_per_block() const { return static_cast<index_t>(calls.size()); }
};

ImplicitPlan implicit_plan(const ConvLayer& l, index_t S) {
  ImplicitPlan p{S, implicit_packed_taps(l, S), {}};
  const index_t Cg = l.C_I_group(), chunks = p.P > 1 ? 1 : ceil_div(Cg, S);
  for (index_t fh = 0; fh < l.H_F; ++fh)
    for (index_t fw0 = 0; fw0 < l.W_F; fw0 += p.P)
      for (index_t cc = 0; cc < chunks; ++cc)
        p.calls.push_back({fh, fw0, std::min(p.P, l.W_F - fw0), cc * S, std::min(S, Cg - cc * S)});
  return p;
}

// The right tiles of unit (gi, o0, cols), one S x S tile per call of a row block in call
// order (h_f, tap group, channel chunk): the B operand of Sec. III-B's 1x1 convolutions,
// P taps stacked when they share a call (Fig. 11). Packed once per unit: the unit's slice
// of the weights in tap order, what stays resident while its row blocks stream.
void pack_right_tiles(const ConvLayer& l, const std::vector<double>& w, const ImplicitPlan& p,
                      const ConvUnitColumns& u, std::vector<double>& B) {
  const index_t S = p.S, Cg = l.C_I_group();
  B.assign(static_cast<size_t>(p.calls_per_block() * S * S), 0.0);
  double* tile = B.data();
  for (const ImplicitCall& c : p.calls) {
    for (index_t j = 0; j < c.taps; ++j)
      for (index_t ch = 0; ch < c.cw; ++ch)
        for (index_t k = 0; k < u.count; ++k)
          tile[(j * c.cw + ch) * S + k] = w[static_cast<size_t>(
              (((u.first + k) * Cg + c.c0 + ch) * l.H_F + c.fh) * l.W_F + c.fw0 + j)];
    tile += S * S;
  }
}

// The address generator's state of one row block: per row, (n, h_o s - p, w_o s - p).
struct RowBlock {
  index_t m0 = 0, rows = 0;
  std::vector<index_t> n, h, w;
};

void start_row_block(const ConvLayer& l, index_t S, index_t m0, RowBlock& b) {
  const index_t HO = l.H_O(), WO = l.W_O();
  b.m0 = m0;
  b.rows = std::min(S, l.M() - m0);
  for (index_t i = 0; i < b.rows; ++i) {
    const index_t m = m0 + i, wo = m % WO, ho = m / WO % HO, n = m / (WO * HO);
    b.n[static_cast<size_t>(i)] = n;
    b.h[static_cast<size_t>(i)] = ho * l.stride - l.pad;
    b.w[static_cast<size_t>(i)] = wo * l.stride - l.pad;
  }
}

// The A staging tiles of a batch of calls side by side, so the batch goes to the unit as
// one grid of chains (TensorUnit::multiply_chains: by definition the same calls in the
// same order, so the same bits and counters): `links` calls of a row block (tile q at
// column q S, leading dimension links S), for `blocks` row blocks (rows b S ..; only when
// links covers every call of a block, so the order stays block by block). The method
// stages one A tile per call into one output tile: the meter counts those two; the rest of
// the batch (at most kBatchBytes of A) and the batch's output tiles are the executor's
// scratch, as the fused executor's own packing is.
class StagingBatch {
 public:
  // width: 0 for the call-by-call order above; else the columns of the fused runs (their
  // calls accounted apart, so any batch shape gives the same counters): a batch is then
  // shaped for the kernel's cache blocking instead, a depth of about one kernel chunk
  // (the packed B of that depth, up to 384 KiB, TensorUnit's fused executor) and as many
  // rows as keep their A and output tiles within kFusedBytes (both stay in L2 over the
  // batch), so each packed B chunk serves many rows.
  StagingBatch(ScratchMeter& meter, index_t S, index_t calls, index_t row_blocks, index_t width)
      : metered_(meter, calls > 0 ? 2 * u(S * S) * 8 : 0) {
    if (width > 0) {
      links_ =
          std::clamp<index_t>(kFusedChunkBytes / (width * 8) / S, 1, std::max<index_t>(calls, 1));
      const index_t row_bytes = (links_ * S + width) * 8;
      blocks_ = std::clamp<index_t>(kFusedBytes / row_bytes / S, 1, row_blocks);
    } else {
      const index_t tiles = std::max<index_t>(kBatchBytes / (S * S * 8), 1);
      links_ = std::clamp<index_t>(tiles, 1, std::max<index_t>(calls, 1));
      blocks_ = links_ < calls ? 1 : std::clamp<index_t>(tiles / links_, 1, row_blocks);
    }
    if (calls > 0) a_.resize(static_cast<size_t>(blocks_ * S * links_ * S));
  }
  index_t links() const { return links_; }
  index_t blocks() const { return blocks_; }
  double* a() { return a_.data(); }

 private:
  static constexpr index_t kBatchBytes = 1 << 21, kFusedChunkBytes = 384 << 10,
                           kFusedBytes = 512 << 10;
  MeteredPart metered_;  // one A tile and one output tile
  index_t links_ = 1, blocks_ = 1;
  std::vector<double> a_;
};

// The A staging tiles of calls k0 .. k0 + links - 1 of row block b, side by side (tile q
// at column q S of A, leading dimension lda): per row, per call, `taps` runs of cw channel
// words of the HWC(N) IFMap (Sec. III-A: a pixel's channels are one contiguous word),
// zeros where a tap falls in the padding, past the words and past the block's rows. Row by
// row, so both the pixels' channels and A's rows are read and written in order.
void stage_left_tiles(const ConvLayer& l, const std::vector<double>& x, const ImplicitPlan& p,
                      const RowBlock& b, index_t first_channel, index_t k0, index_t links,
                      double* A, index_t lda) {
  const index_t S = p.S;
  for (index_t i = 0; i < S; ++i) {
    double* arow = A + i * lda;
    if (i >= b.rows) {
      std::fill(arow, arow + links * S, 0.0);
      continue;
    }
    const index_t n = b.n[static_cast<size_t>(i)];
    for (index_t q = 0; q < links; ++q) {
      const ImplicitCall& c = p.calls[static_cast<size_t>(k0 + q)];
      const index_t h = b.h[static_cast<size_t>(i)] + c.fh * l.dilation;
      double* to = arow + q * S;
      for (index_t j = 0; j < c.taps; ++j, to += c.cw) {
        const index_t wi = b.w[static_cast<size_t>(i)] + (c.fw0 + j) * l.dilation;
        if (h < 0 || h >= l.H_I || wi < 0 || wi >= l.W_I) {
          std::fill(to, to + c.cw, 0.0);
          continue;
        }
        simd::copy_short(x.data() + ((n * l.H_I + h) * l.W_I + wi) * l.C_I + first_channel + c.c0,
                         to, c.cw);
      }
      std::fill(to, arow + (q + 1) * S, 0.0);
    }
  }
}

// A run of units of one group whose calls go to the unit together: units first .. first +
// count - 1, their output blocks from `out`, their right tiles side by side (tile k of
// unit j at rows k S, columns j S; ldb = count S).
struct ImplicitRun {
  index_t first = 0, count = 0;
  double* out = nullptr;
  std::vector<double> B;
};

// Row blocks m0 / S .. of a run, `blocks` of them (batch.blocks() at most): their calls in
// (h_f, tap group, chunk) order, call k with right tile k, accumulating in each block's
// output tiles, staged and run a batch at a time; then the blocks' rows copied to the
// units' output blocks. `fused`: the products only (run_chains, the run's calls accounted
// before), every unit of the run at once; else the run is one unit and its calls go
// through multiply_chains.
void implicit_row_blocks(const ConvLayer& l, const std::vector<double>& x, const ImplicitPlan& p,
                         const ImplicitRun& run, index_t m0, index_t blocks, TensorUnit& unit,
                         bool fused, StagingBatch& batch, RowBlock& b, std::vector<double>& C) {
  const index_t S = p.S, lda = batch.links() * S, nt = run.count, ldb = nt * S;
  const index_t c0 = conv_unit_columns(l, S, run.first).group * l.C_I_group();
  C.resize(static_cast<size_t>(blocks * S * ldb));
  for (index_t k0 = 0; k0 < p.calls_per_block(); k0 += batch.links()) {
    const index_t links = std::min(batch.links(), p.calls_per_block() - k0);
    for (index_t bb = 0; bb < blocks; ++bb) {
      start_row_block(l, S, m0 + bb * S, b);
      stage_left_tiles(l, x, p, b, c0, k0, links, batch.a() + bb * S * lda, lda);
    }
    const double* Bk = run.B.data() + k0 * S * ldb;
    if (fused)
      unit.run_chains(S, batch.a(), lda, Bk, ldb, C.data(), ldb, links, {blocks, nt}, k0 > 0);
    else
      unit.multiply_chains(S, batch.a(), lda, Bk, ldb, C.data(), ldb, links, {blocks, 1}, k0 > 0);
  }
  place_unit_rows(l, S, run.first, nt, C.data(), ldb, m0, m0 + blocks * S, run.out);
}

// Units v .. of one group, at most `most`, below u1: the next run's length.
index_t run_length(const ConvLayer& l, index_t S, index_t v, index_t u1, index_t most) {
  const index_t group = conv_unit_columns(l, S, v).group;
  index_t n = 1;
  while (n < most && v + n < u1 && conv_unit_columns(l, S, v + n).group == group) ++n;
  return n;
}

}  // namespace

// Implicit channel-first im2col. A work unit is one C_O tile of S columns of one group; its
// right tiles are packed once and its row blocks (S rows of N H_O W_O) stream through them
// (weight-stationary). Each output block is the block-level form of Sec. V / Fig. 12: it is
// finished before the next, no partial sums leave the unit's output tile. For each block
// the decomposed 1x1 filters (h_f, w_f) (Sec. III-B) and chunks of S input channels give
// one call each: the address generator reads, per row, the input pixel
// (n, h_o s - p + h_f d, w_o s - p + w_f d) as one channel word (Sec. III-A) into the A
// staging tile; the call accumulates into the output tile. Stride and dilation only change
// the addresses (Fig. 8). With C_I < S, P = min(S / C_I, W_F) taps of one filter row share a
// call (multi-tile, Sec. IV-B, Fig. 11).
ConvResult implicit_conv_units(const ConvLayer& l, const std::vector<double>& x,
                               const std::vector<double>& w, TensorUnit& unit, index_t u0,
                               index_t u1) {
  check_operands(l, x, w);
  const index_t S = unit.side();
  check_unit_range(l, S, u0, u1);
  const ImplicitPlan p = implicit_plan(l, S);
  const TcuCost before = unit.cost();
  ScratchMeter meter;
  ConvResult res;
  res.output.assign(conv_unit_output_elements(l, S, u0, u1), 0.0);

  const bool fused = unit.fuses_chains();
  const index_t run_width = std::min(unit.grid_col_blocks(), ceil_div(l.C_O_group(), S)) * S;
  const index_t row_blocks = ceil_div(l.M(), S), calls = p.calls_per_block();
  StagingBatch batch(meter, S, u1 > u0 ? calls : 0, row_blocks, fused ? run_width : 0);
  RowBlock b{0, 0, std::vector<index_t>(static_cast<size_t>(S)),
             std::vector<index_t>(static_cast<size_t>(S)),
             std::vector<index_t>(static_cast<size_t>(S))};
  // The fp64 fused executor takes a run of units (up to a grid's columns) at once: their
  // calls accounted first, unit by unit in the order of the loop over units (a cold
  // buffer, then each row block's chain of calls), then their products on the right tiles
  // side by side, each batch of A staged once for the whole run. The same bits (each
  // output its own chain over the same depth) and counters (the same calls in the same
  // order); A staged once per run instead of once per unit. Other executors: one unit.
  // A unit's tiles are packed contiguous (accounted there: a unit's strip of the run's B,
  // its rows nt S words apart, would fall into a few cache sets), then copied to its strip.
  ImplicitRun run{u0, 0, res.output.data(), {}};
  std::vector<double> C;    // the batch's output tiles, the run's units side by side
  std::vector<double> own;  // one unit's right tiles
  for (index_t v = u0; v < u1; v += run.count) {
    run.out += conv_unit_output_elements(l, S, run.first, v);
    run.first = v;
    run.count = fused ? run_length(l, S, v, u1, unit.grid_col_blocks()) : 1;
    const index_t ldb = run.count * S;
    run.B.resize(static_cast<size_t>(calls * S * ldb));
    for (index_t j = 0; j < run.count; ++j) {
      unit.start_work_unit();
      pack_right_tiles(l, w, p, conv_unit_columns(l, S, v + j), own);
      if (fused) unit.account_chains(S, own.data(), S, calls, {row_blocks, 1});
      for (index_t t = 0; t < calls * S; ++t)
        std::copy_n(own.data() + t * S, S, run.B.data() + t * ldb + j * S);
    }
    for (index_t m0 = 0; m0 < l.M(); m0 += batch.blocks() * S)
      implicit_row_blocks(l, x, p, run, m0, std::min(batch.blocks(), ceil_div(l.M() - m0, S)), unit,
                          fused, batch, b, C);
  }

  ConvStats& s = res.stats;
  s.method = "implicit";
  s.side = S;
  take_unit_cost(s, before, unit.cost());
  s.useful_macs = conv_unit_output_elements(l, S, u0, u1) * u(l.K_group());
  s.packed_taps = p.P;
  s.peak_extra_bytes = meter.peak();
  if (s.peak_extra_bytes > implicit_extra_bound_bytes(S))
    throw internal_error("implicit convolution: working memory above three S x S tiles");
  return res;
}

namespace {

ConvResult whole_layer(ConvResult r, const ConvLayer& l, index_t side) {
  std::vector<double> nhwc(static_cast<size_t>(l.ofmap_elements()), 0.0);
  place_unit_blocks(l, side, 0, conv_work_units(l, side), r.output, nhwc);
  r.output = std::move(nhwc);
  return r;
}

}  // namespace

ConvResult explicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side();
  return whole_layer(explicit_conv_units(l, x, w, unit, 0, conv_work_units(l, S)), l, S);
}

ConvResult implicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side();
  return whole_layer(implicit_conv_units(l, x, w, unit, 0, conv_work_units(l, S)), l, S);
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

std::vector<double> nchw_to_nhwc(const std::vector<double>& x, index_t n, index_t c, index_t h,
                                 index_t w) {
  std::vector<double> y(x.size());
  for (index_t a = 0; a < n; ++a)
    for (index_t b = 0; b < c; ++b)
      for (index_t i = 0; i < h; ++i)
        for (index_t j = 0; j < w; ++j)
          y[static_cast<size_t>(((a * h + i) * w + j) * c + b)] =
              x[static_cast<size_t>(((a * c + b) * h + i) * w + j)];
  return y;
}

std::vector<double> random_tensor(std::uint64_t count, std::uint64_t seed, std::uint64_t stream) {
  const auto mix = [](std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  const std::uint64_t key = mix(seed + 0x9E3779B97F4A7C15ull * (mix(stream + 1) | 1));
  std::vector<double> v(static_cast<size_t>(count));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t z = mix(key + (i + 1) * 0x9E3779B97F4A7C15ull);
    v[static_cast<size_t>(i)] = static_cast<double>(z >> 11) * 0x1.0p-52 - 1.0;
  }
  return v;
}

}  // namespace triada
