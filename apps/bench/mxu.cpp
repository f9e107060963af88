// --mxu: the planar MXU's fused executor against OpenBLAS dgemm on the same matrices in the
// same run (rank 0, one thread): (a) a convolution layer's GEMM as the explicit method
// issues it (lowered M x K by K x C_O, calls of M rows by S x S tiles) at two unit sides,
// with the whole explicit and implicit convolutions timed beside it; (b) the TCU matmul
// (Theorem 2) of a square side on a unit of size m.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "apps/bench/bench.hpp"
#include "conv/conv.hpp"
#include "conv/conv_layer.hpp"
#include "jobs/provenance.hpp"
#include "kernels/isa.hpp"
#include "mxu/tcu_linear_algebra.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada::bench {

namespace {

struct MxuRow {
  std::string workload, shape;
  index_t side = 0;  // S = sqrt(m)
  double mxu_seconds = 0, dgemm_seconds = 0;
  std::uint64_t macs = 0;  // of the GEMM: M K N
  double max_rel_diff = 0;
  json extra = json::object();
  double ratio() const { return dgemm_seconds / mxu_seconds; }  // throughput vs dgemm
};

// One untimed warm-up run, then the best of `reps`.
template <class F>
double best_of(int reps, F&& run) {
  run();
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < reps; ++i) {
    const Clock::time_point t0 = Clock::now();
    run();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

int blas(index_t v) {
  return static_cast<int>(v);
}

// C (M x N) = A (M x K) B (K x N), row-major, by OpenBLAS.
void dgemm(index_t M, index_t N, index_t K, const double* A, const double* B, double* C) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, blas(M), blas(N), blas(K), 1.0, A, blas(K),
              B, blas(N), 0.0, C, blas(N));
}

// The explicit method's lowered matrix (M x K, columns (c, h_f, w_f)) and filter matrix
// (K x C_O) of a one-group layer, as conv.cpp builds them.
void lower(const ConvLayer& l, const std::vector<double>& x, const std::vector<double>& w,
           std::vector<double>& L, std::vector<double>& F) {
  const index_t HO = l.H_O(), WO = l.W_O(), K = l.K_group();
  L.assign(static_cast<size_t>(l.M() * K), 0.0);
  for (index_t n = 0; n < l.N; ++n)
    for (index_t ho = 0; ho < HO; ++ho)
      for (index_t wo = 0; wo < WO; ++wo)
        for (index_t c = 0; c < l.C_I; ++c)
          for (index_t fh = 0; fh < l.H_F; ++fh)
            for (index_t fw = 0; fw < l.W_F; ++fw) {
              const index_t h = ho * l.stride_h - l.pad_top + fh * l.dilation_h;
              const index_t wi = wo * l.stride_w - l.pad_left + fw * l.dilation_w;
              if (h < 0 || h >= l.H_I || wi < 0 || wi >= l.W_I) continue;
              L[static_cast<size_t>(((n * HO + ho) * WO + wo) * K + (c * l.H_F + fh) * l.W_F +
                                    fw)] =
                  x[static_cast<size_t>(((n * l.H_I + h) * l.W_I + wi) * l.C_I + c)];
            }
  F.assign(static_cast<size_t>(K * l.C_O), 0.0);
  for (index_t o = 0; o < l.C_O; ++o)
    for (index_t k = 0; k < K; ++k)
      F[static_cast<size_t>(k * l.C_O + o)] = w[static_cast<size_t>(o * K + k)];
}

double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num = std::max(num, std::fabs(a[i] - b[i]));
    den = std::max(den, std::fabs(b[i]));
  }
  return den > 0 ? num / den : num;
}

// (a) The layer's GEMM on a unit of side S: the explicit method's calls (C_O tile outer,
// depth chunk inner, accumulating in the cells: a chain per tile, issued as explicit_conv
// does, TensorUnit::kGridColumns columns of tiles per grid of chains), then the whole convolutions.
MxuRow conv_row(const ConvLayer& l, index_t S, int reps, std::uint64_t seed) {
  const std::vector<double> x = random_tensor(l.ifmap_elements(), seed, 0);
  const std::vector<double> w = random_tensor(l.weight_elements(), seed, 1);
  std::vector<double> L, F;
  lower(l, x, w, L, F);
  const index_t M = l.M(), K = l.K_group(), N = l.C_O;
  std::vector<double> C(static_cast<size_t>(M * N)), Cb(C.size());
  TensorUnit unit(S * S, 0);
  MxuRow r;
  r.workload = "conv-gemm";
  r.shape = l.shape_string() + ": " + std::to_string(M) + "x" + std::to_string(K) + " by " +
            std::to_string(K) + "x" + std::to_string(N);
  r.side = S;
  r.macs = static_cast<std::uint64_t>(M * K * N);
  const index_t run = unit.grid_col_blocks() * S;
  r.mxu_seconds = best_of(reps, [&] {
    for (index_t ot = 0; ot < N; ot += run)
      unit.multiply_chains(M, L.data(), K, F.data() + ot, N, C.data() + ot, N, K / S,
                           {1, std::min(run, N - ot) / S, true});
  });
  r.dgemm_seconds = best_of(reps, [&] { dgemm(M, N, K, L.data(), F.data(), Cb.data()); });
  r.max_rel_diff = rel_diff(C, Cb);
  TensorUnit u2(S * S, 0);
  r.extra["explicit_conv_seconds"] = best_of(1, [&] { explicit_conv(l, x, w, u2); });
  r.extra["implicit_conv_seconds"] = best_of(1, [&] { implicit_conv(l, x, w, u2); });
  return r;
}

// (b) The TCU matmul of side n on a unit of size m.
MxuRow matmul_row(index_t n, std::int64_t m, int reps, std::uint64_t seed) {
  const std::vector<double> A = random_tensor(static_cast<std::uint64_t>(n * n), seed, 2);
  const std::vector<double> B = random_tensor(static_cast<std::uint64_t>(n * n), seed, 3);
  std::vector<double> C, Cb(A.size());
  TensorUnit unit(m, 0);
  MxuRow r;
  r.workload = "tcu-matmul";
  r.shape = std::to_string(n) + "x" + std::to_string(n) + ", m = " + std::to_string(m);
  r.side = unit.side();
  r.macs = static_cast<std::uint64_t>(n * n * n);
  r.mxu_seconds = best_of(reps, [&] { C = tcu_matmul_dense(unit, A, B, n); });
  r.dgemm_seconds = best_of(reps, [&] { dgemm(n, n, n, A.data(), B.data(), Cb.data()); });
  r.max_rel_diff = rel_diff(C, Cb);
  return r;
}

ConvLayer layer(index_t CI, index_t HW, index_t CO) {
  ConvLayer l;
  l.name = "bench";
  l.C_I = CI, l.H_I = HW, l.W_I = HW, l.C_O = CO, l.H_F = 3, l.W_F = 3;
  l.set_pad(1);
  validate_layer(l, "--mxu");
  return l;
}

void print_rows(const std::vector<MxuRow>& rows) {
  std::printf("\n%-10s %-46s %4s %10s %10s %8s %8s %9s\n", "workload", "shape", "S", "mxu s",
              "dgemm s", "GMAC/s", "ratio", "rel.diff");
  for (const MxuRow& r : rows)
    std::printf("%-10s %-46s %4lld %10.4f %10.4f %8.2f %8.3f %9.2e\n", r.workload.c_str(),
                r.shape.c_str(), static_cast<long long>(r.side), r.mxu_seconds, r.dgemm_seconds,
                static_cast<double>(r.macs) / r.mxu_seconds / 1e9, r.ratio(), r.max_rel_diff);
  std::printf("ratio = dgemm seconds / MXU seconds (throughput relative to OpenBLAS dgemm)\n");
}

json mxu_json(const BenchConfig& cfg, const std::vector<MxuRow>& rows) {
  json j;
  j["schema"] = "triada-bench-mxu/1";
  j["date"] = today();
  j["machine"] = {{"hostname", host_name()},
                  {"cpu_model", cpu_model()},
                  {"openblas_corename", openblas_corename()},
                  {"compiler", __VERSION__},
                  {"kernels", kernels_json()},
                  {"loadavg", load_average()}};
  j["config"] = {{"executor", "fused"}, {"cell_mode", "fp64"}, {"esop", true},
                 {"latency", 0},        {"reps", cfg.reps},    {"seed", cfg.seed},
                 {"quick", cfg.quick},  {"threads", 1}};
  j["definition"] =
      "ratio = dgemm_seconds / mxu_seconds on the same matrices in the same run (best of reps "
      "after a warm-up); conv-gemm: the explicit method's unit calls on its lowered matrices; "
      "tcu-matmul: tcu_matmul_dense (Theorem 2); gmacs_per_s = macs / mxu_seconds";
  json jr = json::array();
  for (const MxuRow& r : rows) {
    json row = {{"workload", r.workload},
                {"shape", r.shape},
                {"side", r.side},
                {"macs", r.macs},
                {"mxu_seconds", r.mxu_seconds},
                {"dgemm_seconds", r.dgemm_seconds},
                {"ratio", r.ratio()},
                {"gmacs_per_s", static_cast<double>(r.macs) / r.mxu_seconds / 1e9},
                {"max_rel_diff", r.max_rel_diff}};
    row.update(r.extra);
    jr.push_back(row);
  }
  j["rows"] = jr;
  return j;
}

}  // namespace

void run_mxu(const BenchConfig& cfg) {
  std::cout << "triada-bench --mxu: the fused MXU executor (fp64, ESOP on) against OpenBLAS "
               "dgemm, one thread, best of "
            << cfg.reps << " after a warm-up\n"
            << "machine: " << host_name() << ", " << cpu_model() << ", OpenBLAS "
            << openblas_corename() << "\nkernels: " << kernels::isa_summary() << "\n"
            << std::flush;
  const ConvLayer l = cfg.quick ? layer(32, 10, 32) : layer(256, 56, 256);
  std::vector<MxuRow> rows;
  for (const index_t S : cfg.quick ? std::vector<index_t>{4, 16} : std::vector<index_t>{16, 128}) {
    rows.push_back(conv_row(l, S, cfg.reps, cfg.seed));
    if (prints_progress(cfg, 0))  // rank 0 times
      std::fprintf(stderr, "triada-bench --mxu conv S=%lld: done\n", static_cast<long long>(S));
  }
  rows.push_back(matmul_row(cfg.quick ? 128 : 2048, 256, cfg.reps, cfg.seed));
  print_rows(rows);
  write_json(cfg, mxu_json(cfg, rows));
}

}  // namespace triada::bench
