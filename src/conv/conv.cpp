// The direct convolution (the methods' reference), the work units both methods share, and
// the helpers of conv_internal.hpp. The methods are conv_explicit.cpp and conv_implicit.cpp,
// their statistics conv_stats.cpp.
#include "conv/conv.hpp"

#include <algorithm>

#include "conv/conv_internal.hpp"
#include "core/error.hpp"

namespace triada {

using namespace conv_detail;

namespace conv_detail {

void check_operands(const ConvLayer& l, const std::vector<double>& x,
                    const std::vector<double>& w) {
  if (x.size() != l.ifmap_elements())
    throw internal_error("convolution: input has " + std::to_string(x.size()) +
                         " elements, the layer needs " + std::to_string(l.ifmap_elements()));
  if (w.size() != l.weight_elements())
    throw internal_error("convolution: weights have " + std::to_string(w.size()) +
                         " elements, the layer needs " + std::to_string(l.weight_elements()));
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

void check_unit_range(const ConvLayer& l, index_t side, index_t u0, index_t u1) {
  if (u0 < 0 || u0 > u1 || u1 > conv_work_units(l, side))
    throw internal_error("convolution: work units [" + std::to_string(u0) + ", " +
                         std::to_string(u1) + ") outside the layer's " +
                         std::to_string(conv_work_units(l, side)));
}

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

ConvResult whole_layer(ConvResult r, const ConvLayer& l, index_t side) {
  std::vector<double> nhwc(static_cast<size_t>(l.ofmap_elements()), 0.0);
  place_unit_blocks(l, side, 0, conv_work_units(l, side), r.output, nhwc);
  r.output = std::move(nhwc);
  return r;
}

}  // namespace conv_detail

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
      const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
      if (h < 0 || h >= l.H_I) continue;
      const double* xrow =
          x + ((n * l.H_I + h) * l.W_I + wo * l.stride_w - l.pad_left) * l.C_I + gi * Cg + c;
      const double* wr = wt + (c * l.H_F + fh) * l.W_F * kDirectLanes;
      for (index_t fw = 0; fw < l.W_F; ++fw, wr += kDirectLanes)
        for (index_t p = 0; p < kDirectPixels; ++p) {
          const double xv = xrow[(fw * l.dilation_w + p * l.stride_w) * l.C_I];
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
      const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
      if (h < 0 || h >= l.H_I) continue;
      const double* xrow = x + (n * l.H_I + h) * l.W_I * l.C_I + gi * Cg + c;
      const double* wr = wt + (c * l.H_F + fh) * l.W_F * kDirectLanes;
      for (index_t fw = 0; fw < l.W_F; ++fw, wr += kDirectLanes) {
        const index_t wi = wo * l.stride_w - l.pad_left + fw * l.dilation_w;
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
  const index_t lo = std::min(WO, ceil_div(l.pad_left, l.stride_w));
  const index_t last = l.W_I - 1 + l.pad_left - (l.W_F - 1) * l.dilation_w;
  const index_t hi = std::max(lo, std::min(WO, last < 0 ? 0 : last / l.stride_w + 1));
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
