// Ranks that disagree (doc/cpp.md "Ranks that disagree"): a job whose config or inputs'
// description differs on one rank is refused on every rank with one config_error naming
// the field and both values, before any work. Before, a differing norm gave rank 0 a wrong
// result silently, a differing transform or executor hung, differing mesh cells ended in
// MPI_ERR_TRUNCATE. And one job at a time in a process ("Threads").
#include <mpi.h>

#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "config/options.hpp"
#include "core/error.hpp"
#include "jobs/conv_job.hpp"
#include "jobs/job_entry.hpp"
#include "jobs/tcu_job.hpp"
#include "jobs/transform_job.hpp"
#include "mesh/mpi.hpp"
#include "support/catch.hpp"

using namespace triada;

namespace {

int world_rank() {
  return mpi::rank(MPI_COMM_WORLD);
}
int world_size() {
  return mpi::size(MPI_COMM_WORLD);
}
bool last_rank() {
  return world_rank() == world_size() - 1;
}

TransformConfig dct_config() {
  TransformConfig cfg;
  cfg.input = {"x", ""};
  cfg.output = {"y", ""};
  cfg.transform_spec = "dct";
  cfg.kinds = {TransformKind::dct, TransformKind::dct, TransformKind::dct};
  cfg.quiet = true;
  return cfg;
}

// The message every rank must get when the last rank's `field` is `value` and rank 0's
// is `value0` (world size 1: the job runs, nothing to disagree with).
std::string disagreement(const std::string& what, const std::string& field,
                         const std::string& value0, const std::string& value) {
  return "the ranks disagree on " + what + "'s " + field + ": rank 0 has '" + value0 + "', rank " +
         std::to_string(world_size() - 1) + " has '" + value + "'";
}

// Runs `job` on every rank: with one rank it must succeed; with more, throw config_error
// starting with `message` on every rank (none may hang or run).
void refused_everywhere(const std::function<void()>& job, const std::string& message) {
  if (world_size() == 1) {
    CHECK_NOTHROW(job());
    return;
  }
  CHECK_THROWS_WITH(job(), Catch::Matchers::StartsWith(message));
}

}  // namespace

TEST_CASE("A transform config that differs on one rank is named on every rank", "[agreement]") {
  const std::vector<double> x(4 * 5 * 3, 1.5);
  std::ostringstream out;
  const auto run_with = [&](const std::function<void(TransformConfig&)>& change) {
    TransformConfig cfg = dct_config();
    if (last_rank()) change(cfg);
    ArrayInputs in;
    in.x = array_view(x.data(), {4, 5, 3});
    return [cfg, in, &out] { TransformJob(cfg).run(in, MPI_COMM_WORLD, out); };
  };
  const std::string what = "TransformConfig";
  // norm: a wrong result on rank 0 before; transform, executor, ESOP, cell mode: hangs;
  // mesh cells: MPI_ERR_TRUNCATE; a machine constant: a different plan of transports.
  refused_everywhere(run_with([](TransformConfig& c) { c.norm = Norm::backward; }),
                     disagreement(what, "norm", "ortho", "backward"));
  refused_everywhere(run_with([](TransformConfig& c) {
                       c.transform_spec = "dft";
                       c.kinds = {TransformKind::dft, TransformKind::dft, TransformKind::dft};
                     }),
                     disagreement(what, "kinds", "dct,dct,dct", "dft,dft,dft"));
  refused_everywhere(run_with([](TransformConfig& c) { c.executor = "reference"; }),
                     disagreement(what, "executor", "fused", "reference"));
  refused_everywhere(run_with([](TransformConfig& c) { c.mesh.mode = Mode::dense; }),
                     disagreement(what, "mesh esop.enabled", "on", "off"));
  refused_everywhere(run_with([](TransformConfig& c) { c.mesh.use_cell_mode(CellMode::fp32); }),
                     disagreement(what, "mesh cell.mode", "fp64", "fp32"));
  refused_everywhere(run_with([](TransformConfig& c) {
                       c.mesh.cells = ext3{2, 2, 2};
                     }),
                     disagreement(what, "mesh mesh.cells", "auto", "2x2x2"));
  refused_everywhere(
      run_with([](TransformConfig& c) { c.mesh.actuators = ActuatorPlacement::colocated; }),
      disagreement(what, "mesh ranks.actuators", "auto", "colocated"));
  refused_everywhere(run_with([](TransformConfig& c) { c.mesh.machine.fence_s = 1; }),
                     disagreement(what, "mesh machine.fence_s", "3.3000000000000002e-06", "1"));
  refused_everywhere(
      run_with([](TransformConfig& c) { c.mesh.physical.chip.clock_fraction = 0.5; }),
      disagreement(what, "mesh chip.clock_fraction", "0.25", "0.5"));
  // The words a config was started with are each rank's own: they may differ.
  TransformConfig own = dct_config();
  own.command_line = "rank " + std::to_string(world_rank());
  ArrayInputs in;
  in.x = array_view(x.data(), {4, 5, 3});
  CHECK_NOTHROW(TransformJob(own).run(in, MPI_COMM_WORLD, out));
}

TEST_CASE("An array run whose inputs' description differs on one rank is named on every rank",
          "[agreement]") {
  const std::vector<double> x(4 * 5 * 3, 1.5);
  std::ostringstream out;
  const TransformJob job(dct_config());
  ArrayInputs in;
  in.x = array_view(x.data(), {4, 5, 3});
  ArrayInputs gather_off = in;
  if (last_rank()) gather_off.gather = false;  // it hung
  refused_everywhere([&] { job.run(gather_off, MPI_COMM_WORLD, out); },
                     disagreement("TransformConfig", "ArrayInputs::gather", "on", "off"));
  ArrayInputs distributed = in;
  if (last_rank()) distributed.distributed = true, distributed.global_shape = {4, 5, 3};
  refused_everywhere([&] { job.run(distributed, MPI_COMM_WORLD, out); },
                     disagreement("TransformConfig", "ArrayInputs::distributed", "off", "on"));
  // plan(): the shapes are part of the call.
  refused_everywhere(
      [&] {
        job.plan(MPI_COMM_WORLD, {8, 8, last_rank() ? 9 : 8}, {8, 8, 8});
      },
      disagreement("TransformConfig", "plan's in_shape", "8x8x8", "8x8x9"));
}

TEST_CASE("TcuJob and ConvJob configs that differ on one rank are named on every rank",
          "[agreement]") {
  std::ostringstream out;
  TcuConfig tcu;
  tcu.algo = "dft";
  tcu.sweep = true;
  tcu.sizes = {16};
  tcu.ms = {16};
  tcu.progress = ProgressMode::never;
  if (last_rank()) tcu.sizes = {16, 64};
  refused_everywhere([&] { TcuJob(tcu).run(MPI_COMM_WORLD, out); },
                     disagreement("TcuConfig", "sizes", "16", "16,64"));
  ConvConfig conv;
  conv.layer_spec = "1,2,5,5,2,3,3,1,1";
  conv.mxu = 4;
  conv.progress = ProgressMode::never;
  if (last_rank()) conv.seed = 2;
  refused_everywhere([&] { ConvJob(conv).run(MPI_COMM_WORLD, out); },
                     disagreement("ConvConfig", "seed", "1", "2"));
}

// The mpi_error of a job entered on another thread ("" if it was not refused).
std::string refusal_on_another_thread() {
  std::string seen;
  std::thread other([&] {
    try {
      const JobEntry second(MPI_COMM_SELF, {}, "TransformConfig");
    } catch (const mpi_error& e) {
      seen = e.what();
    }
  });
  other.join();
  return seen;
}

TEST_CASE("One job at a time in a process: another thread's is refused, never interleaved",
          "[agreement][threads]") {
  // Two jobs from two threads segfaulted and left temporaries; now the second is an
  // mpi_error, before any MPI or HDF5 call.
  {
    const JobEntry running(MPI_COMM_SELF, {}, "TransformConfig");
    CHECK_THAT(refusal_on_another_thread(),
               Catch::Matchers::StartsWith("another thread of this process is running a job"));
  }
  // No job running, but MPI runs at MPI_THREAD_FUNNELED here: only its main thread calls.
  CHECK_THAT(refusal_on_another_thread(),
             Catch::Matchers::StartsWith("MPI runs at MPI_THREAD_FUNNELED"));
}

TEST_CASE("On a communicator other than the world, the ranks named are that communicator's",
          "[agreement]") {
  // The world's ranks in reverse order: the world's last rank is this communicator's 0.
  if (world_size() < 2) return;
  MPI_Comm reversed = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, 0, world_size() - world_rank(), &reversed);
  TransformConfig cfg = dct_config();
  if (last_rank()) cfg.norm = Norm::backward;
  const std::vector<double> x(4 * 5 * 3, 1.5);
  ArrayInputs in;
  in.x = array_view(x.data(), {4, 5, 3});
  std::ostringstream out;
  CHECK_THROWS_WITH(TransformJob(cfg).run(in, reversed, out),
                    Catch::Matchers::StartsWith("the ranks disagree on TransformConfig's norm: "
                                                "rank 0 has 'backward', rank 1 has 'ortho'"));
  // Agreeing, it runs there: rank 0 of `reversed` gets the result.
  cfg.norm = Norm::ortho;
  const TransformResult r = TransformJob(cfg).run(in, reversed, out);
  CHECK(r.y.present == last_rank());
  MPI_Comm_free(&reversed);
}
