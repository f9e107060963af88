// TransformJob on arrays in memory, built from a config struct: its output is the direct
// triple sum of the DCT-II (the oracle, summed here), its counters dense mode's closed
// form, at the rank count ctest started.
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <vector>

#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/transform_job.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

constexpr index_t kN[3] = {7, 4, 3};  // 7: up to 7 brick ranks along axis 1

double dct(index_t k, index_t n, index_t size) {
  const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(size));
  return scale * std::cos(std::numbers::pi * static_cast<double>((2 * n + 1) * k) /
                          static_cast<double>(2 * size));
}

std::vector<double> direct_dct(const std::vector<double>& x) {
  std::vector<double> y(x.size(), 0.0);
  for (index_t k1 = 0; k1 < kN[0]; ++k1)
    for (index_t k2 = 0; k2 < kN[1]; ++k2)
      for (index_t k3 = 0; k3 < kN[2]; ++k3)
        for (index_t n1 = 0; n1 < kN[0]; ++n1)
          for (index_t n2 = 0; n2 < kN[1]; ++n2)
            for (index_t n3 = 0; n3 < kN[2]; ++n3)
              y[(k1 * kN[1] + k2) * kN[2] + k3] += x[(n1 * kN[1] + n2) * kN[2] + n3] *
                                                   dct(k1, n1, kN[0]) * dct(k2, n2, kN[1]) *
                                                   dct(k3, n3, kN[2]);
  return y;
}

// The config of a quiet DCT of arrays named x and y on this mesh.
TransformConfig dct_config(const MeshConfig& mesh) {
  TransformConfig cfg;
  cfg.input = {"x", ""};
  cfg.output = {"y", ""};
  cfg.transform_spec = "dct";
  cfg.kinds = {TransformKind::dct, TransformKind::dct, TransformKind::dct};
  cfg.mesh = mesh;
  cfg.quiet = true;
  return cfg;
}

}  // namespace

TEST_CASE("TransformJob runs a config struct on arrays: the direct DCT, dense counters",
          "[transform_job]") {
  const TransformJob job(
      dct_config(mesh_config("", {{"esop.enabled", "off"}, {"ranks.actuators", "colocated"}})));
  std::vector<double> x(static_cast<size_t>(kN[0] * kN[1] * kN[2]));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 1.0 + static_cast<double>(i % 7);
  ArrayInputs in;
  in.x = array_view(x.data(), {kN[0], kN[1], kN[2]});
  std::ostringstream out;
  const TransformResult r = job.run(in, MPI_COMM_WORLD, out);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  CHECK(r.y.present == (rank == 0));  // gathered to rank 0
  CHECK(r.report.is_null() == (rank != 0));
  if (rank != 0) return;
  const std::vector<double> want = direct_dct(x);
  REQUIRE(r.y.real.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(r.y.real[i] - want[i]) < 1e-12);
  // Dense mode: each stage's MACs are N1 N2 N3 times its axis's K (= N).
  const std::uint64_t macs =
      static_cast<std::uint64_t>(kN[0] * kN[1] * kN[2] * (kN[0] + kN[1] + kN[2]));
  CHECK(r.counters.total(Counter::macs) == macs);
  CHECK(r.report["counters"]["macs"].get<std::uint64_t>() == macs);
}

TEST_CASE("TransformJob refuses, on every rank, an initial array its config does not name",
          "[transform_job]") {
  TransformConfig cfg = dct_config(parse_mesh_file(""));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::vector<double> x(static_cast<size_t>(kN[0] * kN[1] * kN[2]), 1.0), y0 = x;
  ArrayInputs in;
  in.x = array_view(x.data(), {kN[0], kN[1], kN[2]});
  // Given on the last rank only: the others must not wait for it, nor run without it.
  if (rank == size - 1) in.initial = array_view(y0.data(), {kN[0], kN[1], kN[2]});
  std::ostringstream out;
  const TransformJob job(cfg);
  CHECK_THROWS_WITH(job.run(in, MPI_COMM_WORLD, out),
                    Catch::Matchers::StartsWith("initial: an array is given, but the config "
                                                "names no initial output"));
  // Named, the same arrays run: Y = Y0 + DCT(X) on rank 0 (where Y0 is whole when the run
  // gathers; the check above is what this case is about, so one rank suffices).
  if (size != 1) return;
  cfg.initial = {"initial", ""};
  const TransformResult r = TransformJob(cfg).run(in, MPI_COMM_WORLD, out);
  const std::vector<double> want = direct_dct(x);
  REQUIRE(r.y.real.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(std::abs(r.y.real[i] - (y0[i] + want[i])) < 1e-12);
}

TEST_CASE("TransformJob refuses, on every rank, an array view it cannot read", "[transform_job]") {
  // A null pointer, a negative extent, strides that do not match the shape: one
  // input_error naming the array and what is wrong, before any rank reads a byte.
  const TransformJob job(dct_config(parse_mesh_file("")));
  const std::vector<double> x(static_cast<size_t>(kN[0] * kN[1] * kN[2]), 1.0);
  std::ostringstream out;
  const auto refused = [&](const ArrayView& v, const std::string& what) {
    ArrayInputs in;
    in.x = v;
    CHECK_THROWS_WITH(job.run(in, MPI_COMM_WORLD, out), Catch::Matchers::StartsWith("x: " + what));
  };
  refused(array_view(static_cast<const double*>(nullptr), {kN[0], kN[1], kN[2]}), "no data");
  refused(array_view(x.data(), {kN[0], -4, kN[2]}), "extent -4");
  ArrayView short_strides = array_view(x.data(), {kN[0], kN[1], kN[2]});
  short_strides.strides.pop_back();
  refused(short_strides, "2 strides for a rank-3 array");
}

TEST_CASE("TransformJob refuses a null communicator and an intercommunicator", "[transform_job]") {
  // They aborted the whole job (MPI's fatal error handler); now an mpi_error naming them.
  const TransformJob job(dct_config(parse_mesh_file("")));
  const std::vector<double> x(static_cast<size_t>(kN[0] * kN[1] * kN[2]), 1.0);
  ArrayInputs in;
  in.x = array_view(x.data(), {kN[0], kN[1], kN[2]});
  std::ostringstream out;
  CHECK_THROWS_WITH(job.run(in, MPI_COMM_NULL, out), "the communicator is MPI_COMM_NULL");
  CHECK_THROWS_AS(job.plan(MPI_COMM_NULL, {4, 4, 4}, {4, 4, 4}), mpi_error);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) return;  // an intercommunicator needs two groups
  MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
  const int color = rank < size / 2 ? 0 : 1;
  MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color == 0 ? size / 2 : 0, 7, &inter);
  CHECK_THROWS_WITH(job.run(in, inter, out), Catch::Matchers::StartsWith("an intercommunicator"));
  MPI_Comm_free(&inter);
  MPI_Comm_free(&half);
}

TEST_CASE("A report written through the library says what called it", "[transform_job]") {
  // It said program triada-transform with an empty command line: now the job and the
  // process that ran it (this test program), as /proc/self/cmdline gives it.
  TransformConfig cfg = dct_config(parse_mesh_file(""));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp ? tmp : "/tmp";
  // one name on every rank: rank 0's pid
  int pid = rank == 0 ? static_cast<int>(::getpid()) : 0;
  MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
  cfg.report = dir + "/library-report-" + std::to_string(pid) + ".json";
  const std::vector<double> x(static_cast<size_t>(kN[0] * kN[1] * kN[2]), 1.0);
  ArrayInputs in;
  in.x = array_view(x.data(), {kN[0], kN[1], kN[2]});
  std::ostringstream out;
  TransformJob(cfg).run(in, MPI_COMM_WORLD, out);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    std::ifstream f(cfg.report);
    const nlohmann::json r = nlohmann::json::parse(f);
    CHECK(r["provenance"]["program"] == "triada-transform job (library)");
    CHECK_THAT(r["provenance"]["command_line"].get<std::string>(),
               Catch::Matchers::Contains("triada_mpi_tests"));
    std::remove(cfg.report.c_str());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
