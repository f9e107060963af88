// TcuJob and ConvJob made from config structs and run over the ranks: the results they
// return (the product C, the layer's outputs) against direct loops written here, the
// report and the exit code the same on every rank. Every rank takes the same path (CHECK
// only), so none waits alone in a collective.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "jobs/conv_job.hpp"
#include "jobs/tcu_job.hpp"
#include "mesh/mpi.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

// Whether this rank's report is rank 0's.
bool same_as_rank0(const nlohmann::json& report) {
  const std::string mine = report.dump();
  return mpi::min_of(MPI_COMM_WORLD, mpi::bcast_string(MPI_COMM_WORLD, mine, 0) == mine ? 1 : 0) ==
         1;
}

tcu_in::MemoryDataset matrix(index_t n, double (*value)(index_t, index_t)) {
  tcu_in::MemoryDataset d;
  d.dims = {n, n};
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j) d.real.push_back(value(i, j));
  return d;
}

}  // namespace

TEST_CASE("TcuJob returns the product of arrays in memory and its unit's cost",
          "[tcu][jobs][mpi]") {
  const index_t n = 10;  // not a multiple of the unit's side 4: padded
  TcuConfig cfg;
  cfg.algo = "matmul";
  cfg.m = 16;
  cfg.latency = 2;
  cfg.input = "inputs";
  cfg.progress = ProgressMode::never;
  cfg.arrays["/A"] = matrix(
      n, [](index_t i, index_t j) { return std::sin(1.0 + static_cast<double>(i * 7 + j)); });
  cfg.arrays["/B"] =
      matrix(n, [](index_t i, index_t j) { return static_cast<double>((i * 3 + j) % 5) - 2; });
  const std::vector<double>&A = cfg.arrays["/A"].real, &B = cfg.arrays["/B"].real;
  std::vector<double> ref(static_cast<size_t>(n * n), 0.0), bound(ref.size(), 0.0);
  for (index_t i = 0; i < n; ++i)
    for (index_t j = 0; j < n; ++j)
      for (index_t k = 0; k < n; ++k) {
        ref[static_cast<size_t>(i * n + j)] +=
            A[static_cast<size_t>(i * n + k)] * B[static_cast<size_t>(k * n + j)];
        bound[static_cast<size_t>(i * n + j)] +=
            std::abs(A[static_cast<size_t>(i * n + k)] * B[static_cast<size_t>(k * n + j)]);
      }
  std::ostringstream out;
  const TcuResult r = TcuJob(cfg).run(MPI_COMM_WORLD, out);
  CHECK(r.code == 0);
  CHECK(r.report["verified"] == true);
  CHECK(r.report["input"] == "inputs");
  CHECK(same_as_rank0(r.report));
  CHECK(r.product.has_value() == (mpi::rank(MPI_COMM_WORLD) == 0));
  if (r.product) {
    CHECK(r.product->side == n);
    REQUIRE(r.product->values.size() == ref.size());
    for (size_t k = 0; k < ref.size(); ++k)
      CHECK(std::abs(r.product->values[k] - ref[k]) <= 1e-15 * (2 * n + 2) * bound[k]);
    const auto& t = r.report["tcu"];
    CHECK(t["calls"] == r.product->cost.calls);
    CHECK(t["macs"] == r.product->cost.macs);
    CHECK(t["cycles"] == r.product->cost.cycles);
  }
}

TEST_CASE("TcuJob runs a sweep over the ranks: every rank gets the report, no product",
          "[tcu][jobs][mpi]") {
  TcuConfig cfg;
  cfg.algo = "dft";
  cfg.sweep = true;
  cfg.sizes = {16, 64};
  cfg.ms = {16};
  cfg.progress = ProgressMode::never;
  std::ostringstream out;
  const TcuResult r = TcuJob(cfg).run(MPI_COMM_WORLD, out);
  CHECK(r.code == 0);
  CHECK_FALSE(r.product);
  REQUIRE(r.report["sweep"].size() == 2);
  CHECK(r.report["sweep"][0]["size"] == 16);
  CHECK(r.report["sweep"][1]["size"] == 64);
  CHECK(same_as_rank0(r.report));
}

TEST_CASE("ConvJob returns each method's output of a layer on its operands", "[conv][jobs][mpi]") {
  // N, CI, HI, WI, CO, HF, WF, stride, pad
  const index_t N = 2, CI = 3, HI = 7, WI = 6, CO = 4, HF = 3, WF = 2, st = 2, pad = 1;
  const index_t HO = (HI + 2 * pad - HF) / st + 1, WO = (WI + 2 * pad - WF) / st + 1;
  ConvConfig cfg;
  cfg.layer_spec = "2,3,7,6,4,3,2,2,1";
  cfg.mxu = 4;
  cfg.input = "input";
  cfg.weights = "weights";
  cfg.progress = ProgressMode::never;
  cfg.keep_outputs = true;
  cfg.input_dims = {N, CI, HI, WI};
  cfg.weight_dims = {CO, CI, HF, WF};
  for (index_t i = 0; i < N * CI * HI * WI; ++i)
    cfg.input_values.push_back(std::cos(0.3 * static_cast<double>(i)));
  for (index_t i = 0; i < CO * CI * HF * WF; ++i)
    cfg.weight_values.push_back(static_cast<double>(i % 7) - 3);
  // The definition, NHWC: y[n][o][p][q] = sum_c,a,b x[n][c][p st + a - pad][q st + b - pad]
  // w[o][c][a][b]
  std::vector<double> ref(static_cast<size_t>(N * HO * WO * CO), 0.0);
  for (index_t n = 0; n < N; ++n)
    for (index_t o = 0; o < CO; ++o)
      for (index_t p = 0; p < HO; ++p)
        for (index_t q = 0; q < WO; ++q)
          for (index_t c = 0; c < CI; ++c)
            for (index_t a = 0; a < HF; ++a)
              for (index_t b = 0; b < WF; ++b) {
                const index_t h = p * st + a - pad, w = q * st + b - pad;
                if (h < 0 || h >= HI || w < 0 || w >= WI) continue;
                ref[static_cast<size_t>(((n * HO + p) * WO + q) * CO + o)] +=
                    cfg.input_values[static_cast<size_t>(((n * CI + c) * HI + h) * WI + w)] *
                    cfg.weight_values[static_cast<size_t>(((o * CI + c) * HF + a) * WF + b)];
              }
  std::ostringstream out;
  ConvRun r = ConvJob(cfg).run(MPI_COMM_WORLD, out);
  CHECK(r.code == 0);
  CHECK(same_as_rank0(r.report));
  CHECK(r.report["layers"][0]["verified"] == true);
  if (mpi::rank(MPI_COMM_WORLD) != 0) return;
  REQUIRE(r.outcomes.size() == 1);
  for (const MethodOutcome* m : {&r.outcomes[0].ex, &r.outcomes[0].im}) {
    REQUIRE(m->output.size() == ref.size());
    for (size_t k = 0; k < ref.size(); ++k) CHECK(std::abs(m->output[k] - ref[k]) <= 1e-12);
  }
}
