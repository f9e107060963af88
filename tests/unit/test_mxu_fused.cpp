// The planar MXU's fused executor against the reference (the cell-by-cell spec): bitwise the
// same C and exactly the same counters over a randomized matrix of calls (unit size, rows,
// leading dimensions, latency, weak model, cell mode, dense / ESOP, sparsity, accumulate,
// adversarial values: signed zeros, underflowing products, Inf, NaN), then whole TCU
// algorithms and convolutions run with both executors, and the fused executor on every
// kernel path this CPU runs.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "core/error.hpp"
#include "kernels/isa.hpp"
#include "mxu/memory_side.hpp"
#include "mxu/tcu_algorithms.hpp"
#include "mxu/tcu_linear_algebra.hpp"
#include "mxu/tensor_unit.hpp"
#include "support/catch.hpp"
#include "support/tcu_cost_checks.hpp"

using namespace triada;

namespace {

// Bit patterns, so that -0 != +0 and NaN payloads count.
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint64_t>(v[i]);
  return b;
}

enum class Values { uniform, integers, adversarial, nonfinite };

// A value: zero (either sign) with probability `zeros`, else one of the flavour's values.
struct ValueGen {
  std::mt19937_64 gen;
  double zeros;
  Values kind;
  double operator()() {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::uniform_int_distribution<int> pick(0, 15);
    if (std::uniform_real_distribution<double>(0, 1)(gen) < zeros)
      return pick(gen) % 2 ? 0.0 : -0.0;
    const double inf = std::numeric_limits<double>::infinity();
    const double tiny = std::ldexp(1.0, -540);  // tiny * tiny underflows to +-0 in an fma
    switch (kind) {
      case Values::uniform:
        return u(gen);
      case Values::integers:
        return static_cast<double>(pick(gen) - 7);
      case Values::adversarial: {
        const double v[] = {tiny,   -tiny,  3 * tiny,
                            -0.0,   0.0,    1.0,
                            -1.0,   0.5,    std::numeric_limits<double>::denorm_min(),
                            -2.0,   1e300,  -1e300,
                            u(gen), u(gen), tiny * 0.75,
                            -0.0};
        return v[pick(gen)];
      }
      case Values::nonfinite: {
        const int p = pick(gen);
        if (p == 0) return inf;
        if (p == 1) return -inf;
        if (p == 2) return std::numeric_limits<double>::quiet_NaN();
        if (p == 3) return -std::numeric_limits<double>::quiet_NaN();
        return p < 8 ? 0.0 : u(gen);
      }
    }
    return 0.0;
  }
};

struct CallCase {
  std::int64_t m = 16, latency = 0;
  bool weak = false;
  Mode mode = Mode::esop;
  CellMode cell = CellMode::fp64;
  index_t r = 4, lda_pad = 0, ldc_pad = 0;
  int calls = 2;  // several calls on one unit: counters add up, scratch is reused
  bool accumulate = false;
};

// Runs the same calls on a reference and a fused unit; C (padding columns included) must
// agree bit for bit, every counter exactly.
void compare_call(const CallCase& k, ValueGen& va, ValueGen& vb, ValueGen& vc) {
  TensorUnit ref(k.m, k.latency, k.weak, k.mode, k.cell, MxuExecutor::reference);
  TensorUnit fus(k.m, k.latency, k.weak, k.mode, k.cell);
  REQUIRE(fus.executor() == MxuExecutor::fused);
  const index_t s = ref.side(), lda = s + k.lda_pad, ldb = s + k.lda_pad, ldc = s + k.ldc_pad;
  for (int call = 0; call < k.calls; ++call) {
    std::vector<double> A(static_cast<size_t>(k.r * lda)), B(static_cast<size_t>(s * ldb)),
        C(static_cast<size_t>(k.r * ldc));
    for (auto& v : A) v = va();
    for (auto& v : B) v = vb();
    for (auto& v : C) v = vc();
    std::vector<double> Cf = C;
    ref.multiply(k.r, A.data(), lda, B.data(), ldb, C.data(), ldc, k.accumulate);
    fus.multiply(k.r, A.data(), lda, B.data(), ldb, Cf.data(), ldc, k.accumulate);
    INFO("m " << k.m << " r " << k.r << " cell " << to_string(k.cell) << " esop "
              << (k.mode == Mode::esop) << " acc " << k.accumulate << " call " << call);
    CHECK(bits(Cf) == bits(C));
  }
  check_same_cost(fus.cost(), ref.cost());
}

}  // namespace

TEST_CASE("the fused MXU executor gives the reference's bits and counters", "[mxu][fused]") {
  std::mt19937_64 gen(12);
  const std::int64_t sizes[] = {1, 4, 9, 16, 25, 64, 256};
  const double sparsity[] = {0.0, 0.5, 0.9, 1.0};
  const Values kinds[] = {Values::uniform, Values::integers, Values::adversarial,
                          Values::nonfinite};
  int cases = 0;
  for (const std::int64_t m : sizes)
    for (int rep = 0; rep < (m >= 256 ? 14 : 40); ++rep) {
      CallCase k;
      k.m = m;
      const auto s = static_cast<index_t>(std::llround(std::sqrt(static_cast<double>(m))));
      k.weak = gen() % 5 == 0;
      const index_t rs[] = {s, s + 1, 2 * s + s / 2, 3 * s, 4 * s - 1, 7 * s + 3};
      k.r = k.weak ? s : rs[gen() % (m >= 256 ? 3 : 6)];
      k.latency = static_cast<std::int64_t>(gen() % 3) * 5;
      k.mode = gen() % 3 == 0 ? Mode::dense : Mode::esop;
      // fp64 most often (the kernels); every other mode now and then (the scalar loop).
      k.cell = gen() % 2 ? CellMode::fp64 : static_cast<CellMode>(gen() % kCellModes);
      k.accumulate = gen() % 2 == 0;
      k.lda_pad = gen() % 3 == 0 ? static_cast<index_t>(gen() % 5) : 0;
      k.ldc_pad = gen() % 3 == 0 ? static_cast<index_t>(gen() % 5) : 0;
      const Values kind = kinds[gen() % 4];
      ValueGen va{std::mt19937_64(gen()), sparsity[gen() % 4], kind};
      ValueGen vb{std::mt19937_64(gen()), sparsity[gen() % 4], kind};
      ValueGen vc{std::mt19937_64(gen()), 0.3,
                  kind == Values::nonfinite ? kind : Values::adversarial};
      compare_call(k, va, vb, vc);
      ++cases;
    }
  CHECK(cases > 200);
}

TEST_CASE("fused: every cell mode, dense and ESOP, with and without accumulation", "[mxu][fused]") {
  for (int cm = 0; cm < kCellModes; ++cm)
    for (const Mode mode : {Mode::dense, Mode::esop})
      for (const bool acc : {false, true})
        for (const Values kind : {Values::uniform, Values::adversarial}) {
          CallCase k;
          k.m = 16;
          k.r = 13;
          k.cell = static_cast<CellMode>(cm);
          k.mode = mode;
          k.accumulate = acc;
          ValueGen va{std::mt19937_64(cm * 4 + 1), 0.3, kind},
              vb{std::mt19937_64(cm * 4 + 2), 0.3, kind};
          ValueGen vc{std::mt19937_64(cm * 4 + 3), 0.3, Values::adversarial};
          compare_call(k, va, vb, vc);
        }
}

TEST_CASE("fused: the signed-zero cases where ESOP and dense differ", "[mxu][fused]") {
  // Hand-computed: W0 = -0 (accumulate), A = [1 0; 0 -t], B = [0 0; 0 t], t = 2^-540.
  // ESOP skips every product with a zero operand, so -0 stays; dense adds +0 products and
  // -0 + +0 = +0. The one real update, -t * t, underflows to -0.
  const double tiny = std::ldexp(1.0, -540);
  const std::vector<double> A{1.0, 0.0, 0.0, -tiny}, B{0.0, 0.0, 0.0, tiny};
  for (const MxuExecutor e : {MxuExecutor::reference, MxuExecutor::fused}) {
    TensorUnit esop(4, 0, false, Mode::esop, CellMode::fp64, e);
    TensorUnit dense(4, 0, false, Mode::dense, CellMode::fp64, e);
    std::vector<double> Ce{-0.0, -0.0, -0.0, -0.0}, Cd = Ce;
    esop.multiply(2, A.data(), 2, B.data(), 2, Ce.data(), 2, true);
    dense.multiply(2, A.data(), 2, B.data(), 2, Cd.data(), 2, true);
    INFO("executor " << to_string(e));
    // Row 0 and C[1][0]: every product has a zero operand.
    CHECK(bits(Ce) == bits(std::vector<double>{-0.0, -0.0, -0.0, -0.0}));
    CHECK(!std::signbit(Cd[0]));
    CHECK(!std::signbit(Cd[1]));
    CHECK(!std::signbit(Cd[2]));
    // C[1][1]: -t * t underflows to -0 (a real update under ESOP too).
    CHECK(Ce[3] == 0.0);
    CHECK(std::signbit(Ce[3]));
    CHECK(esop.cost().macs == 1);
    CHECK(dense.cost().macs == 8);
  }
  // Fresh W: +0 + (-t * t) rounds to -0; the rest stay +0.
  std::vector<double> C(4, 7.0);
  TensorUnit u(4, 0);
  u.multiply(2, A.data(), 2, B.data(), 2, C.data(), 2, false);
  CHECK(bits(C) == bits(std::vector<double>{0.0, 0.0, 0.0, -0.0}));
}

TEST_CASE("fused: Inf and NaN follow the cell rule (Inf * 0 only where dense updates)",
          "[mxu][fused]") {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> A{inf, 1.0, 2.0, 3.0}, B{0.0, 1.0, 1.0, 0.0};
  TensorUnit esop(4, 0), dense(4, 0, false, Mode::dense);
  std::vector<double> Ce(4), Cd(4);
  esop.multiply(2, A.data(), 2, B.data(), 2, Ce.data(), 2);
  dense.multiply(2, A.data(), 2, B.data(), 2, Cd.data(), 2);
  // ESOP: C[0][0] = inf * 0 skipped + 1 * 1 = 1; dense: inf * 0 = NaN.
  CHECK(Ce[0] == 1.0);
  CHECK(Ce[1] == inf);
  CHECK(std::isnan(Cd[0]));
  CHECK(Cd[1] == inf);
  CHECK(Ce[2] == 3.0);
  CHECK(Ce[3] == 2.0);
}

TEST_CASE("fused: TCU algorithms give the same results and counters with both executors",
          "[mxu][fused][tcu]") {
  for (const char* name : {"matmul", "strassen", "ge", "dft", "intmul", "stencil"})
    for (const std::int64_t m : {4, 16}) {
      TensorUnit ref(m, 3, false, Mode::esop, CellMode::fp64, MxuExecutor::reference);
      TensorUnit fus(m, 3);
      const std::string n = name;
      const TcuProblem p{n == "intmul" ? 512 : n == "dft" ? 16 : 24, 5, ""};
      const TcuRun a = find_tcu_algorithm(name).run(ref, p);
      const TcuRun b = find_tcu_algorithm(name).run(fus, p);
      INFO(name << " m " << m);
      CHECK(a.verified == b.verified);
      CHECK(a.details == b.details);
      check_same_cost(ref.cost(), fus.cost());
    }
  // The products themselves, bit for bit, on a weak unit and with a ragged side.
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> d(-1, 1);
  for (const bool weak : {false, true}) {
    const index_t side = 37;
    std::vector<double> A(side * side), B(side * side);
    for (auto& v : A) v = gen() % 4 == 0 ? 0.0 : d(gen);
    for (auto& v : B) v = gen() % 4 == 0 ? -0.0 : d(gen);
    TensorUnit ref(16, 2, weak, Mode::esop, CellMode::fp64, MxuExecutor::reference);
    TensorUnit fus(16, 2, weak);
    CHECK(bits(tcu_matmul_dense(ref, A, B, side)) == bits(tcu_matmul_dense(fus, A, B, side)));
    CHECK(bits(tcu_strassen_dense(ref, A, B, side)) == bits(tcu_strassen_dense(fus, A, B, side)));
    check_same_cost(ref.cost(), fus.cost());
  }
}

namespace {

// A buffer of about six right tiles beside the staging, so tiles get evicted and reloaded.
MxuMemoryParams small_buffer(index_t S) {
  MxuMemoryParams p;
  p.sram_kib = std::max<std::int64_t>(1, (10 * S * S * 8 + 1023) / 1024);
  return p;
}

}  // namespace

TEST_CASE("fused: explicit and implicit convolution agree with the reference executor",
          "[mxu][fused][conv]") {
  struct Shape {
    index_t N, CI, HI, WI, CO, HF, WF, stride, pad, dil, groups;
    bool slabs = false;  // only where the slabs are (fp64, m = 64): the reference is slow
  };
  // The last two: more C_O tiles than one fused run takes (256 / S), so runs split; a
  // lowered matrix of 578 rows of 1440 words (over 4 MiB), built and multiplied in slabs of
  // 512 rows and 66 by the fused executor.
  const Shape shapes[] = {
      {1, 3, 9, 8, 5, 3, 3, 1, 1, 1, 1},   {2, 8, 7, 7, 12, 3, 2, 2, 1, 1, 2},
      {1, 20, 6, 6, 18, 3, 3, 1, 2, 2, 1}, {1, 4, 5, 5, 4, 1, 1, 1, 0, 1, 4},
      {1, 5, 3, 4, 272, 3, 3, 1, 1, 1, 1}, {2, 160, 17, 17, 20, 3, 3, 1, 1, 1, 1, true}};
  std::uint64_t implicit_hits = 0, explicit_hits = 0;
  for (const Shape& sh : shapes)
    for (const std::int64_t m : {4, 16, 64})
      for (const CellMode cm : {CellMode::fp64, CellMode::bf16}) {
        if (sh.slabs && (m != 64 || cm != CellMode::fp64)) continue;
        ConvLayer l;
        l.name = "t";
        l.N = sh.N, l.C_I = sh.CI, l.H_I = sh.HI, l.W_I = sh.WI, l.C_O = sh.CO;
        l.H_F = sh.HF, l.W_F = sh.WF, l.groups = sh.groups;
        l.set_stride(sh.stride), l.set_pad(sh.pad), l.set_dilation(sh.dil);
        validate_layer(l, "test");
        std::vector<double> x = random_tensor(l.ifmap_elements(), 9, 0);
        std::vector<double> w = random_tensor(l.weight_elements(), 9, 1);
        for (size_t i = 0; i < x.size(); i += 3) x[i] = 0.0;  // ReLU-like zeros for ESOP
        for (size_t i = 0; i < w.size(); i += 7) w[i] = 0.0;  // and pruned weights
        const index_t S = static_cast<index_t>(std::lround(std::sqrt(double(m))));
        const index_t U = conv_work_units(l, S);
        for (const bool implicit : {false, true}) {
          TensorUnit ref(m, 1, false, Mode::esop, cm, MxuExecutor::reference);
          MemorySide ref_mem(small_buffer(S), S);
          ref.set_memory(&ref_mem);
          const ConvResult a = implicit ? implicit_conv(l, x, w, ref) : explicit_conv(l, x, w, ref);
          // The fused executor on the whole layer, and on two ranges of units (as on two
          // ranks: the cut falls inside a group's run where there are several tiles).
          for (const index_t cut : {U, U / 2 + 1}) {
            TensorUnit fus(m, 1, false, Mode::esop, cm);
            MemorySide fus_mem(small_buffer(S), S);
            fus.set_memory(&fus_mem);
            ConvStats st;
            std::vector<double> blocks;
            for (const auto& [u0, u1] : {std::pair{index_t{0}, cut}, std::pair{cut, U}}) {
              const ConvResult r = implicit ? implicit_conv_units(l, x, w, fus, u0, u1)
                                            : explicit_conv_units(l, x, w, fus, u0, u1);
              blocks.insert(blocks.end(), r.output.begin(), r.output.end());
              add_unit_stats(st, r.stats);
            }
            std::vector<double> b(l.ofmap_elements(), 0.0);
            place_unit_blocks(l, S, 0, U, blocks, b);
            INFO(l.shape_string() << " m " << m << " implicit " << implicit << " cut " << cut
                                  << " of " << U);
            CHECK(bits(a.output) == bits(b));
            CHECK(summed_counters(a.stats) == summed_counters(st));
            check_same_cost(ref.cost(), fus.cost());
            CHECK(ref_mem.cost() == fus_mem.cost());
          }
          (implicit ? implicit_hits : explicit_hits) += ref_mem.cost().tile_hits;
        }
      }
  CHECK(implicit_hits > 0);  // right tiles reused across row blocks (explicit: no reuse)
  CHECK(explicit_hits == 0);
}

namespace {

// A grid of chains: C (row_blocks r x blocks s) (+)= A (row_blocks r x links s)
// B (links s x blocks s), leading dimensions padded.
struct ChainCase {
  index_t s = 4, r = 4, links = 2, blocks = 1, row_blocks = 1, pad = 0;
  bool weak = false, accumulate_first = false, units = false;  // units: a work unit per chain
  Mode mode = Mode::esop;
  CellMode cell = CellMode::fp64;
};

// One unit with its memory side; `chain` runs multiply_chain (multiply_chains for a grid),
// else the loop of calls that defines them.
struct ChainRun {
  MemorySide mem;
  TensorUnit unit;
  ChainRun(const ChainCase& k, MxuExecutor e)
      : mem(chain_memory(), k.s), unit(k.s * k.s, 2, k.weak, k.mode, k.cell, e) {
    unit.set_memory(&mem);
  }
  static MxuMemoryParams chain_memory() {
    MxuMemoryParams p;
    p.sram_kib = 16;  // s = 16: 2048 words, a few resident tiles, so tiles get evicted
    return p;
  }
  void run(const ChainCase& k, const std::vector<double>& A, const std::vector<double>& B,
           std::vector<double>& C, bool chain) {
    const index_t s = k.s, lda = k.links * s + k.pad, ld = k.blocks * s + k.pad;
    const bool grid = k.blocks > 1 || k.row_blocks > 1;
    if (chain && !grid)
      unit.multiply_chain(k.r, A.data(), lda, B.data(), ld, C.data(), ld, k.links,
                          k.accumulate_first);
    if (chain && grid)
      unit.multiply_chains(k.r, A.data(), lda, B.data(), ld, C.data(), ld, k.links,
                           {k.row_blocks, k.blocks, k.units}, k.accumulate_first);
    if (chain) return;
    for (index_t b = 0; b < k.row_blocks; ++b)
      for (index_t j = 0; j < k.blocks; ++j) {
        if (k.units) unit.start_work_unit();
        for (index_t q = 0; q < k.links; ++q)
          unit.multiply(k.r, A.data() + b * k.r * lda + q * s, lda, B.data() + q * s * ld + j * s,
                        ld, C.data() + b * k.r * ld + j * s, ld, q > 0 || k.accumulate_first);
      }
  }
};

// The chain against its loop of calls on a reference and a fused unit (four runs: loop and
// chain on each): C bit for bit, every TcuCost field, the memory side's counters.
void compare_chain(const ChainCase& k, ValueGen& va, ValueGen& vb, ValueGen& vc) {
  const index_t s = k.s, lda = k.links * s + k.pad, ld = k.blocks * s + k.pad;
  ChainRun oracle(k, MxuExecutor::reference), ref_chain(k, MxuExecutor::reference);
  ChainRun fus_loop(k, MxuExecutor::fused), fus_chain(k, MxuExecutor::fused);
  for (int rep = 0; rep < 2; ++rep) {  // scratch reuse; the memory side carries over
    const index_t rows = k.row_blocks * k.r;
    std::vector<double> A(static_cast<size_t>(rows * lda)),
        B(static_cast<size_t>(k.links * s * ld)), C(static_cast<size_t>(rows * ld));
    for (auto& v : A) v = va();
    for (auto& v : B) v = vb();
    for (auto& v : C) v = vc();
    std::vector<double> C1 = C, C2 = C, C3 = C;
    oracle.run(k, A, B, C, false);
    ref_chain.run(k, A, B, C1, true);
    fus_loop.run(k, A, B, C2, false);
    fus_chain.run(k, A, B, C3, true);
    INFO("s " << s << " r " << k.r << " links " << k.links << " blocks " << k.row_blocks << " x "
              << k.blocks << " cell " << to_string(k.cell) << " esop " << (k.mode == Mode::esop)
              << " acc " << k.accumulate_first << " weak " << k.weak << " rep " << rep);
    CHECK(bits(C1) == bits(C));
    CHECK(bits(C2) == bits(C));
    CHECK(bits(C3) == bits(C));
  }
  for (const ChainRun* u : {&ref_chain, &fus_loop, &fus_chain}) {
    check_same_cost(u->unit.cost(), oracle.unit.cost());
    CHECK(u->mem.cost() == oracle.mem.cost());
  }
}

}  // namespace

TEST_CASE("multiply_chain(s) are their loops of accumulating calls: bits, counters, memory side",
          "[mxu][fused][chain]") {
  std::mt19937_64 gen(21);
  const index_t sides[] = {1, 2, 4, 16};
  const double sparsity[] = {0.0, 0.5, 0.9, 1.0};
  const Values kinds[] = {Values::uniform, Values::integers, Values::adversarial,
                          Values::nonfinite};
  for (int rep = 0; rep < 120; ++rep) {
    ChainCase k;
    k.s = sides[gen() % 4];
    k.weak = gen() % 6 == 0;
    const index_t rs[] = {k.s, k.s + 1, 2 * k.s + 3, 3 * k.s};
    k.r = k.weak ? k.s : rs[gen() % 4];
    k.links = 1 + static_cast<index_t>(gen() % 5);
    k.blocks = gen() % 3 == 0 ? 2 + static_cast<index_t>(gen() % 3) : 1;
    k.row_blocks = gen() % 3 == 0 ? 2 + static_cast<index_t>(gen() % 3) : 1;
    k.units = (k.blocks > 1 || k.row_blocks > 1) && gen() % 2 == 0;
    k.pad = gen() % 3 == 0 ? static_cast<index_t>(gen() % 4) : 0;
    k.accumulate_first = gen() % 2 == 0;
    k.mode = gen() % 3 == 0 ? Mode::dense : Mode::esop;
    // fp64 most often (the chain kernel); every other mode now and then (they loop).
    k.cell = gen() % 3 ? CellMode::fp64 : static_cast<CellMode>(gen() % kCellModes);
    const Values kind = kinds[gen() % 4];
    ValueGen va{std::mt19937_64(gen()), sparsity[gen() % 4], kind};
    ValueGen vb{std::mt19937_64(gen()), sparsity[gen() % 4], kind};
    ValueGen vc{std::mt19937_64(gen()), 0.3,
                kind == Values::nonfinite ? kind : Values::adversarial};
    compare_chain(k, va, vb, vc);
  }
}

TEST_CASE("multiply_chain: every cell mode, and a depth of several kernel chunks",
          "[mxu][fused][chain]") {
  for (int cm = 0; cm < kCellModes; ++cm)
    for (const Mode mode : {Mode::dense, Mode::esop}) {
      ChainCase k;
      k.s = 4, k.r = 9, k.links = 3, k.cell = static_cast<CellMode>(cm), k.mode = mode;
      k.accumulate_first = cm % 2 == 0;
      ValueGen va{std::mt19937_64(cm + 1), 0.3, Values::adversarial},
          vb{std::mt19937_64(cm + 2), 0.3, Values::adversarial},
          vc{std::mt19937_64(cm + 3), 0.3, Values::adversarial};
      compare_chain(k, va, vb, vc);
    }
  // 6400 steps: more than one depth chunk of the packed B (at most 6144 steps of a side
  // of 1 or 4 on any instruction set), so C goes through memory between chunks.
  for (const index_t s : {1, 4})
    for (const Mode mode : {Mode::dense, Mode::esop})
      for (const Values kind : {Values::adversarial, Values::nonfinite}) {
        ChainCase k;
        k.s = s, k.r = 2 * s + 1, k.links = 6400 / s, k.mode = mode, k.accumulate_first = true;
        ValueGen va{std::mt19937_64(s), 0.5, kind}, vb{std::mt19937_64(s + 7), 0.5, kind},
            vc{std::mt19937_64(s + 9), 0.3, kind};
        compare_chain(k, va, vb, vc);
      }
  // Chains on 16 blocks of s = 16: 256 columns, whose packed depth chunk is shorter than
  // the 208 steps (on any instruction set), so C goes through memory between chunks.
  for (const Mode mode : {Mode::dense, Mode::esop}) {
    ChainCase k;
    k.s = 16, k.r = 17, k.links = 13, k.blocks = 16, k.row_blocks = 2, k.mode = mode;
    const Values kind = mode == Mode::esop ? Values::nonfinite : Values::adversarial;
    ValueGen va{std::mt19937_64(3), 0.5, kind}, vb{std::mt19937_64(4), 0.5, kind},
        vc{std::mt19937_64(5), 0.3, kind};
    compare_chain(k, va, vb, vc);
  }
}

TEST_CASE("multiply_chain validates as its first call would, and zero links do nothing",
          "[mxu][fused][chain]") {
  const std::vector<double> A(64, 1.0), B(64, 1.0);
  for (const MxuExecutor e : {MxuExecutor::reference, MxuExecutor::fused}) {
    std::vector<double> C(16, 5.0);
    TensorUnit weak(16, 0, true, Mode::esop, CellMode::fp64, e),
        u(16, 0, false, Mode::esop, CellMode::fp64, e);
    CHECK_THROWS_AS(weak.multiply_chain(5, A.data(), 8, B.data(), 4, C.data(), 4, 2),
                    triada::internal_error);
    CHECK_THROWS_AS(u.multiply_chain(3, A.data(), 8, B.data(), 4, C.data(), 4, 2),
                    triada::internal_error);
    CHECK(weak.cost().calls == 0);
    CHECK(u.cost().calls == 0);
    u.multiply_chain(4, A.data(), 8, B.data(), 4, C.data(), 4, 0);
    CHECK(u.cost().calls == 0);
    CHECK(C == std::vector<double>(16, 5.0));
    // Two links of all-ones 4 x 4: every output is 8 (+ nothing: the first link is fresh).
    u.multiply_chain(4, A.data(), 8, B.data(), 4, C.data(), 4, 2);
    CHECK(C == std::vector<double>(16, 8.0));
    CHECK(u.cost().calls == 2);
    CHECK(u.cost().macs == 2 * 64);
  }
}

TEST_CASE("the executor is chosen by the constructor or set_executor and parsed by name",
          "[mxu][fused]") {
  TensorUnit u(16, 0);
  CHECK(u.executor() == MxuExecutor::fused);
  u.set_executor(MxuExecutor::reference);
  CHECK(u.executor() == MxuExecutor::reference);
  CHECK(parse_mxu_executor("reference") == MxuExecutor::reference);
  CHECK(parse_mxu_executor("fused") == MxuExecutor::fused);
  CHECK(to_string(MxuExecutor::fused) == "fused");
  CHECK_THROWS_AS(parse_mxu_executor("fast"), config_error);
}

namespace {

// A random grid of fp64 chains (calls when links = 1), ragged sides and row counts.
ChainCase random_chain(std::mt19937_64& gen) {
  ChainCase k;
  const index_t sides[] = {1, 2, 3, 4, 5, 8, 16};
  k.s = sides[gen() % 7];
  const index_t rs[] = {k.s, 2 * k.s + 3, 3 * k.s + 1, 7 * k.s + 5};
  k.weak = gen() % 6 == 0;
  k.r = k.weak ? k.s : rs[gen() % 4];
  k.links = 1 + static_cast<index_t>(gen() % 4);
  k.blocks = gen() % 3 == 0 ? 2 + static_cast<index_t>(gen() % 3) : 1;
  k.row_blocks = gen() % 3 == 0 ? 2 : 1;
  k.pad = gen() % 3 == 0 ? static_cast<index_t>(gen() % 4) : 0;
  k.accumulate_first = gen() % 2 == 0;
  k.mode = gen() % 3 == 0 ? Mode::dense : Mode::esop;
  return k;
}

// The reference's loop of calls against the fused loop and chain on every kernel path: C
// bit for bit, every counter; and each path's C against the first path's.
void compare_paths(const ChainCase& k, ValueGen& va, ValueGen& vb, ValueGen& vc) {
  const index_t s = k.s, lda = k.links * s + k.pad, ld = k.blocks * s + k.pad;
  const index_t rows = k.row_blocks * k.r;
  std::vector<double> A(static_cast<size_t>(rows * lda)), B(static_cast<size_t>(k.links * s * ld)),
      C(static_cast<size_t>(rows * ld));
  for (auto& v : A) v = va();
  for (auto& v : B) v = vb();
  for (auto& v : C) v = vc();
  ChainRun oracle(k, MxuExecutor::reference);
  std::vector<double> expect = C, first;
  oracle.run(k, A, B, expect, false);
  for (const kernels::Isa isa : kernels::available_isas()) {
    kernels::ScopedIsa forced(isa);
    ChainRun loop(k, MxuExecutor::fused), chain(k, MxuExecutor::fused);
    std::vector<double> C1 = C, C2 = C;
    loop.run(k, A, B, C1, false);
    chain.run(k, A, B, C2, true);
    INFO("path " << kernels::to_string(isa) << " s " << s << " r " << k.r << " links " << k.links
                 << " blocks " << k.row_blocks << " x " << k.blocks << " esop "
                 << (k.mode == Mode::esop) << " acc " << k.accumulate_first);
    CHECK(bits(C1) == bits(expect));
    CHECK(bits(C2) == bits(expect));
    if (first.empty()) first = C1;
    CHECK(bits(C1) == bits(first));
    for (const ChainRun* u : {&loop, &chain}) {
      check_same_cost(u->unit.cost(), oracle.unit.cost());
      CHECK(u->mem.cost() == oracle.mem.cost());
    }
  }
}

}  // namespace

TEST_CASE("fused: every kernel path gives the reference's bits and counters", "[mxu][fused][isa]") {
  REQUIRE_FALSE(kernels::available_isas().empty());
  std::mt19937_64 gen(41);
  const double sparsity[] = {0.0, 0.5, 0.9};
  const Values kinds[] = {Values::uniform, Values::integers, Values::adversarial,
                          Values::nonfinite};
  for (int rep = 0; rep < 60; ++rep) {
    const ChainCase k = random_chain(gen);
    const Values kind = kinds[gen() % 4];
    ValueGen va{std::mt19937_64(gen()), sparsity[gen() % 3], kind};
    ValueGen vb{std::mt19937_64(gen()), sparsity[gen() % 3], kind};
    ValueGen vc{std::mt19937_64(gen()), 0.3, Values::adversarial};
    compare_paths(k, va, vb, vc);
  }
  // A depth of several kernel chunks on every path (their chunks differ: kNR 8 or 16).
  ChainCase deep;
  deep.s = 4, deep.r = 9, deep.links = 1700, deep.accumulate_first = true;
  ValueGen va{std::mt19937_64(5), 0.5, Values::adversarial},
      vb{std::mt19937_64(6), 0.5, Values::adversarial},
      vc{std::mt19937_64(7), 0.3, Values::adversarial};
  compare_paths(deep, va, vb, vc);
}
