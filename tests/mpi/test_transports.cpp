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

TEST_CASE("shared packing over many chunks, and again on the same topology", "[transports]") {
  // The line's members pack and read chunk after chunk through a ring of buffers in shared
  // memory, synchronised by counters that run on over the topology's life: a line along the
  // split axis with more chunks than the ring holds (axis 1: 64 steps give 512-column
  // chunks over 48 x 60 lines; axis 2: one chunk per slab), bits and counters against the
  // reference, then three runs on one topology (the counters go on from the previous run)
  // bitwise equal to the first.
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const ext3 shape{64, 48, 60};
  std::mt19937_64 gen(77);
  const auto x = convert<double>(random_tensor(shape, 78, 0.3, false, false));
  for (const auto& grid : {std::array<int, 3>{p, 1, 1}, std::array<int, 3>{1, p, 1}})
    for (Mode mode : {Mode::esop, Mode::dense}) {
      CAPTURE(to_string(grid), mode == Mode::esop);
      RunSpec spec;
      spec.grid = grid;
      spec.placement = ActuatorPlacement::colocated;  // every rank a brick
      spec.mode = mode;
      spec.c = {random_matrix(64, 64, gen, 0.2), random_matrix(48, 40, gen, 0.2),
                random_matrix(60, 60, gen, 0.2)};
      same_as_reference<double>(x, shape, spec);
      const Plan plan = plan_for(MPI_COMM_WORLD, shape, spec);
      Topology topo(plan, MPI_COMM_WORLD, sizeof(double));
      const std::vector<double> in = brick_of(x, shape, topo.cells().intersect(whole(shape)));
      EngineOptions opt;
      opt.mode = mode;
      opt.coefficients = [&](int axis) { return spec.c[axis - 1]; };
      const EngineResult<double> first = run_engine<double>(topo, opt, in);
      for (int run = 1; run <= 3; ++run) {
        CAPTURE(run);
        const EngineResult<double> r = run_engine<double>(topo, opt, in);
        CHECK(same_bits(first.out, r.out));
        CHECK(first.counters.total(Counter::macs) == r.counters.total(Counter::macs));
      }
    }
}
