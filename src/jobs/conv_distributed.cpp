#include "jobs/conv_distributed.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "core/checked.hpp"
#include "counters/progress.hpp"
#include "mesh/mpi.hpp"
#include "mxu/tensor_unit.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;
__extension__ typedef unsigned __int128 u128;  // costs times ranks, without overflow

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool is_checked(const ConvLayer& l, const ConvConfig& cfg) {
  return cfg.verify || double(l.macs()) <= cfg.verify_budget;
}

// The rank that checks layer i: the first one holding units of it. The others hold later
// runs of the item order, so they reach the layer first and their blocks are waiting.
int checking_rank(const std::vector<std::vector<ConvPart>>& split, std::size_t layer) {
  for (std::size_t r = 0; r < split.size(); ++r)
    for (const ConvPart& p : split[r])
      if (p.layer == layer) return static_cast<int>(r);
  return 0;
}

int block_tag(std::size_t layer, bool is_explicit) {
  return static_cast<int>((2 * layer + (is_explicit ? 0 : 1)) % 32768);  // MPI_TAG_UB >= 32767
}

// One rank's state while it runs its parts.
struct RankRun {
  const std::vector<ConvLayer>& layers;
  const ConvConfig& cfg;
  const std::vector<double>& file_input;
  const std::vector<double>& file_weights;
  std::vector<std::vector<ConvPart>> split;
  MPI_Comm comm;
  int rank;
  std::vector<LayerOutcome> out;
  mpi::Requests sends;
  std::vector<std::vector<double>> sent;  // blocks in flight to a checking rank
  // Checks waiting for other ranks' blocks: done after this rank's last part, when every
  // rank is inside MPI calls (a sender's progress is then assured).
  struct Deferred {
    std::size_t layer;
    std::vector<double> own[2];
  };
  std::vector<Deferred> deferred;
  Progress* progress;            // rank 0's report of its parts (counters/progress.hpp)
  double cost_done, cost_total;  // this rank's parts, in split cost
};

// A part's cost: its units' split cost.
double part_cost(const RankRun& run, const ConvPart& p) {
  return static_cast<double>(
             conv_unit_split_cost(run.layers[p.layer], run.cfg.mxu, p.is_explicit)) *
         static_cast<double>(p.u1 - p.u0);
}

// After part `k` of this rank's parts: the progress line, weighted by cost.
void part_done(RankRun& run, std::size_t k) {
  const std::vector<ConvPart>& mine = run.split[static_cast<size_t>(run.rank)];
  const ConvPart& p = mine[k];
  run.cost_done += part_cost(run, p);
  const double fraction = run.cost_total > 0 ? run.cost_done / run.cost_total : 1.0;
  run.progress->update(fraction, [&] {
    return "layer " + std::to_string(p.layer + 1) + "/" + std::to_string(run.layers.size()) + " (" +
           run.layers[p.layer].name + ") " + (p.is_explicit ? "explicit" : "implicit") + ": part " +
           std::to_string(k + 1) + "/" + std::to_string(mine.size()) + " of rank " +
           std::to_string(run.rank);
  });
}

// Layer i's operands: the files' (--layer) or the random ones of stream 2 i, 2 i + 1.
std::vector<double> operand(const RankRun& run, std::size_t i, bool input) {
  const ConvLayer& l = run.layers[i];
  const std::vector<double>& file = input ? run.file_input : run.file_weights;
  if (!file.empty()) return file;
  return random_tensor(input ? l.ifmap_elements() : l.weight_elements(), run.cfg.seed,
                       2 * i + (input ? 0 : 1));
}

// Whether rank `rank` holds every unit of layer i.
bool holds_whole_layer(const RankRun& run, std::size_t i) {
  for (std::size_t r = 0; r < run.split.size(); ++r)
    for (const ConvPart& p : run.split[r])
      if (p.layer == i && static_cast<int>(r) != run.rank) return false;
  return true;
}

// Units [u0, u1) of one method on this rank's own unit: stats, wall time, output blocks.
std::vector<double> run_part(RankRun& run, const ConvPart& p, const std::vector<double>& x,
                             const std::vector<double>& w) {
  const ConvLayer& l = run.layers[p.layer];
  const ConvConfig& cfg = run.cfg;
  TensorUnit unit(cfg.mxu * cfg.mxu, cfg.latency, false, Mode::esop, cfg.cell_mode, cfg.executor);
  MemorySide memory(cfg.memory, cfg.mxu);
  unit.set_memory(&memory);
  const auto t0 = std::chrono::steady_clock::now();
  // Out of memory is the user's layer being too large (one rank alone: the run aborts).
  ConvResult r = out_of_memory_is_input_error(l.name + " (" + l.shape_string() + ")", [&] {
    return p.is_explicit ? explicit_conv_units(l, x, w, unit, p.u0, p.u1)
                         : implicit_conv_units(l, x, w, unit, p.u0, p.u1);
  });
  // The lowering pass reads the IFMap and writes the lowered matrix, once per layer.
  if (p.is_explicit && p.u0 == 0) memory.on_host_pass(l.ifmap_elements(), l.lowered_bytes() / 8);
  MethodOutcome& m = p.is_explicit ? run.out[p.layer].ex : run.out[p.layer].im;
  m.stats = r.stats;
  m.memory = memory.cost();
  m.wall_seconds = seconds_since(t0);
  return std::move(r.output);
}

// The whole output of one method of layer i, NHWC, from this rank's blocks and the other
// ranks' (received in rank order).
std::vector<double> assemble(RankRun& run, std::size_t i, bool is_explicit,
                             std::vector<double>& own) {
  const ConvLayer& l = run.layers[i];
  std::vector<double> y(static_cast<size_t>(l.ofmap_elements()), 0.0);
  std::vector<std::byte> buf;
  std::vector<double> blocks;
  for (std::size_t r = 0; r < run.split.size(); ++r)
    for (const ConvPart& p : run.split[r]) {
      if (p.layer != i || p.is_explicit != is_explicit) continue;
      if (static_cast<int>(r) == run.rank) {
        blocks.swap(own);
      } else {
        mpi::recv_bytes(run.comm, static_cast<int>(r), block_tag(i, is_explicit), buf);
        blocks.resize(buf.size() / sizeof(double));
        if (!buf.empty()) std::memcpy(blocks.data(), buf.data(), buf.size());
      }
      place_unit_blocks(l, run.cfg.mxu, p.u0, p.u1, blocks, y);
    }
  return y;
}

// The direct convolution of layer i and each method's error against it.
void check_layer(RankRun& run, std::size_t i, const std::vector<double>& x,
                 const std::vector<double>& w, std::vector<double> (&own)[2]) {
  LayerOutcome& o = run.out[i];
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<double> ref = direct_conv(run.layers[i], x, w);
  o.direct_seconds = seconds_since(t0);
  for (const bool is_explicit : {true, false}) {
    if (is_explicit ? !run.cfg.run_explicit : !run.cfg.run_implicit) continue;
    std::vector<double> y = assemble(run, i, is_explicit, own[is_explicit ? 0 : 1]);
    MethodOutcome& m = is_explicit ? o.ex : o.im;
    m.max_rel_error = max_relative_error(y, ref);
    if (run.cfg.keep_outputs) m.output = std::move(y);
  }
}

// This rank's parts of layer i (its parts from index p on), then its share of the check:
// the check itself on the checking rank (now, or deferred while other ranks' blocks are
// due), else its blocks sent there. Returns the index of the next layer's first part.
std::size_t run_layer(RankRun& run, std::size_t p) {
  const std::vector<ConvPart>& mine = run.split[static_cast<size_t>(run.rank)];
  const std::size_t i = mine[p].layer;
  const std::vector<double> x = operand(run, i, true), w = operand(run, i, false);
  std::vector<double> own[2];
  for (; p < mine.size() && mine[p].layer == i; ++p) {
    own[mine[p].is_explicit ? 0 : 1] = run_part(run, mine[p], x, w);
    part_done(run, p);
  }
  if (!run.out[i].checked) return p;
  const int host = checking_rank(run.split, i);
  if (host == run.rank && holds_whole_layer(run, i)) {
    check_layer(run, i, x, w, own);
  } else if (host == run.rank) {
    run.deferred.push_back({i, {std::move(own[0]), std::move(own[1])}});
  } else {
    for (const bool is_explicit : {true, false}) {
      std::vector<double>& blocks = own[is_explicit ? 0 : 1];
      if (blocks.empty()) continue;
      run.sent.push_back(std::move(blocks));
      run.sends.add(mpi::isend_bytes(run.comm, run.sent.back().data(),
                                     run.sent.back().size() * sizeof(double), host,
                                     block_tag(i, is_explicit)));
    }
  }
  return p;
}

// cfg.keep_outputs: every checked layer's outputs from its checking rank to rank 0, layer by
// layer in order on both sides (sends complete one at a time: no deadlock, little memory).
void outputs_to_rank0(RankRun& run) {
  for (std::size_t i = 0; i < run.layers.size(); ++i) {
    const int host = checking_rank(run.split, i);
    if (!run.out[i].checked || host == 0 || (run.rank != 0 && run.rank != host)) continue;
    for (MethodOutcome* m : {&run.out[i].ex, &run.out[i].im}) {
      if (m == &run.out[i].ex ? !run.cfg.run_explicit : !run.cfg.run_implicit) continue;
      const int tag = block_tag(i, m == &run.out[i].ex);
      if (run.rank == host) {
        mpi::isend_bytes(run.comm, m->output.data(), m->output.size() * sizeof(double), 0, tag)
            .wait();
        m->output = {};
      } else {
        m->output.resize(static_cast<std::size_t>(run.layers[i].ofmap_elements()));
        mpi::recv_bytes(run.comm, host, tag, m->output.data(), m->output.size() * sizeof(double));
      }
    }
  }
}

// One method's outcome on every rank: counters summed, peak memory, wall time and error
// the maxima (an error of -1 is "not checked here").
void reduce_outcomes(std::vector<LayerOutcome>& out, const ConvConfig& cfg, MPI_Comm comm) {
  std::vector<u64> sums, peaks;
  std::vector<double> maxima;
  for (LayerOutcome& o : out)
    for (MethodOutcome* m : {&o.ex, &o.im}) {
      const std::vector<u64> c = summed_counters(m->stats);
      sums.insert(sums.end(), c.begin(), c.end());
      const auto d = m->memory.values();
      sums.insert(sums.end(), d.begin(), d.end());
      peaks.push_back(m->stats.peak_extra_bytes);
      maxima.push_back(m->wall_seconds);
      maxima.push_back(m->max_rel_error ? *m->max_rel_error : -1.0);
    }
  for (const LayerOutcome& o : out) maxima.push_back(o.direct_seconds);
  mpi::allreduce_in_place(comm, std::span<u64>(sums), mpi::Op::sum);
  mpi::allreduce_in_place(comm, std::span<u64>(peaks), mpi::Op::max);
  mpi::allreduce_in_place(comm, std::span<double>(maxima), mpi::Op::max);
  const std::size_t n = summed_counters(ConvStats{}).size() + MemoryCost::kCounters;
  for (std::size_t k = 0; k < 2 * out.size(); ++k) {
    LayerOutcome& o = out[k / 2];
    MethodOutcome& m = k % 2 == 0 ? o.ex : o.im;
    m.ran = k % 2 == 0 ? cfg.run_explicit : cfg.run_implicit;
    const u64* first = sums.data() + k * n;
    const u64* d = first + (n - MemoryCost::kCounters);
    set_summed_counters(m.stats, std::vector<u64>(first, d));
    m.memory = MemoryCost::from_values(d);
    m.stats.peak_extra_bytes = peaks[k];
    m.wall_seconds = maxima[2 * k];
    m.max_rel_error.reset();
    if (maxima[2 * k + 1] >= 0) m.max_rel_error = maxima[2 * k + 1];
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].direct_seconds = maxima[4 * out.size() + i];
}

}  // namespace

std::uint64_t conv_unit_split_cost(const ConvLayer& l, index_t side, bool is_explicit) {
  const auto weights = static_cast<std::uint64_t>(side * round_up(l.K_group(), side));
  return conv_unit_dense_macs(l, side, is_explicit) + kUnitWeightCost * weights;
}

std::vector<std::vector<ConvPart>> split_conv_work(const std::vector<ConvLayer>& layers,
                                                   index_t side, bool run_explicit,
                                                   bool run_implicit, int ranks) {
  std::vector<std::vector<ConvPart>> split(static_cast<size_t>(std::max(ranks, 1)));
  u128 total = 0, before = 0;
  for (const bool pass : {false, true})  // the total first, then the assignment
    for (std::size_t i = 0; i < layers.size(); ++i)
      for (const bool is_explicit : {true, false}) {
        if (is_explicit ? !run_explicit : !run_implicit) continue;
        const index_t units = conv_work_units(layers[i], side);
        const u128 cost = conv_unit_split_cost(layers[i], side, is_explicit);
        if (!pass) {
          total += cost * static_cast<u128>(units);
          continue;
        }
        for (index_t v = 0; v < units; ++v, before += cost) {
          const u128 r = (2 * before + cost) * split.size() / (2 * total);
          std::vector<ConvPart>& parts = split[std::min(static_cast<size_t>(r), split.size() - 1)];
          if (parts.empty() || parts.back().layer != i || parts.back().is_explicit != is_explicit)
            parts.push_back({i, is_explicit, v, v});
          parts.back().u1 = v + 1;
        }
      }
  return split;
}

std::vector<LayerOutcome> run_conv_distributed(const std::vector<ConvLayer>& layers,
                                               const ConvConfig& cfg,
                                               const std::vector<double>& file_input,
                                               const std::vector<double>& file_weights,
                                               MPI_Comm comm) {
  Progress progress("triada-conv", cfg.progress, mpi::rank(comm) == 0);
  RankRun run{layers,
              cfg,
              file_input,
              file_weights,
              split_conv_work(layers, cfg.mxu, cfg.run_explicit, cfg.run_implicit, mpi::size(comm)),
              comm,
              mpi::rank(comm),
              std::vector<LayerOutcome>(layers.size()),
              {},
              {},
              {},
              &progress,
              0.0,
              0.0};
  for (std::size_t i = 0; i < layers.size(); ++i) run.out[i].checked = is_checked(layers[i], cfg);
  const std::vector<ConvPart>& mine = run.split[static_cast<size_t>(run.rank)];
  for (const ConvPart& part : mine) run.cost_total += part_cost(run, part);
  for (std::size_t p = 0; p < mine.size();) p = run_layer(run, p);
  progress.finish();
  mpi::sleepy_barrier(comm);  // ranks done early wait asleep, not spinning
  for (RankRun::Deferred& d : run.deferred)
    check_layer(run, d.layer, operand(run, d.layer, true), operand(run, d.layer, false), d.own);
  run.sends.wait_all();
  mpi::sleepy_barrier(comm);
  if (cfg.keep_outputs) outputs_to_rank0(run);
  reduce_outcomes(run.out, cfg, comm);
  for (std::size_t i = 0; i < layers.size(); ++i) {  // the same on every rank from here
    run.out[i].ex.stats.method = "explicit";
    run.out[i].im.stats.method = "implicit";
    for (ConvStats* s : {&run.out[i].ex.stats, &run.out[i].im.stats}) s->side = cfg.mxu;
    run.out[i].im.stats.packed_taps = implicit_packed_taps(layers[i], cfg.mxu);
  }
  return run.out;
}

}  // namespace triada
