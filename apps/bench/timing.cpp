// The engine, timed: barrier, run_engine, max over ranks of the elapsed time; the inputs and
// matrices every part uses.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "apps/bench/bench.hpp"
#include "engine/engine.hpp"
#include "mesh/mpi.hpp"

namespace triada::bench {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

index_t elements(const ext3& s) {
  return s[0] * s[1] * s[2];
}

std::uint64_t dense_macs(const ext3& s) {
  return static_cast<std::uint64_t>(elements(s)) * static_cast<std::uint64_t>(s[0] + s[1] + s[2]);
}

std::string shape_str(const ext3& s) {
  return to_string(s);
}

GenSpec input_spec(const ext3& shape, const std::string& sparsity, std::uint64_t seed) {
  GenSpec g;
  g.shape = shape;
  g.dist = Dist::uniform;
  g.seed = seed;
  if (sparsity == "r50") g.sparsity = 0.5;
  if (sparsity == "r90") g.sparsity = 0.9;
  if (sparsity == "r99") g.sparsity = 0.99;
  if (sparsity == "lines90") g.zero_lines = 0.9;
  return g;
}

std::array<CoeffMatrix, 3> coefficients(TransformKind kind, const ext3& shape) {
  std::array<CoeffMatrix, 3> c;
  for (int a = 0; a < 3; ++a)
    c[a] = make_coefficients(kind, shape[a], Norm::ortho, false,
                             "triada-bench axis " + std::to_string(a + 1));
  return c;
}

EngineTiming time_engine(const Topology& topo, const std::array<CoeffMatrix, 3>& coeffs,
                         Executor executor, const std::vector<double>& input, int reps) {
  const size_t ns = topo.plan().stages.size();
  std::vector<Clock::time_point> stamps(ns);
  EngineOptions opt;
  opt.executor = executor;
  opt.mode = Mode::esop;
  opt.coefficients = [&](int axis) { return coeffs[axis - 1]; };
  opt.on_stage_done = [&](int s, std::uint64_t) { stamps[static_cast<size_t>(s)] = Clock::now(); };
  EngineTiming t;
  // The second register exists before the run, as the baseline's buffers do (touched once,
  // untimed); each run hands it back.
  std::vector<double> spare = spare_register<double>(topo);
  for (int r = 0; r < reps; ++r) {
    std::vector<double> in = input;  // the copy is not timed
    mpi::barrier(topo.world());
    const auto t0 = Clock::now();
    EngineResult<double> res = run_engine<double>(topo, opt, std::move(in), &spare);
    const double local = seconds_since(t0);
    const double global = mpi::max_of(topo.world(), local);
    if (global < t.seconds) {
      t.seconds = global;
      t.stage_seconds.assign(ns, 0.0);
      for (size_t s = 0; s < ns; ++s)
        t.stage_seconds[s] =
            std::chrono::duration<double>(stamps[s] - (s == 0 ? t0 : stamps[s - 1])).count();
      t.counters = res.counters;
    }
    t.out = std::move(res.out);
    t.out_box = res.out_box;
  }
  return t;
}

std::vector<double> gather_on_root(MPI_Comm comm, const ext3& shape, const Brick& box,
                                   const std::vector<double>& vals) {
  const int rank = mpi::rank(comm), size = mpi::size(comm);
  std::array<index_t, 6> mine{box.lo[0], box.lo[1], box.lo[2], box.hi[0], box.hi[1], box.hi[2]};
  if (vals.empty()) mine = {0, 0, 0, 0, 0, 0};
  // Significant on rank 0 only (elsewhere empty, and so are the counts).
  const std::vector<index_t> boxes = mpi::gather<index_t>(comm, mine, 0);
  std::vector<int> counts(boxes.size() / 6);
  for (size_t r = 0; r < counts.size(); ++r) {
    const Brick b{{boxes[6 * r], boxes[6 * r + 1], boxes[6 * r + 2]},
                  {boxes[6 * r + 3], boxes[6 * r + 4], boxes[6 * r + 5]}};
    counts[r] = static_cast<int>(b.count());
  }
  const std::vector<double> all = mpi::gatherv<double>(comm, vals, counts, 0);
  if (rank != 0) return {};
  const std::vector<int> displs = mpi::displacements(counts);
  std::vector<double> y(static_cast<size_t>(elements(shape)), 0.0);
  for (int r = 0; r < size; ++r) {
    const Brick b{{boxes[6 * r], boxes[6 * r + 1], boxes[6 * r + 2]},
                  {boxes[6 * r + 3], boxes[6 * r + 4], boxes[6 * r + 5]}};
    for (index_t i = b.lo[0]; i < b.hi[0]; ++i)
      for (index_t j = b.lo[1]; j < b.hi[1]; ++j)
        for (index_t l = b.lo[2]; l < b.hi[2]; ++l)
          y[static_cast<size_t>((i * shape[1] + j) * shape[2] + l)] =
              all[static_cast<size_t>(displs[r] + b.local_offset(i, j, l))];
  }
  return y;
}

double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  return scale > 0 ? diff / scale : diff;
}

}  // namespace triada::bench
