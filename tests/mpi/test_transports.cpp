// Each pivot-plane transport of the fused executor (engine/fused/transport.hpp) against
// the reference executor, bit for bit and count for count: broadcast batches (messages,
// small and automatic batches), planes read in place through the shared window (complex
// data, another cell mode, axis 3), shared packing (binary64 on axes 1 and 2), and the
// local source (lines of one brick). Run at every rank count of the MPI suite.
#include <catch2/catch.hpp>
#include <random>

#include "actuator/coefficients.hpp"
#include "support/engine_run.hpp"
#include "support/oracle.hpp"

using namespace triada;
using namespace triada::test;

namespace {

template <class T>
void same_as_reference(const std::vector<T>& x, const ext3& shape, RunSpec spec) {
  spec.executor = Executor::reference;
  const GlobalRun<T> ref = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
  spec.executor = Executor::fused;
  const GlobalRun<T> fused = run_global<T>(MPI_COMM_WORLD, x, shape, spec);
  CHECK(same_bits(ref.y, fused.y));
  REQUIRE(ref.rc.steps.size() == fused.rc.steps.size());
  bool counts = true;
  for (size_t i = 0; i < ref.rc.steps.size(); ++i) {
    counts = counts && ref.rc.steps[i].pivot == fused.rc.steps[i].pivot &&
             ref.rc.steps[i].busiest == fused.rc.steps[i].busiest;
    for (int c = 0; c < kCounters; ++c)
      counts = counts && ref.rc.steps[i].n[c] == fused.rc.steps[i].n[c];
  }
  CHECK(counts);
}

CoeffMatrix random_matrix(index_t n, index_t k, std::mt19937_64& gen, double zeros) {
  std::uniform_real_distribution<double> u(-1, 1), z(0, 1);
  CoeffMatrix c;
  c.rows = n;
  c.cols = k;
  c.data.resize(static_cast<size_t>(n * k));
  for (auto& v : c.data) v = z(gen) < zeros ? cplx{} : cplx{u(gen), 0.0};
  return c;
}

}  // namespace

TEST_CASE("every pivot-plane transport gives the reference's bits and counters", "[transports]") {
  // Axis 1 longest, so the brick ranks split it: its line holds several bricks.
  const ext3 shape{26, 9, 11};
  std::mt19937_64 gen(10);
  const auto x = random_tensor(shape, 41, 0.5, false, false);
  for (PivotTransport tr : {PivotTransport::automatic, PivotTransport::broadcast})
    for (std::size_t batch : {std::size_t{0}, std::size_t{300}})
      for (const auto& order : {std::array<int, 3>{1, 2, 3}, std::array<int, 3>{3, 2, 1}})
        for (Mode mode : {Mode::esop, Mode::dense}) {
          CAPTURE(tr == PivotTransport::broadcast, batch, to_string(order), mode == Mode::esop);
          RunSpec spec;
          spec.transport = tr;
          spec.batch_bytes = batch;
          spec.order = order;
          spec.mode = mode;
          spec.c = {random_matrix(26, 20, gen, 0.3), random_matrix(9, 9, gen, 0.3),
                    random_matrix(11, 13, gen, 0.3)};
          same_as_reference<double>(convert<double>(x), shape, spec);  // kernels
          spec.cell_mode = CellMode::fp32;  // the exact path, planes in place
          same_as_reference<double>(convert<double>(x), shape, spec);
          spec.cell_mode = CellMode::fp64;
          spec.c[1] = make_coefficients(TransformKind::dft, 9, Norm::ortho, false, "test");
          same_as_reference<cplx>(x, shape, spec);  // complex: the exact path
        }
}
