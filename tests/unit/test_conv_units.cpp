// Work units of the convolution methods (conv/conv.hpp): the unit-range entry points against
// a frozen copy of the whole-layer code they replaced (outputs bitwise, counters exactly),
// and any partition of a layer's units summing to the whole layer.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "core/error.hpp"
#include "jobs/conv_distributed.hpp"
#include "support/catch.hpp"
#include "support/tcu_cost_checks.hpp"

using namespace triada;

namespace {

ConvLayer make(index_t N, index_t CI, index_t HI, index_t WI, index_t CO, index_t HF, index_t WF,
               index_t stride, index_t pad, index_t dil = 1, index_t groups = 1) {
  ConvLayer l;
  l.N = N, l.C_I = CI, l.H_I = HI, l.W_I = WI, l.C_O = CO, l.H_F = HF, l.W_F = WF;
  l.set_stride(stride), l.set_pad(pad), l.set_dilation(dil), l.groups = groups;
  validate_layer(l, "test");
  return l;
}

index_t up(index_t v, index_t s) {
  return (v + s - 1) / s * s;
}

// The explicit method as it was before work units (groups, tiles, chunks; output in NHWC).
std::vector<double> legacy_explicit(const ConvLayer& l, const std::vector<double>& x,
                                    const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side(), g = l.groups, Cg = l.C_I_group(), COg = l.C_O_group();
  const index_t HO = l.H_O(), WO = l.W_O(), M = l.M(), Kg = l.K_group();
  const index_t Mp = std::max(M, S), Kgp = up(Kg, S), COgp = up(COg, S), ldL = g * Kgp;
  std::vector<double> L(static_cast<size_t>(Mp * ldL), 0.0), y(l.ofmap_elements(), 0.0);
  for (index_t n = 0; n < l.N; ++n)
    for (index_t ho = 0; ho < HO; ++ho)
      for (index_t wo = 0; wo < WO; ++wo)
        for (index_t gi = 0; gi < g; ++gi)
          for (index_t c = 0; c < Cg; ++c)
            for (index_t fh = 0; fh < l.H_F; ++fh)
              for (index_t fw = 0; fw < l.W_F; ++fw) {
                const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
                const index_t wi = wo * l.stride_w - l.pad_left + fw * l.dilation_w;
                if (h < 0 || h >= l.H_I || wi < 0 || wi >= l.W_I) continue;
                L[static_cast<size_t>(((n * HO + ho) * WO + wo) * ldL + gi * Kgp +
                                      (c * l.H_F + fh) * l.W_F + fw)] =
                    x[static_cast<size_t>(((n * l.H_I + h) * l.W_I + wi) * l.C_I + gi * Cg + c)];
              }
  unit.cpu(l.ifmap_elements() + static_cast<std::uint64_t>(M * g * Kg));
  std::vector<double> F(static_cast<size_t>(g * Kgp * COgp), 0.0);
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t o = 0; o < COg; ++o)
      for (index_t k = 0; k < Kg; ++k)
        F[static_cast<size_t>((gi * Kgp + k) * COgp + o)] =
            w[static_cast<size_t>((gi * COg + o) * Kg + k)];
  const index_t ldC = g * COgp;
  std::vector<double> C(static_cast<size_t>(Mp * ldC), 0.0);
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t ot = 0; ot < COgp / S; ++ot)
      for (index_t kc = 0; kc < Kgp / S; ++kc)
        unit.multiply(Mp, L.data() + gi * Kgp + kc * S, ldL,
                      F.data() + (gi * Kgp + kc * S) * COgp + ot * S, COgp,
                      C.data() + gi * COgp + ot * S, ldC, kc > 0);
  for (index_t m = 0; m < M; ++m)
    for (index_t gi = 0; gi < g; ++gi)
      for (index_t o = 0; o < COg; ++o)
        y[static_cast<size_t>(m * l.C_O + gi * COg + o)] =
            C[static_cast<size_t>(m * ldC + gi * COgp + o)];
  return y;
}

// The implicit method as it was: row blocks outer, C_O tiles inner, B staged per call.
std::vector<double> legacy_implicit(const ConvLayer& l, const std::vector<double>& x,
                                    const std::vector<double>& w, TensorUnit& unit) {
  const index_t S = unit.side(), g = l.groups, Cg = l.C_I_group(), COg = l.C_O_group();
  const index_t HO = l.H_O(), WO = l.W_O(), M = l.M(), P = implicit_packed_taps(l, S);
  const index_t chunks = P > 1 ? 1 : (Cg + S - 1) / S;
  std::vector<double> y(l.ofmap_elements(), 0.0), A(static_cast<size_t>(S * S)),
      B(static_cast<size_t>(S * S)), Ct(static_cast<size_t>(S * S));
  for (index_t gi = 0; gi < g; ++gi)
    for (index_t m0 = 0; m0 < M; m0 += S)
      for (index_t o0 = 0; o0 < COg; o0 += S) {
        const index_t rows = std::min(S, M - m0), cols = std::min(S, COg - o0);
        bool first = true;
        for (index_t fh = 0; fh < l.H_F; ++fh)
          for (index_t fw0 = 0; fw0 < l.W_F; fw0 += P)
            for (index_t cc = 0; cc < chunks; ++cc) {
              const index_t taps = std::min(P, l.W_F - fw0), c0 = cc * S, cw = std::min(S, Cg - c0);
              std::fill(A.begin(), A.end(), 0.0);
              std::fill(B.begin(), B.end(), 0.0);
              for (index_t i = 0; i < rows; ++i) {
                const index_t m = m0 + i, wo = m % WO, ho = m / WO % HO, n = m / (WO * HO);
                const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
                for (index_t j = 0; j < taps; ++j) {
                  const index_t wi = wo * l.stride_w - l.pad_left + (fw0 + j) * l.dilation_w;
                  if (h < 0 || h >= l.H_I || wi < 0 || wi >= l.W_I) continue;
                  for (index_t c = 0; c < cw; ++c)
                    A[static_cast<size_t>(i * S + j * cw + c)] = x[static_cast<size_t>(
                        ((n * l.H_I + h) * l.W_I + wi) * l.C_I + gi * Cg + c0 + c)];
                }
              }
              for (index_t j = 0; j < taps; ++j)
                for (index_t c = 0; c < cw; ++c)
                  for (index_t k = 0; k < cols; ++k)
                    B[static_cast<size_t>((j * cw + c) * S + k)] = w[static_cast<size_t>(
                        (((gi * COg + o0 + k) * Cg + c0 + c) * l.H_F + fh) * l.W_F + fw0 + j)];
              unit.multiply(S, A.data(), S, B.data(), S, Ct.data(), S, !first);
              first = false;
            }
        for (index_t i = 0; i < rows; ++i)
          for (index_t k = 0; k < cols; ++k)
            y[static_cast<size_t>((m0 + i) * l.C_O + gi * COg + o0 + k)] =
                Ct[static_cast<size_t>(i * S + k)];
      }
  return y;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](double p, double q) {
           return std::bit_cast<std::uint64_t>(p) == std::bit_cast<std::uint64_t>(q);
         });
}

// Strides, dilations and pads per axis and side, with groups.
ConvLayer per_axis() {
  ConvLayer l = make(1, 6, 9, 11, 10, 3, 2, 1, 0, 1, 2);
  l.stride_h = 2, l.stride_w = 1, l.dilation_h = 1, l.dilation_w = 3;
  l.pad_top = 2, l.pad_left = 0, l.pad_bottom = 1, l.pad_right = 3;
  validate_layer(l, "test");
  return l;
}

std::vector<ConvLayer> shapes() {
  return {make(1, 3, 9, 9, 6, 3, 3, 1, 1),          // C_I < S: packed taps, C_O < S
          make(2, 5, 7, 6, 20, 3, 2, 2, 1),         // batch, stride, uneven C_O tiles
          make(1, 8, 9, 9, 8, 3, 3, 1, 2, 2, 2),    // dilation, groups
          make(1, 12, 5, 5, 16, 1, 1, 1, 0, 1, 2),  // 1x1, groups, whole tiles
          make(1, 9, 3, 3, 10, 3, 3, 1, 1, 1, 1),   // M < S
          make(1, 20, 6, 6, 24, 3, 3, 1, 1, 1, 4),  // chunks of C_I, groups 4
          per_axis()};
}

}  // namespace

TEST_CASE("work units: outputs bitwise and counters exactly as the whole-layer code",
          "[conv][units]") {
  for (const index_t S : {4, 8}) {
    for (const ConvLayer& l : shapes()) {
      const std::vector<double> x = random_tensor(l.ifmap_elements(), 7, 0),
                                w = random_tensor(l.weight_elements(), 7, 1);
      for (const bool is_explicit : {true, false}) {
        INFO("S " << S << " layer " << l.shape_string()
                  << (is_explicit ? " explicit" : " implicit"));
        TensorUnit old_unit(S * S, 3), new_unit(S * S, 3);
        const std::vector<double> old_y =
            is_explicit ? legacy_explicit(l, x, w, old_unit) : legacy_implicit(l, x, w, old_unit);
        const ConvResult r =
            is_explicit ? explicit_conv(l, x, w, new_unit) : implicit_conv(l, x, w, new_unit);
        CHECK(same_bits(r.output, old_y));
        check_same_cost(old_unit.cost(), new_unit.cost());
        CHECK(r.stats.useful_macs == l.macs());
        // the closed form the distribution balances by
        CHECK(r.stats.macs_dense == conv_unit_dense_macs(l, S, is_explicit) *
                                        static_cast<std::uint64_t>(conv_work_units(l, S)));
      }
    }
  }
}

TEST_CASE("work units: every partition of a layer's units sums to the whole layer",
          "[conv][units]") {
  const index_t S = 4;
  const ConvLayer l = make(2, 6, 6, 5, 20, 3, 3, 1, 1, 1, 2);  // 2 groups x 3 tiles
  const index_t U = conv_work_units(l, S);
  REQUIRE(U == 6);
  const std::vector<double> x = random_tensor(l.ifmap_elements(), 3, 0),
                            w = random_tensor(l.weight_elements(), 3, 1);
  const std::vector<std::vector<index_t>> cuts = {
      {0, 6}, {0, 1, 6}, {0, 3, 3, 6}, {0, 2, 5, 6}, {0, 1, 2, 3, 4, 5, 6}};
  for (const bool is_explicit : {true, false}) {
    TensorUnit whole_unit(S * S, 2);
    const ConvResult whole = is_explicit ? explicit_conv_units(l, x, w, whole_unit, 0, U)
                                         : implicit_conv_units(l, x, w, whole_unit, 0, U);
    for (const auto& cut : cuts) {
      INFO((is_explicit ? "explicit" : "implicit") << ", " << cut.size() - 1 << " ranges");
      ConvStats sum;
      std::vector<double> blocks;
      for (size_t i = 0; i + 1 < cut.size(); ++i) {
        TensorUnit unit(S * S, 2);  // a separate unit per range, as on separate ranks
        const ConvResult part = is_explicit
                                    ? explicit_conv_units(l, x, w, unit, cut[i], cut[i + 1])
                                    : implicit_conv_units(l, x, w, unit, cut[i], cut[i + 1]);
        CHECK(part.output.size() == conv_unit_output_elements(l, S, cut[i], cut[i + 1]));
        blocks.insert(blocks.end(), part.output.begin(), part.output.end());
        add_unit_stats(sum, part.stats);
      }
      CHECK(same_bits(blocks, whole.output));
      CHECK(summed_counters(sum) == summed_counters(whole.stats));
      CHECK(sum.peak_extra_bytes == whole.stats.peak_extra_bytes);
    }
  }
}

TEST_CASE("work units: columns, block placement and range checks", "[conv][units]") {
  const ConvLayer l = make(1, 4, 3, 3, 10, 1, 1, 1, 0, 1, 2);  // C_O_group 5
  CHECK(conv_work_units(l, 4) == 4);
  const ConvUnitColumns c = conv_unit_columns(l, 4, 3);
  CHECK(c.group == 1);
  CHECK(c.first == 9);
  CHECK(c.count == 1);
  CHECK(conv_unit_output_elements(l, 4, 0, 4) == l.ofmap_elements());
  std::vector<double> nhwc(l.ofmap_elements(), -1.0);
  std::vector<double> blocks(conv_unit_output_elements(l, 4, 1, 2));  // unit 1: channel 4
  for (size_t i = 0; i < blocks.size(); ++i) blocks[i] = static_cast<double>(i);
  place_unit_blocks(l, 4, 1, 2, blocks, nhwc);
  for (index_t m = 0; m < l.M(); ++m) {
    CHECK(nhwc[static_cast<size_t>(m * 10 + 4)] == static_cast<double>(m));
    CHECK(nhwc[static_cast<size_t>(m * 10 + 3)] == -1.0);
  }
  TensorUnit unit(16, 0);
  const std::vector<double> x = random_tensor(l.ifmap_elements(), 1, 0),
                            w = random_tensor(l.weight_elements(), 1, 1);
  CHECK_THROWS_AS(implicit_conv_units(l, x, w, unit, 2, 5), triada::internal_error);
  CHECK_THROWS_AS(explicit_conv_units(l, x, w, unit, 3, 2), triada::internal_error);
  CHECK(implicit_conv_units(l, x, w, unit, 2, 2).output.empty());
  CHECK(unit.cost().calls == 0);
}

TEST_CASE("the split over ranks: contiguous, every unit once, shares within one unit's cost",
          "[conv][units]") {
  const std::vector<ConvLayer> layers = {make(1, 3, 32, 32, 64, 3, 3, 1, 1),
                                         make(1, 64, 16, 16, 128, 3, 3, 1, 1, 1, 2),
                                         make(2, 16, 8, 8, 8, 1, 1, 1, 0)};
  const index_t S = 16;
  // The measure: dense MACs plus 128 per word of the unit's weight slice, S x K_group
  // padded to S (layer 1: 3 x 3 x 3 = 27 -> 32; layer 2: 32 x 3 x 3 = 288 per group).
  for (const bool ex : {true, false}) {
    CHECK(conv_unit_split_cost(layers[0], S, ex) ==
          conv_unit_dense_macs(layers[0], S, ex) + 128u * 16u * 32u);
    CHECK(conv_unit_split_cost(layers[1], S, ex) ==
          conv_unit_dense_macs(layers[1], S, ex) + 128u * 16u * 288u);
  }
  for (const int K : {1, 2, 3, 5, 40}) {
    INFO(K << " ranks");
    const auto split = split_conv_work(layers, S, true, true, K);
    REQUIRE(split.size() == static_cast<size_t>(K));
    // Concatenated in rank order, the parts walk the items in order without a gap.
    size_t layer = 0;
    bool is_explicit = true;
    index_t next = 0;
    std::vector<std::uint64_t> cost(static_cast<size_t>(K), 0);
    std::uint64_t total = 0, largest = 0;
    for (int r = 0; r < K; ++r)
      for (const ConvPart& p : split[static_cast<size_t>(r)]) {
        if (next == conv_work_units(layers[layer], S)) {  // the previous item is complete
          if (is_explicit) {
            is_explicit = false;
          } else {
            is_explicit = true;
            ++layer;
          }
          next = 0;
        }
        CHECK(p.layer == layer);
        CHECK(p.is_explicit == is_explicit);
        CHECK(p.u0 == next);
        CHECK(p.u1 > p.u0);
        next = p.u1;
        const std::uint64_t c = conv_unit_split_cost(layers[p.layer], S, p.is_explicit);
        cost[static_cast<size_t>(r)] += c * static_cast<std::uint64_t>(p.u1 - p.u0);
        largest = std::max(largest, c);
      }
    CHECK(layer == layers.size() - 1);
    CHECK(!is_explicit);
    CHECK(next == conv_work_units(layers.back(), S));
    for (const std::uint64_t c : cost) total += c;
    for (const std::uint64_t c : cost)
      if (K <= 5)
        CHECK(c * static_cast<std::uint64_t>(K) <= total + static_cast<std::uint64_t>(K) * largest);
  }
}
