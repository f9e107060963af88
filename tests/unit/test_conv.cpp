// Convolution on the planar MXU (conv/conv.hpp): explicit and implicit channel-first im2col
// against the test's own direct convolution (plain loops in long double) within their
// rounding-error bound, the library's blocked direct convolution bitwise against plain loops,
// their memory and call counts, and the network files.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "core/error.hpp"
#include "jobs/conv_job.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

ConvLayer make(index_t N, index_t CI, index_t HI, index_t WI, index_t CO, index_t HF, index_t WF,
               index_t stride, index_t pad, index_t dil = 1, index_t groups = 1) {
  ConvLayer l;
  l.name = std::string(1, 't');  // not = "t": GCC 12 warns falsely (-Wstringop-overflow)
  l.N = N, l.C_I = CI, l.H_I = HI, l.W_I = WI, l.C_O = CO, l.H_F = HF, l.W_F = WF;
  l.set_stride(stride), l.set_pad(pad), l.set_dilation(dil), l.groups = groups;
  validate_layer(l, "test");
  return l;
}

// A layer with per-axis strides {h, w}, pads {top, left, bottom, right} and dilations {h, w}.
struct Axes {
  index_t sh, sw, pt, pl, pb, pr, dh, dw;
};
ConvLayer make_axes(index_t N, index_t CI, index_t HI, index_t WI, index_t CO, index_t HF,
                    index_t WF, Axes a, index_t groups = 1) {
  ConvLayer l = make(N, CI, HI, WI, CO, HF, WF, 1, 0, 1, groups);
  l.stride_h = a.sh, l.stride_w = a.sw, l.dilation_h = a.dh, l.dilation_w = a.dw;
  l.pad_top = a.pt, l.pad_left = a.pl, l.pad_bottom = a.pb, l.pad_right = a.pr;
  validate_layer(l, "test");
  return l;
}

// Layers whose strides, dilations and pads differ per axis and side (and groups): each
// axis's own value must reach every address (a swap of h and w, or of begin and end, shows).
std::vector<ConvLayer> per_axis_layers() {
  return {make_axes(1, 5, 11, 9, 7, 3, 2, {2, 1, 1, 0, 2, 1, 1, 2}),
          make_axes(2, 6, 10, 13, 9, 3, 3, {1, 3, 0, 2, 1, 0, 2, 1}, 3),
          make_axes(1, 4, 7, 12, 6, 2, 4, {3, 2, 3, 0, 0, 4, 1, 1}),     // pads past the filter
          make_axes(1, 3, 9, 20, 5, 1, 3, {1, 1, 0, 3, 0, 1, 1, 3}, 1),  // wide: interior tiles
          make_axes(1, 8, 6, 6, 8, 3, 3, {2, 2, 1, 1, 0, 0, 1, 1}, 2)};  // SAME_LOWER-like
}

struct Operands {
  std::vector<double> x, w;
};
Operands operands(const ConvLayer& l, std::uint64_t seed) {
  return {random_tensor(l.ifmap_elements(), seed, 0), random_tensor(l.weight_elements(), seed, 1)};
}

std::string parse_error(const std::string& text) {
  std::istringstream in(text);
  try {
    parse_network_csv(in, "net.csv");
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}

// The direct convolution's products in the seven plain loops' order (n, o, h_o, w_o, c,
// h_f, w_f): f(output index, x index, w index) for each tap inside the input.
template <class F>
void for_each_tap(const ConvLayer& l, F f) {
  const index_t HO = l.H_O(), WO = l.W_O(), Cg = l.C_I_group(), COg = l.C_O_group();
  for (index_t n = 0; n < l.N; ++n)
    for (index_t o = 0; o < l.C_O; ++o)
      for (index_t ho = 0; ho < HO; ++ho)
        for (index_t wo = 0; wo < WO; ++wo) {
          const auto out = static_cast<size_t>(((n * HO + ho) * WO + wo) * l.C_O + o);
          for (index_t c = 0; c < Cg; ++c)
            for (index_t fh = 0; fh < l.H_F; ++fh)
              for (index_t fw = 0; fw < l.W_F; ++fw) {
                const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
                const index_t wi = wo * l.stride_w - l.pad_left + fw * l.dilation_w;
                if (h < 0 || h >= l.H_I || wi < 0 || wi >= l.W_I) continue;
                f(out,
                  static_cast<size_t>(((n * l.H_I + h) * l.W_I + wi) * l.C_I + o / COg * Cg + c),
                  static_cast<size_t>(((o * Cg + c) * l.H_F + fh) * l.W_F + fw));
              }
        }
}

// The direct convolution as seven plain loops: the oracle of the blocked direct_conv, which
// must sum every element in this order (each output from +0, as a fresh accumulator).
std::vector<double> plain_direct(const ConvLayer& l, const std::vector<double>& x,
                                 const std::vector<double>& w) {
  std::vector<double> y(static_cast<size_t>(l.ofmap_elements()), 0.0);
  for_each_tap(l, [&](size_t out, size_t xi, size_t wi) { y[out] += x[xi] * w[wi]; });
  return y;
}

// The oracle: the same seven plain loops in long double, with sum |x w| per output.
struct Direct {
  std::vector<long double> y, mag;
};
Direct oracle(const ConvLayer& l, const std::vector<double>& x, const std::vector<double>& w) {
  Direct d{std::vector<long double>(static_cast<size_t>(l.ofmap_elements())),
           std::vector<long double>(static_cast<size_t>(l.ofmap_elements()))};
  for_each_tap(l, [&](size_t out, size_t xi, size_t wi) {
    const long double t = static_cast<long double>(x[xi]) * w[wi];
    d.y[out] += t;
    d.mag[out] += std::fabs(t);
  });
  return d;
}

double gam(double k, double u) {
  return k * u / (1.0 - k * u);
}

// The largest |y - oracle| / bound over the outputs (<= 1 passes). An output is a running sum
// of its K = C_I/g H_F W_F products (the cells' W registers start from C across calls; zero
// taps add exact zeros), so in a cell mode with operands rounded to unit roundoff u_in and
// accumulation in unit roundoff u (Higham, Sec. 3.1):
// |y_hat - y| <= ((1 + u_in)^2 (1 + gamma_K(u)) - 1) sum |x w|; the oracle adds its own
// gamma_K in long double (also in sum |x w|).
double worst_vs_bound(const ConvLayer& l, const std::vector<double>& y, const Direct& d, double u,
                      double u_in) {
  const auto K = static_cast<double>(l.C_I_group() * l.H_F * l.W_F);
  const double gl = gam(K, std::numeric_limits<long double>::epsilon() / 2);
  const double rel = ((1 + u_in) * (1 + u_in) * (1 + gam(K, u)) - 1 + gl) / (1 - gl);
  REQUIRE(y.size() == d.y.size());
  double worst = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    const long double err = std::fabs(y[i] - d.y[i]), bound = rel * d.mag[i];
    if (err > 0) worst = std::max(worst, bound > 0 ? static_cast<double>(err / bound) : HUGE_VAL);
  }
  return worst;
}

const double kU64 = std::ldexp(1.0, -53), kU32 = std::ldexp(1.0, -24);

const char* const kHeader =
    "Layer name,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num Filter,Strides,"
    "Padding\n";

}  // namespace

TEST_CASE("output sizes follow floor((H + 2p - d(F - 1) - 1) / s) + 1", "[conv]") {
  CHECK(make(1, 3, 227, 227, 96, 11, 11, 4, 0).H_O() == 55);  // AlexNet conv1
  CHECK(make(1, 3, 224, 224, 64, 7, 7, 2, 3).H_O() == 112);   // ResNet conv1
  CHECK(make(1, 64, 56, 56, 64, 3, 3, 1, 1).W_O() == 56);     // "same" 3x3
  CHECK(make(1, 8, 15, 15, 8, 3, 3, 1, 2, 2).H_O() == 15);    // dilation 2, pad 2
  CHECK(make(1, 8, 14, 15, 8, 1, 1, 2, 0).W_O() == 8);        // 1x1 stride 2, odd width
  CHECK(make(1, 8, 13, 13, 8, 5, 3, 4, 1).H_O() == 3);
  CHECK(make(1, 8, 13, 13, 8, 5, 3, 4, 1).W_O() == 4);
}

TEST_CASE("per-axis output sizes: floor((H + p_begin + p_end - d(F - 1) - 1) / s) + 1", "[conv]") {
  // 11 + 1 + 2 - 1 (3 - 1) - 1 = 11, / 2 -> 5, + 1; 9 + 0 + 1 - 2 (2 - 1) - 1 = 7, / 1 + 1.
  const ConvLayer a = make_axes(1, 5, 11, 9, 7, 3, 2, {2, 1, 1, 0, 2, 1, 1, 2});
  CHECK((a.H_O() == 6 && a.W_O() == 8));
  // 7 + 3 + 0 - 1 - 1 = 8, / 3 -> 2, + 1; 12 + 0 + 4 - 3 - 1 = 12, / 2 + 1.
  const ConvLayer b = make_axes(1, 4, 7, 12, 6, 2, 4, {3, 2, 3, 0, 0, 4, 1, 1});
  CHECK((b.H_O() == 3 && b.W_O() == 7));
  CHECK(b.macs() == 1ull * 3 * 7 * 6 * 2 * 4 * 4);
  CHECK(b.lowered_bytes() == 1ull * 3 * 7 * 2 * 4 * 4 * 8);
}

TEST_CASE(
    "per-axis strides, dilations, asymmetric pads and groups: both methods equal the "
    "direct convolution, the blocked direct one bitwise the plain loops",
    "[conv]") {
  for (const ConvLayer& l : per_axis_layers())
    for (const index_t S : {4, 8}) {
      CAPTURE(l.shape_string(), S);
      const Operands op = operands(l, 13);
      const Direct ref = oracle(l, op.x, op.w);
      TensorUnit ue(S * S, 2), ui(S * S, 2);
      const ConvResult e = explicit_conv(l, op.x, op.w, ue);
      const ConvResult i = implicit_conv(l, op.x, op.w, ui);
      CHECK(worst_vs_bound(l, e.output, ref, kU64, 0) <= 1);
      CHECK(worst_vs_bound(l, i.output, ref, kU64, 0) <= 1);
      CHECK(e.stats.useful_macs == l.macs());
      CHECK(i.stats.useful_macs == l.macs());
      const std::vector<double> blocked = direct_conv(l, op.x, op.w),
                                plain = plain_direct(l, op.x, op.w);
      REQUIRE(blocked.size() == plain.size());
      CHECK(std::memcmp(blocked.data(), plain.data(), plain.size() * sizeof(double)) == 0);
    }
}

TEST_CASE("explicit and implicit im2col equal the direct convolution in fp64", "[conv]") {
  struct Case {
    const char* what;
    ConvLayer layer;
    index_t S;
  };
  const Case cases[] = {
      {"C_I = 3, 3x3, stride 1, padding 1", make(1, 3, 12, 12, 8, 3, 3, 1, 1), 8},
      {"stride 2, odd sizes", make(1, 5, 11, 13, 20, 3, 3, 2, 1), 8},
      {"stride 4, 5x5 filter, C_I = 3", make(1, 3, 23, 23, 16, 5, 5, 4, 2), 16},
      {"dilation 2", make(1, 6, 15, 15, 10, 3, 3, 1, 2, 2), 4},
      {"dilation 2 with stride 2, non-square filter", make(1, 4, 17, 12, 6, 3, 2, 2, 1, 2), 4},
      {"C_I > S with a channel tail", make(1, 21, 9, 9, 12, 3, 3, 1, 1), 8},
      {"output larger than the unit: M and C_O several tiles", make(1, 8, 14, 14, 19, 3, 3, 1, 1),
       4},
      {"batch 3", make(3, 5, 7, 9, 7, 3, 3, 1, 1), 4},
      {"groups 2", make(2, 8, 8, 8, 12, 3, 3, 1, 1, 1, 2), 4},
      {"1x1, stride 2, no padding", make(1, 16, 10, 10, 24, 1, 1, 2, 0), 8},
      {"output smaller than one tile (M < S)", make(1, 4, 3, 3, 5, 3, 3, 1, 0), 8},
      {"stride larger than the filter", make(1, 2, 16, 16, 3, 2, 2, 4, 0), 4},
  };
  for (const auto& c : cases) {
    SECTION(c.what) {
      const ConvLayer& l = c.layer;
      const Operands op = operands(l, 7);
      const Direct ref = oracle(l, op.x, op.w);
      REQUIRE(ref.y.size() == l.ofmap_elements());
      TensorUnit ue(c.S * c.S, 3), ui(c.S * c.S, 3);
      const ConvResult e = explicit_conv(l, op.x, op.w, ue);
      const ConvResult i = implicit_conv(l, op.x, op.w, ui);
      CHECK(worst_vs_bound(l, e.output, ref, kU64, 0) <= 1);
      CHECK(worst_vs_bound(l, i.output, ref, kU64, 0) <= 1);
      // ESOP skips the same zero (padding) operands on both paths: the same MACs are done.
      CHECK(e.stats.macs == i.stats.macs);
      CHECK(e.stats.macs <= l.macs());
      CHECK(e.stats.useful_macs == l.macs());
      CHECK(e.stats.utilisation() <= 1.0);
      CHECK(i.stats.utilisation() <= 1.0);
    }
  }
}

TEST_CASE("the direct convolution matches a hand-computed 1x1-channel example", "[conv]") {
  // 1 x 1 x 3 x 3 input 1..9, one 2x2 filter of ones, stride 1, no padding: window sums.
  const ConvLayer l = make(1, 1, 3, 3, 1, 2, 2, 1, 0);
  const std::vector<double> x{1, 2, 3, 4, 5, 6, 7, 8, 9}, w{1, 1, 1, 1};
  CHECK(direct_conv(l, x, w) == std::vector<double>{12, 16, 24, 28});
  TensorUnit u(4, 0);
  CHECK(explicit_conv(l, x, w, u).output == std::vector<double>{12, 16, 24, 28});
  CHECK(implicit_conv(l, x, w, u).output == std::vector<double>{12, 16, 24, 28});
}

TEST_CASE("the blocked direct convolution is bitwise the seven plain loops", "[conv]") {
  const ConvLayer layers[] = {
      make(1, 3, 12, 12, 8, 3, 3, 1, 1),         // padding: border pixels and tiles
      make(1, 5, 11, 13, 20, 3, 3, 2, 1),        // stride 2, C_O not a multiple of the lanes
      make(1, 6, 15, 15, 10, 3, 3, 1, 2, 2),     // dilation 2
      make(1, 4, 17, 12, 6, 3, 2, 2, 1, 2),      // dilation and stride, non-square filter
      make(3, 5, 7, 9, 7, 3, 3, 1, 1),           // batch 3
      make(2, 8, 8, 8, 12, 3, 3, 1, 1, 1, 2),    // groups 2
      make(1, 12, 9, 10, 12, 3, 3, 1, 0, 1, 3),  // groups 3, no padding
      make(1, 16, 10, 10, 24, 1, 1, 2, 0),       // 1x1 stride 2
      make(1, 2, 16, 16, 3, 2, 2, 4, 0),         // stride larger than the filter
      make(1, 3, 23, 23, 16, 5, 5, 4, 2),        // 5x5 stride 4
      make(1, 4, 3, 3, 5, 3, 3, 1, 0),           // one output pixel
      make(1, 3, 5, 30, 7, 1, 7, 1, 3),          // wide rows: many interior tiles and a tail
  };
  for (const ConvLayer& l : layers) {
    CAPTURE(l.shape_string());
    const Operands op = operands(l, 11);
    const std::vector<double> blocked = direct_conv(l, op.x, op.w),
                              plain = plain_direct(l, op.x, op.w);
    REQUIRE(blocked.size() == plain.size());
    CHECK(std::memcmp(blocked.data(), plain.data(), plain.size() * sizeof(double)) == 0);
  }
}

TEST_CASE("explicit im2col materializes exactly N H_O W_O H_F W_F C_I doubles", "[conv]") {
  for (const ConvLayer& l : {make(1, 3, 32, 32, 16, 3, 3, 1, 1), make(2, 10, 13, 11, 7, 5, 3, 2, 2),
                             make(1, 8, 12, 12, 8, 3, 3, 1, 2, 2, 2)}) {
    const Operands op = operands(l, 3);
    TensorUnit u(64, 0);
    const ConvResult r = explicit_conv(l, op.x, op.w, u);
    const std::uint64_t closed =
        static_cast<std::uint64_t>(l.N * l.H_O() * l.W_O() * l.H_F * l.W_F * l.C_I) * 8;
    CHECK(r.stats.lowered_bytes == closed);
    CHECK(l.lowered_bytes() == closed);
    CHECK(r.stats.peak_extra_bytes >= r.stats.lowered_bytes);
    // The lowering pass in the model: IFMap read once + every lowered element written.
    CHECK(r.stats.lowering_time == l.ifmap_elements() + closed / 8);
  }
}

TEST_CASE("implicit im2col keeps no lowered buffer: its working memory is three S x S tiles",
          "[conv]") {
  for (index_t S : {4, 8, 16}) {
    const ConvLayer l = make(2, 16, 24, 24, 32, 3, 3, 1, 1);
    const Operands op = operands(l, 5);
    TensorUnit u(S * S, 0);
    const ConvResult r = implicit_conv(l, op.x, op.w, u);
    const std::uint64_t tile = static_cast<std::uint64_t>(S * S) * 8;
    CHECK(r.stats.lowered_bytes == 0);
    CHECK(r.stats.lowering_time == 0);
    CHECK(r.stats.peak_extra_bytes > 0);
    CHECK(r.stats.peak_extra_bytes <= 3 * tile);
    CHECK(r.stats.peak_extra_bytes <= implicit_extra_bound_bytes(S));
    CHECK(r.stats.peak_extra_bytes * 100 < l.lowered_bytes());  // far below the lowered copy
  }
}

TEST_CASE("call counts follow the blocking of each method", "[conv]") {
  const index_t S = 8;
  SECTION("explicit: one call per (group, C_O tile, depth chunk), r = N H_O W_O rows") {
    const ConvLayer l = make(1, 5, 9, 9, 20, 3, 3, 1, 1, 1, 1);
    const Operands op = operands(l, 1);
    TensorUnit u(S * S, 10);
    const ConvResult r = explicit_conv(l, op.x, op.w, u);
    const index_t calls = ceil_div(20, S) * ceil_div(45, S);
    CHECK(r.stats.calls == static_cast<std::uint64_t>(calls));
    CHECK(r.stats.rows == static_cast<std::uint64_t>(calls * l.M()));
    CHECK(r.stats.tensor_time == static_cast<std::uint64_t>(calls * (l.M() * S + 10)));
  }
  SECTION("implicit: per S-row block and C_O tile, H_F ceil(W_F / P) calls of S rows") {
    const ConvLayer l = make(1, 3, 10, 10, 12, 3, 3, 1, 1);  // P = min(8 / 3, 3) = 2
    const Operands op = operands(l, 1);
    TensorUnit u(S * S, 0);
    const ConvResult r = implicit_conv(l, op.x, op.w, u);
    CHECK(r.stats.packed_taps == 2);
    const index_t calls = ceil_div(l.M(), S) * ceil_div(12, S) * 3 * ceil_div(3, 2);
    CHECK(r.stats.calls == static_cast<std::uint64_t>(calls));
    CHECK(r.stats.rows == static_cast<std::uint64_t>(calls * S));
  }
  SECTION("implicit with C_I > S: channel chunks of S, one tap per call") {
    const ConvLayer l = make(1, 20, 6, 6, 8, 3, 3, 1, 1);
    const Operands op = operands(l, 1);
    TensorUnit u(S * S, 0);
    const ConvResult r = implicit_conv(l, op.x, op.w, u);
    CHECK(r.stats.packed_taps == 1);
    CHECK(r.stats.calls == static_cast<std::uint64_t>(ceil_div(36, S) * 1 * 9 * ceil_div(20, S)));
  }
}

TEST_CASE("multi-tile packing uses min(S / C_I, W_F) taps and raises utilisation", "[conv]") {
  CHECK(implicit_packed_taps(make(1, 3, 8, 8, 4, 3, 3, 1, 1), 16) == 3);
  CHECK(implicit_packed_taps(make(1, 3, 8, 8, 4, 7, 7, 1, 3), 16) == 5);
  CHECK(implicit_packed_taps(make(1, 8, 8, 8, 4, 3, 3, 1, 1), 16) == 2);
  CHECK(implicit_packed_taps(make(1, 9, 8, 8, 4, 3, 3, 1, 1), 16) == 1);
  CHECK(implicit_packed_taps(make(1, 32, 8, 8, 4, 3, 3, 1, 1), 16) == 1);
  CHECK(implicit_packed_taps(make(1, 16, 8, 8, 4, 3, 3, 1, 1, 1, 4), 16) == 3);  // C_I/g = 4
  // C_I = 4, S = 16: without packing 4 of 16 A columns would carry data; packing 3 taps: 12.
  const ConvLayer l = make(1, 4, 16, 16, 16, 3, 3, 1, 1);
  const Operands op = operands(l, 2);
  TensorUnit u(256, 0);
  const ConvResult r = implicit_conv(l, op.x, op.w, u);
  CHECK(r.stats.utilisation() == Approx(12.0 / 16.0));
  CHECK(worst_vs_bound(l, r.output, oracle(l, op.x, op.w), kU64, 0) <= 1);
}

TEST_CASE("whole tiles give utilisation 1 on both paths", "[conv]") {
  const ConvLayer l = make(1, 8, 8, 8, 16, 3, 3, 1, 1);  // M = 64, C_I = 8, C_O = 16, K = 72
  const Operands op = operands(l, 4);
  TensorUnit u(64, 0);
  CHECK(explicit_conv(l, op.x, op.w, u).stats.utilisation() == 1.0);
  CHECK(implicit_conv(l, op.x, op.w, u).stats.utilisation() == 1.0);
}

TEST_CASE("fp32 cells stay within the binary32 bound and off the fp64 one", "[conv]") {
  const ConvLayer l = make(1, 6, 8, 8, 8, 3, 3, 1, 1);
  const Operands op = operands(l, 9);
  const Direct ref = oracle(l, op.x, op.w);
  TensorUnit u(64, 0, false, Mode::esop, CellMode::fp32);
  const std::vector<double> y = implicit_conv(l, op.x, op.w, u).output;
  CHECK(worst_vs_bound(l, y, ref, kU32, kU32) <= 1);  // operands and sums in binary32
  CHECK(worst_vs_bound(l, y, ref, kU64, 0) > 1);      // not the fp64 result
  // The library's figure for the report: its max relative error against the direct one.
  const double err = max_relative_error(y, direct_conv(l, op.x, op.w));
  CHECK(err > 0);
  CHECK(err < 1e-5);
}

TEST_CASE("network files reject malformed rows naming file:line and the problem", "[conv][csv]") {
  const std::string h = kHeader;
  CHECK_THAT(parse_error(h + "c1,8,8,3,3,4,4,1\n"), Catch::Contains("net.csv:2") &&
                                                        Catch::Contains("expected 9 columns") &&
                                                        Catch::Contains("got 8"));
  CHECK_THAT(parse_error("# a comment\n" + h + "c1,8,8,3,3,4,4,1,1\nc2,8,x8,3,3,4,4,1,1\n"),
             Catch::Contains("net.csv:4") && Catch::Contains("IFMAP Width") &&
                 Catch::Contains("not an integer"));
  CHECK_THAT(parse_error(h + "c1,8,8,3,3,0,4,1,1\n"), Catch::Contains("net.csv:2") &&
                                                          Catch::Contains("Channels") &&
                                                          Catch::Contains("must be positive"));
  CHECK_THAT(parse_error(h + "c1,8,8,3,3,4,4,-1,1\n"),
             Catch::Contains("Strides") && Catch::Contains("must be positive"));
  CHECK_THAT(parse_error(h + "c1,8,8,3,3,4,4,1,-1\n"),
             Catch::Contains("Padding") && Catch::Contains("non-negative"));
  CHECK_THAT(parse_error(h + "c1,4,4,7,7,4,4,1,1\n"),
             Catch::Contains("net.csv:2") && Catch::Contains("larger than the padded input 6x6"));
  CHECK_THAT(parse_error(h + "c1,8,8,3,3,4,4,1,1.5\n"), Catch::Contains("not an integer"));
  CHECK_THAT(parse_error(h + ",8,8,3,3,4,4,1,1\n"), Catch::Contains("empty layer name"));
  CHECK_THAT(parse_error("Layer,IFMAP Height,IFMAP Width,Filter Height,Filter Width,Channels,Num "
                         "Filter,Strides,Padding\nc1,8,8,3,3,4,4,1,1\n"),
             Catch::Contains("net.csv:1: header") && Catch::Contains("'Layer name'"));
  CHECK_THAT(parse_error(h), Catch::Contains("no layers"));
  CHECK_THAT(parse_error("# only a comment\n"), Catch::Contains("no header"));
  const std::string h11 = h.substr(0, h.size() - 1) + ",Dilation,Groups\n";
  CHECK_THAT(parse_error(h11 + "c1,8,8,3,3,6,4,1,1,1,4\n"),
             Catch::Contains("groups 4 must divide"));
  CHECK_THAT(parse_error(h11 + "c1,8,8,3,3,4,4,1,1,5,1\n"),
             Catch::Contains("dilation 5") && Catch::Contains("larger than the padded input"));
}

TEST_CASE("network files accept comments, blank lines, a trailing comma and optional columns",
          "[conv][csv]") {
  std::istringstream in(std::string("# comment\n\n") + kHeader +
                        "conv1, 227, 227, 11, 11, 3, 96, 4, 0,\n  # indented comment\n"
                        "conv2,27,27,5,5,96,256,1,2\r\n");
  const auto layers = parse_network_csv(in, "net.csv");
  REQUIRE(layers.size() == 2);
  CHECK(layers[0].name == "conv1");
  CHECK(layers[0].H_O() == 55);
  CHECK(layers[1].C_I == 96);
  CHECK(layers[1].uniform_pad() == 2);
  CHECK(layers[1].N == 1);
}

// SCALE-Sim's topology headers, as its files write them (spaces after the commas, a
// trailing comma).
const char* const kScaleSimConv =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
    "Strides,\n";
const char* const kScaleSimGemm = "Layer, M, N, K,\n";

std::vector<ConvLayer> parse_text(const std::string& text) {
  std::istringstream in(text);
  return parse_network_csv(in, "net.csv");
}

TEST_CASE("SCALE-Sim convolution topologies read with the IFMAP as padded: pad 0, N 1",
          "[conv][csv]") {
  // An extra trailing column (its sparsity files), a blank line and a row of commas only.
  const auto layers = parse_text(
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num "
      "Filter, Strides, Sparsity,\n"
      "Conv1 ,224 ,224 ,7 ,7 ,3 ,64 ,2 ,2:4,\n\n,,,,,,,,,\nCB2a_2, 58, 58, 3, 3, 64, 64, 1,\n");
  REQUIRE(layers.size() == 2);
  const ConvLayer& a = layers[0];
  CHECK(a.name == "Conv1");
  CHECK((a.N == 1 && a.H_I == 224 && a.W_I == 224 && a.H_F == 7 && a.W_F == 7));
  CHECK((a.C_I == 3 && a.C_O == 64 && a.uniform_stride() == 2));
  CHECK((a.uniform_pad() == 0 && a.uniform_dilation() == 1 && a.groups == 1));
  CHECK(a.H_O() == 109);  // (224 - 7) / 2 + 1: the IFMAP is already padded
  CHECK(std::string(a.kind()) == "conv");
  CHECK(!a.gemm);
  CHECK(layers[1].H_O() == 56);
  // The same layer in our format with the padded size and Padding 0 is the same layer.
  const auto ours = parse_text(std::string(kHeader) + "CB2a_2,58,58,3,3,64,64,1,0\n");
  CHECK(ours[0].shape_string() == layers[1].shape_string());
  CHECK(ours[0].macs() == layers[1].macs());
  // Header names are compared trimmed and without case.
  CHECK(parse_text("LAYER NAME,ifmap height ,IFMAP WIDTH,filter height,Filter Width,channels,"
                   "NUM FILTER,strides\nc,8,8,3,3,2,2,1\n")
            .size() == 1);
}

TEST_CASE("SCALE-Sim GEMM rows run as 1x1 convolutions of an M x 1 IFMap of K channels",
          "[conv][csv]") {
  const auto layers =
      parse_text(std::string(kScaleSimGemm) + "L0, 196, 192, 384,\n\nL1,3,5,16,extra\n,,,,\n");
  REQUIRE(layers.size() == 2);
  const ConvLayer& g = layers[0];
  REQUIRE(g.gemm);
  CHECK((g.gemm->M == 196 && g.gemm->N == 192 && g.gemm->K == 384));
  CHECK(std::string(g.kind()) == "gemm");
  CHECK((g.N == 1 && g.H_I == 196 && g.W_I == 1 && g.C_I == 384 && g.C_O == 192));
  CHECK((g.H_F == 1 && g.W_F == 1 && g.uniform_stride() == 1 && g.uniform_pad() == 0 &&
         g.groups == 1));
  CHECK(g.M() == 196);        // the lowered matrix's rows: M
  CHECK(g.K_group() == 384);  // its depth: K
  CHECK(g.macs() == 196ull * 192 * 384);
  CHECK(g.lowered_bytes() == 196ull * 384 * 8);                  // the M x K operand itself
  CHECK(parse_text("Layer Name,M,N,K\nx,1,2,3\n")[0].C_O == 2);  // its other spelling
}

TEST_CASE("SCALE-Sim topologies reject malformed rows naming file:line and the field",
          "[conv][csv]") {
  const std::string c = kScaleSimConv, g = kScaleSimGemm;
  CHECK_THAT(parse_error(c + "c1,8,8,3,3,4,4,\n"),
             Catch::Contains("net.csv:2: expected at least 8 columns (SCALE-Sim convolution "
                             "format), got 7"));
  CHECK_THAT(parse_error(c + "c1,8,8,3,3,4,4,1\nc2,8,8,3,3,4.5,4,1\n"),
             Catch::Contains("net.csv:3") && Catch::Contains("column 'Channels'") &&
                 Catch::Contains("not an integer"));
  CHECK_THAT(parse_error(c + "c1,8,8,3,3,4,4,0,\n"),
             Catch::Contains("net.csv:2") && Catch::Contains("column 'Strides': must be positive"));
  CHECK_THAT(parse_error(c + "c1,4,4,5,5,4,4,1,\n"),
             Catch::Contains("net.csv:2 (c1): filter 5x5 is larger than the padded input 4x4"));
  CHECK_THAT(parse_error(g + "g1,4,0,4,\n"),
             Catch::Contains("net.csv:2") && Catch::Contains("column 'N': must be positive"));
  CHECK_THAT(parse_error(g + "g1,4,x,4,\n"),
             Catch::Contains("column 'N'") && Catch::Contains("not an integer"));
  CHECK_THAT(parse_error(g + "g1,4,4\n"),
             Catch::Contains("net.csv:2: expected at least 4 columns (SCALE-Sim GEMM format)"));
  CHECK_THAT(parse_error("Layer, M, K, N,\ng,1,2,3\n"),
             Catch::Contains("net.csv:1: header: column 3 must be 'N', got 'K'"));
  CHECK_THAT(parse_error("Layer, IFMAP Height, IFMAP Width\nc,1,1\n"),
             Catch::Contains("net.csv:1: header: unknown format (3 columns)"));
  CHECK_THAT(parse_error("Name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, "
                         "Channels, Num Filter, Strides,\n"),
             Catch::Contains("net.csv:1: header: column 1 must be 'Layer name', got 'Name'"));
}

TEST_CASE("layer specs of the --layer option are parsed and checked", "[conv][csv]") {
  const ConvLayer l = parse_layer_spec("2,3,32,30,16,3,3,2,1,2");
  CHECK(l.N == 2);
  CHECK(l.W_I == 30);
  CHECK(l.uniform_dilation() == 2);
  CHECK(l.groups == 1);
  CHECK_THROWS_AS(parse_layer_spec("1,3,32,32,16,3,3,1"), config_error);
  CHECK_THROWS_AS(parse_layer_spec("1,3,32,32,16,3,3,1,a"), config_error);
  CHECK_THROWS_AS(parse_layer_spec("1,3,32,32,0,3,3,1,1"), config_error);
  CHECK_THROWS_AS(parse_layer_spec("1,3,2,2,4,5,5,1,0"), config_error);
}

std::string spec_error(const std::string& spec) {
  try {
    parse_layer_spec(spec, "--layer");
  } catch (const config_error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_CASE("layer specs take per-axis stride, dilation and pad forms", "[conv][csv]") {
  const ConvLayer a = parse_layer_spec("1,3,16,17,4,3,3,2x1,1x2,1x3");
  CHECK((a.stride_h == 2 && a.stride_w == 1 && a.dilation_h == 1 && a.dilation_w == 3));
  CHECK((a.pad_top == 1 && a.pad_bottom == 1 && a.pad_left == 2 && a.pad_right == 2));
  CHECK(a.shape_string() == "1x3x16x17 -> 4 3x3 s2x1 p1x2 d1x3");
  CHECK((!a.uniform_stride() && !a.uniform_pad() && !a.uniform_dilation()));
  const ConvLayer b = parse_layer_spec("1,6,16,17,4,3,2,3,1:0:2:3,2,2");
  CHECK((b.pad_top == 1 && b.pad_left == 0 && b.pad_bottom == 2 && b.pad_right == 3));
  CHECK((b.stride_h == 3 && b.stride_w == 3 && b.dilation_h == 2 && b.dilation_w == 2));
  CHECK(b.groups == 2);
  CHECK(b.shape_string() == "1x6x16x17 -> 4 3x2 s3 p1:0:2:3 d2 g2");
  // Uniform values in any form are the old layer, written the old way.
  const ConvLayer c = parse_layer_spec("1,3,16,16,4,3,3,2x2,1:1:1:1,1x1");
  CHECK(c.shape_string() == parse_layer_spec("1,3,16,16,4,3,3,2,1").shape_string());
  CHECK(c.shape_string() == "1x3x16x16 -> 4 3x3 s2 p1");
  CHECK((c.uniform_stride() == 2 && c.uniform_pad() == 1 && c.uniform_dilation() == 1));
  CHECK(parse_layer_spec("1,3,16,16,4,3,3,1,0x1").shape_string() == "1x3x16x16 -> 4 3x3 s1 p0x1");
}

TEST_CASE("malformed per-axis fields give one line naming the field and the forms", "[conv][csv]") {
  const struct {
    const char* spec;
    const char* message;
  } cases[] = {
      {"1,3,16,16,4,3,3,2x,1", "--layer: stride: '2x' is not of the form S or SHxSW"},
      {"1,3,16,16,4,3,3,2x1x1,1", "--layer: stride: '2x1x1' is not of the form S or SHxSW"},
      {"1,3,16,16,4,3,3,0x1,1", "--layer: stride: must be positive, got 0"},
      {"1,3,16,16,4,3,3,1,1:2:3", "--layer: pad: '1:2:3' is not of the form P, PHxPW or T:L:B:R"},
      {"1,3,16,16,4,3,3,1,1:2::3", "--layer: pad: '1:2::3' is not of the form P, PHxPW or"},
      {"1,3,16,16,4,3,3,1,1:-2:0:3", "--layer: pad: must be non-negative, got -2"},
      {"1,3,16,16,4,3,3,1,1x2:0:0:0", "--layer: pad: '1x2' is not an integer"},
      {"1,3,16,16,4,3,3,1,ax1", "--layer: pad: 'a' is not an integer"},
      {"1,3,16,16,4,3,3,1,1,2x", "--layer: dil: '2x' is not of the form D or DHxDW"},
      {"1,3,16,16,4,3,3,1,1,1x0", "--layer: dil: must be positive, got 0"},
      {"1,3,4,16,4,3,3,1,0:0:0:0,2x1",
       "filter 3x3 (dilation 2x1, extent 5x3) is larger than the padded input 4x16"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.spec);
    const std::string e = spec_error(c.spec);
    CHECK_THAT(e, Catch::Contains(c.message));
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("network files take the per-axis forms in Strides, Padding and Dilation", "[conv][csv]") {
  const auto layers = parse_text(std::string(kHeader).substr(0, std::strlen(kHeader) - 1) +
                                 ",Dilation,Groups\n"
                                 "a,16,17,3,3,6,4,2x1,1:0:2:3,1x2,2\nb,8,8,3,3,4,4,2,1,1,1\n");
  REQUIRE(layers.size() == 2);
  const ConvLayer& a = layers[0];
  CHECK((a.stride_h == 2 && a.stride_w == 1 && a.dilation_h == 1 && a.dilation_w == 2));
  CHECK((a.pad_top == 1 && a.pad_left == 0 && a.pad_bottom == 2 && a.pad_right == 3));
  CHECK(a.groups == 2);
  CHECK(a.shape_string() == parse_layer_spec("1,6,16,17,4,3,3,2x1,1:0:2:3,1x2,2").shape_string());
  CHECK(layers[1].shape_string() == "1x4x8x8 -> 4 3x3 s2 p1");
  CHECK_THAT(parse_error(std::string(kHeader) + "c1,8,8,3,3,4,4,1x,1\n"),
             Catch::Contains("net.csv:2: column 'Strides': '1x' is not of the form S or SHxSW"));
  CHECK_THAT(parse_error(std::string(kHeader) + "c1,8,8,3,3,4,4,1,1:1\n"),
             Catch::Contains("net.csv:2: column 'Padding': '1:1' is not of the form"));
}

TEST_CASE("the shipped network files parse with their layer counts", "[conv][csv]") {
  const std::string dir = std::string(TRIADA_SOURCE_DIR) + "/data/networks/";
  const struct {
    const char* file;
    size_t layers;
  } nets[] = {{"alexnet.csv", 5},    {"vgg16.csv", 13},  {"resnet50.csv", 53},
              {"googlenet.csv", 57}, {"yolov2.csv", 23}, {"densenet121.csv", 120}};
  for (const auto& n : nets) {
    const auto layers = read_network_csv(dir + n.file);
    CHECK(layers.size() == n.layers);
  }
  // Spot checks of well-known layers and Table I's VGG16 ratio (the paper: 311.80 / 34.65).
  const auto vgg = read_network_csv(dir + "vgg16.csv");
  std::uint64_t ifmap = 0, lowered = 0;
  for (const auto& l : vgg) ifmap += l.ifmap_bytes(), lowered += l.lowered_bytes();
  CHECK(double(lowered) / double(ifmap) == Approx(311.80 / 34.65).epsilon(1e-3));
  const auto alex = read_network_csv(dir + "alexnet.csv");
  CHECK(alex[0].H_O() == 55);
  CHECK(alex[1].groups == 2);
  const auto dense = read_network_csv(dir + "densenet121.csv");
  CHECK(dense[dense.size() - 2].C_I == 992);  // block 4, layer 16's 1x1: 512 + 15 x 32 in
}

TEST_CASE("the MAC energy follows the cell mode's key of the mesh config", "[conv]") {
  CHECK(conv_energy_model("", CellMode::fp64).mac_pj == 108.9);  // FPMax's DP unit
  // fp32, the FP32-MXU: one step of 15.94 pJ (M3XU Table III, 7.97 x the fp16 unit's 2.0).
  CHECK(conv_energy_model("", CellMode::fp32).mac_pj == 15.94);
  // m3xu-fp32: four sub-steps of 1.67 pJ per real MAC (Corollary 2).
  CHECK(conv_energy_model("", CellMode::m3xu_fp32).mac_pj == 1.67 * 4);
  CHECK(conv_energy_model("", CellMode::bf16).static_pj_per_cell_step == 0.05);
}
