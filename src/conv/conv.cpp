#include "conv/conv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace triada {

namespace {

using u64 = std::uint64_t;
u64 u(index_t v) {
  return static_cast<u64>(v);
}
index_t round_up(index_t v, index_t s) {
  return (v + s - 1) / s * s;
}
index_t ceil_div(index_t v, index_t s) {
  return (v + s - 1) / s;
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

class ScratchBuffer {
 public:
  ScratchBuffer(ScratchMeter& meter, index_t count)
      : meter_(meter), data_(static_cast<size_t>(count), 0.0) {
    meter_.add(bytes());
  }
  ~ScratchBuffer() { meter_.remove(bytes()); }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  double* data() { return data_.data(); }
  double& operator[](index_t i) { return data_[static_cast<size_t>(i)]; }
  void zero() { std::fill(data_.begin(), data_.end(), 0.0); }
  u64 bytes() const { return data_.size() * sizeof(double); }

 private:
  ScratchMeter& meter_;
  std::vector<double> data_;
};

void check_operands(const ConvLayer& l, const std::vector<double>& x,
                    const std::vector<double>& w) {
  if (x.size() != l.ifmap_elements())
    throw std::invalid_argument("convolution: input has " + std::to_string(x.size()) +
                                " elements, the layer needs " + std::to_string(l.ifmap_elements()));
  if (w.size() != l.weight_elements())
    throw std::invalid_argument("convolution: weights have " + std::to_string(w.size()) +
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

// Explicit im2col (Sec. II-A, Fig. 1). The lowered row of output pixel m = (n, h_o, w_o)
// holds its receptive field; within a group the columns run (c, h_f, w_f), w_f fastest
// (the classical channel-last order, Fig. 6 left), so the filter matrix is the OIHW weights
// transposed. Both are padded with zero columns/rows to multiples of S where the unit needs
// whole tiles; that padding is counted apart from the lowered bytes.
ConvResult explicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  check_operands(l, x, w);
  const index_t S = unit.side(), g = l.groups, Cg = l.C_I_group(), COg = l.C_O_group();
  const index_t HO = l.H_O(), WO = l.W_O(), M = l.M(), Kg = l.K_group();
  const index_t Mp = std::max(M, S);  // a call streams r >= S rows
  const index_t Kgp = round_up(Kg, S), COgp = round_up(COg, S);
  const TcuCost before = unit.cost();
  ScratchMeter meter;
  ConvResult res;
  res.output.assign(static_cast<size_t>(l.ofmap_elements()), 0.0);

  // 1. Materialize the lowered matrix, Mp x (g Kgp), zero where padding or past the input.
  const index_t ldL = g * Kgp;
  ScratchBuffer L(meter, Mp * ldL);
  for (index_t n = 0; n < l.N; ++n)
    for (index_t ho = 0; ho < HO; ++ho)
      for (index_t wo = 0; wo < WO; ++wo) {
        const index_t m = (n * HO + ho) * WO + wo;
        for (index_t gi = 0; gi < g; ++gi)
          for (index_t c = 0; c < Cg; ++c)
            for (index_t fh = 0; fh < l.H_F; ++fh) {
              const index_t h = ho * l.stride - l.pad + fh * l.dilation;
              if (h < 0 || h >= l.H_I) continue;
              for (index_t fw = 0; fw < l.W_F; ++fw) {
                const index_t wi = wo * l.stride - l.pad + fw * l.dilation;
                if (wi < 0 || wi >= l.W_I) continue;
                L[m * ldL + gi * Kgp + (c * l.H_F + fh) * l.W_F + fw] =
                    x[static_cast<size_t>(((n * l.H_I + h) * l.W_I + wi) * l.C_I + gi * Cg + c)];
              }
            }
      }
  // The lowering pass in the model: it reads the IFMap once and writes every lowered
  // element, one unit each (the TCU model's CPU unit, TensorUnit::cpu).
  unit.cpu(l.ifmap_elements() + u(M) * u(g) * u(Kg));

  // 2. The filter matrix per group, Kgp x COgp: F[(c, fh, fw)][o] = w[o][c][fh][fw].
  ScratchBuffer F(meter, g * Kgp * COgp);
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t o = 0; o < COg; ++o)
      for (index_t k = 0; k < Kg; ++k)
        F[(gi * Kgp + k) * COgp + o] = w[static_cast<size_t>((gi * COg + o) * Kg + k)];

  // 3. GEMM on the unit: per group, C_O tile of S columns and depth chunk of S, one call of
  // Mp rows, accumulating over the depth chunks (one chain of calls per tile). The result lands in
  // the output directly when its tiles are whole, else in a padded block that is copied out.
  const bool direct_out = COg % S == 0 && M >= S;
  const index_t ldC = direct_out ? l.C_O : g * COgp;
  ScratchBuffer Cpad(meter, direct_out ? 0 : Mp * ldC);
  double* C = direct_out ? res.output.data() : Cpad.data();
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t ot = 0; ot < COgp / S; ++ot)
      unit.multiply_chain(Mp, L.data() + gi * Kgp, ldL, F.data() + gi * Kgp * COgp + ot * S, COgp,
                          C + (direct_out ? gi * COg : gi * COgp) + ot * S, ldC, Kgp / S);
  if (!direct_out)
    for (index_t m = 0; m < M; ++m)
      for (index_t gi = 0; gi < g; ++gi)
        for (index_t o = 0; o < COg; ++o)
          res.output[static_cast<size_t>(m * l.C_O + gi * COg + o)] = Cpad[m * ldC + gi * COgp + o];

  ConvStats& s = res.stats;
  s.method = "explicit";
  s.side = S;
  take_unit_cost(s, before, unit.cost());
  s.useful_macs = l.macs();
  s.lowered_bytes = l.lowered_bytes();
  s.padding_bytes = (u(Mp * ldL) - u(M) * u(g) * u(Kg)) * 8 +
                    (u(g * Kgp * COgp) - l.weight_elements()) * 8 +
                    (direct_out ? 0 : (u(Mp * ldC) - l.ofmap_elements()) * 8);
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

// Implicit channel-first im2col. For each output block (S rows of N H_O W_O, S columns of
// C_O: the block-level form of Sec. V / Fig. 12, so every block is finished before the next
// and no partial sums leave the unit's output tile), iterate over the decomposed 1x1 filters
// (h_f, w_f) (Sec. III-B) and over chunks of S input channels: the address generator reads,
// for each row of the block, the input pixel (n, h_o s - p + h_f d, w_o s - p + w_f d) as
// one channel word of the HWC(N) IFMap (Sec. III-A: a deterministic cell per channel, no
// crossbar) into the A staging tile; B is the C_I x C_O slice of tap (h_f, w_f); the call
// accumulates into the output tile. Stride and dilation only change the addresses
// (Sec. III-B, Fig. 8). With C_I < S, P = min(S / C_I, W_F) taps of one filter row share a
// call (multi-tile, Sec. IV-B, Fig. 11): the staged row holds P channel words side by side,
// B stacks the P slices.
ConvResult implicit_conv(const ConvLayer& l, const std::vector<double>& x,
                         const std::vector<double>& w, TensorUnit& unit) {
  check_operands(l, x, w);
  const index_t S = unit.side(), g = l.groups, Cg = l.C_I_group(), COg = l.C_O_group();
  const index_t HO = l.H_O(), WO = l.W_O(), M = l.M();
  const index_t P = implicit_packed_taps(l, S);
  const index_t chunks = P > 1 ? 1 : ceil_div(Cg, S);
  const TcuCost before = unit.cost();
  ScratchMeter meter;
  ConvResult res;
  res.output.assign(static_cast<size_t>(l.ofmap_elements()), 0.0);

  ScratchBuffer A(meter, S * S), B(meter, S * S), Ct(meter, S * S);
  std::vector<index_t> row_n(static_cast<size_t>(S)), row_h(static_cast<size_t>(S)),
      row_w(static_cast<size_t>(S));  // address generator state: (n, h_o s - p, w_o s - p)
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t m0 = 0; m0 < M; m0 += S) {
      const index_t rows = std::min(S, M - m0);
      for (index_t i = 0; i < rows; ++i) {
        const index_t m = m0 + i, wo = m % WO, ho = m / WO % HO, n = m / (WO * HO);
        row_n[static_cast<size_t>(i)] = n;
        row_h[static_cast<size_t>(i)] = ho * l.stride - l.pad;
        row_w[static_cast<size_t>(i)] = wo * l.stride - l.pad;
      }
      for (index_t o0 = 0; o0 < COg; o0 += S) {
        const index_t cols = std::min(S, COg - o0);
        bool first = true;
        for (index_t fh = 0; fh < l.H_F; ++fh)
          for (index_t fw0 = 0; fw0 < l.W_F; fw0 += P) {
            const index_t taps = std::min(P, l.W_F - fw0);
            for (index_t cc = 0; cc < chunks; ++cc) {
              const index_t c0 = cc * S, cw = std::min(S, Cg - c0);
              A.zero();
              for (index_t i = 0; i < rows; ++i) {
                const index_t h = row_h[static_cast<size_t>(i)] + fh * l.dilation;
                if (h < 0 || h >= l.H_I) continue;
                const index_t n = row_n[static_cast<size_t>(i)];
                for (index_t j = 0; j < taps; ++j) {
                  const index_t wi = row_w[static_cast<size_t>(i)] + (fw0 + j) * l.dilation;
                  if (wi < 0 || wi >= l.W_I) continue;
                  const double* word =
                      x.data() + ((n * l.H_I + h) * l.W_I + wi) * l.C_I + gi * Cg + c0;
                  std::copy(word, word + cw, A.data() + i * S + j * cw);
                }
              }
              B.zero();
              for (index_t j = 0; j < taps; ++j)
                for (index_t c = 0; c < cw; ++c)
                  for (index_t k = 0; k < cols; ++k)
                    B[(j * cw + c) * S + k] = w[static_cast<size_t>(
                        (((gi * COg + o0 + k) * Cg + c0 + c) * l.H_F + fh) * l.W_F + fw0 + j)];
              unit.multiply(S, A.data(), S, B.data(), S, Ct.data(), S, !first);
              first = false;
            }
          }
        for (index_t i = 0; i < rows; ++i)
          for (index_t k = 0; k < cols; ++k)
            res.output[static_cast<size_t>((m0 + i) * l.C_O + gi * COg + o0 + k)] = Ct[i * S + k];
      }
    }

  ConvStats& s = res.stats;
  s.method = "implicit";
  s.side = S;
  take_unit_cost(s, before, unit.cost());
  s.useful_macs = l.macs();
  s.packed_taps = P;
  s.peak_extra_bytes = meter.peak();
  if (s.peak_extra_bytes > implicit_extra_bound_bytes(S))
    throw std::logic_error("implicit convolution: working memory above three S x S tiles");
  return res;
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
