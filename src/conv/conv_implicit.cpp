// The implicit channel-first im2col method (Secs. III-V): no lowered matrix, the address
// generator stages the input's channel words tile by tile.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_internal.hpp"
#include "core/error.hpp"
#include "kernels/simd.hpp"

namespace triada {

using namespace conv_detail;

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

// The address generator's state of one row block: per row, (n, h_o s_h - p_top, w_o s_w - p_left).
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
    b.h[static_cast<size_t>(i)] = ho * l.stride_h - l.pad_top;
    b.w[static_cast<size_t>(i)] = wo * l.stride_w - l.pad_left;
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
      const index_t h = b.h[static_cast<size_t>(i)] + c.fh * l.dilation_h;
      double* to = arow + q * S;
      for (index_t j = 0; j < c.taps; ++j, to += c.cw) {
        const index_t wi = b.w[static_cast<size_t>(i)] + (c.fw0 + j) * l.dilation_w;
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

ConvResult implicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side();
  return whole_layer(implicit_conv_units(l, x, w, unit, 0, conv_work_units(l, S)), l, S);
}

}  // namespace triada
