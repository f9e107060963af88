#include "geometry/memory_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>

#include "core/checked.hpp"
#include "core/error.hpp"

namespace triada {

namespace {

using u64 = std::uint64_t;

// Open MPI's state per posted message (request, envelope, eager copies of small ones).
constexpr u64 kPerMessage = 512;
// Widest register block of the fused kernels (AVX-512: 14 x 16).
constexpr u64 kBlock = 16;

// Checked arithmetic naming the input.
struct Sizes {
  const std::string& what;
  u64 mul(u64 a, u64 b) const { return checked_mul(a, b, what); }
  u64 add(u64 a, u64 b) const { return checked_add(a, b, what); }
};

u64 count_in(const Brick& cells, const ext3& shape) {
  return static_cast<u64>(cells.intersect(whole(shape)).count());
}

// Elements the engine's two registers hold at their peak: the input brick and a spare
// sized for the largest stage result; they swap after each stage, and a stage whose
// result outgrows the free register's capacity reallocates it while both are held
// (engine/reference/, engine/fused/fused_stage.cpp). --check copies the input and keeps the first
// result through a second run.
u64 register_elements(const Plan& plan, const Brick& cells, bool check, const Sizes& s) {
  const u64 in = count_in(cells, plan.in_shape);
  u64 most = 0;
  for (const StagePlan& st : plan.stages) most = std::max(most, count_in(cells, st.out_shape));
  u64 cap[2] = {in, most};
  u64 peak = s.add(in, most);
  int v = 0;
  for (const StagePlan& st : plan.stages) {
    const int w = 1 - v;
    const u64 need = count_in(cells, st.out_shape);
    if (cap[w] < need) {
      peak = std::max(peak, s.add(s.add(cap[v], cap[w]), need));
      cap[w] = need;
    }
    v = w;
  }
  return check ? s.add(peak, std::max(in, cap[v])) : peak;
}

// Scratch of one stage on a brick (fused executor): the brick's coefficient rows, their
// packed copies, the axis-3 packing arrays, per-line flags and, off one node, two batch
// buffers of received planes (dense and compressed).
// Whether the line along axis a (0-based) of brick `rank` lies on one node, so that its
// planes travel through a shared window (Topology's test).
bool line_on_node(const Plan& plan, int rank, int a, const MemoryModelOptions& opt) {
  if (opt.node_of_rank.empty()) return opt.one_node;
  auto coords = plan.brick_coords(rank);
  const std::size_t mine = static_cast<std::size_t>(rank);
  for (int c = 0; c < plan.ranks.grid[a]; ++c) {
    coords[a] = c;
    const std::size_t member = static_cast<std::size_t>(plan.brick_rank(coords));
    if (member >= opt.node_of_rank.size() || opt.node_of_rank[member] != opt.node_of_rank[mine])
      return false;
  }
  return true;
}

u64 fused_scratch(const Plan& plan, const StagePlan& sp, int rank, const Brick& cells,
                  const MemoryModelOptions& opt, const Sizes& s) {
  const int a = sp.axis - 1;
  const Brick vb = cells.intersect(whole(sp.in_shape)), wb = cells.intersect(whole(sp.out_shape));
  const u64 T = opt.element_bytes, N = static_cast<u64>(sp.n());
  const u64 wext = static_cast<u64>(wb.extent(a)), vext = static_cast<u64>(vb.extent(a));
  const u64 L =
      s.mul(static_cast<u64>(vb.extent((a + 1) % 3)), static_cast<u64>(vb.extent((a + 2) % 3)));
  const u64 P = std::max(N, vext);
  u64 b = s.mul(s.mul(N, wext), T);                     // coefficient rows
  b = s.add(b, s.mul(s.mul(2 * N, wext + kBlock), 8));  // packed A / B panels
  b = s.add(b, s.mul(P, 8 * (3 * kBlock + 4) + 12 + 8 * (wext / kBlock + 1)));  // axis 3
  b = s.add(b, s.add(s.mul(N, 64), s.mul(wext, 48)));  // per-plane arrays, message
  b = s.add(b, s.mul(L, plan.folded() ? 9 : 1));       // zero lines, folded lines
  if ((!line_on_node(plan, rank, a, opt) || !opt.shared_windows) && plan.ranks.grid[a] > 1) {
    const u64 budget = std::max<u64>(u64{2} << 20, s.mul(static_cast<u64>(vb.count()), T) / 4);
    const u64 plane = s.mul(L, T);
    const u64 batch = std::min(s.mul(N, plane), std::max(budget, plane));
    b = s.add(b, s.mul(batch, 4));
  }
  return b;
}

// Scratch of one stage on a brick (reference executor): a Cell per cell of the brick's
// union of V and W, the busiest-cell table, per-plane and per-line bus values.
u64 reference_scratch(const StagePlan& sp, const Brick& cells, const MemoryModelOptions& opt,
                      const Sizes& s) {
  const int a = sp.axis - 1;
  ext3 u = sp.in_shape;
  u[a] = std::max(sp.n(), sp.k());
  const Brick ub = cells.intersect(whole(u));
  const u64 planes = static_cast<u64>(ub.extent(a)), n = static_cast<u64>(ub.count());
  const u64 lines = planes > 0 ? n / planes : 0;
  u64 b = s.mul(n, opt.cell_bytes + 8);
  b = s.add(b, s.mul(lines, 3 * opt.element_bytes + 48));
  return s.add(b, s.mul(planes, opt.element_bytes + 32));
}

// The actuator of a stage on its host: the matrix as built (gemt --inverse holds three
// at once), its copy in the element type, and the whole stream of messages, posted at
// once (one per step and grid coordinate along the axis, entries for its planes: the
// bricks sharing a coordinate take the same messages), and the sends (a few per brick).
u64 actuator_bytes(const Plan& plan, const StagePlan& sp, const MemoryModelOptions& opt,
                   const Sizes& s) {
  const u64 N = static_cast<u64>(sp.n()), K = static_cast<u64>(sp.k());
  const index_t width = std::max(sp.n(), sp.k());
  const u64 NK = s.mul(N, K);
  const u64 built = s.mul(s.mul(NK, sizeof(cplx)), static_cast<u64>(opt.coeff_copies));
  const u64 held = s.add(s.mul(NK, sizeof(cplx) + opt.element_bytes), s.mul(N, 16));
  u64 per_step = 0;
  for (int c = 0; c < plan.ranks.grid[sp.axis - 1]; ++c) {
    const Range rg = plan.cell_range(sp.axis, c);
    const u64 entries = static_cast<u64>(std::max<index_t>(0, std::min(rg.hi, width) - rg.lo));
    per_step = s.add(per_step, s.add(16, s.mul(entries, 16 + opt.element_bytes)));
  }
  const u64 sends = s.mul(static_cast<u64>(plan.ranks.n_bricks), kPerMessage);
  return s.add(s.add(std::max(built, held), s.mul(per_step, N + 1)), sends);
}

// Shared windows (Topology): on each axis whose lines hold >= 2 bricks, every member
// has a segment for its V brick of the stage along that axis plus packing scratch. The
// scratch is touched at setup; the V segments only where a stage along the axis reads
// planes in place whatever its data (complex elements, axis 3, folded lines), else the
// binary64 kernels pack through the scratch and never map them. Returns what a run maps
// on top (V segments read in place by another cell mode).
u64 add_windows(const Plan& plan, int rank, const MemoryModelOptions& opt, const Sizes& s,
                MemoryPrediction& m) {
  if (!opt.shared_windows) return 0;
  const auto me = plan.brick_coords(rank);
  u64 in_run = 0;
  for (const StagePlan& sp : plan.stages) {
    const int a = sp.axis - 1;
    if (plan.ranks.grid[a] < 2 || !line_on_node(plan, rank, a, opt)) continue;
    bool touch_v = opt.element_bytes > sizeof(double) || sp.axis == 3;
    for (int d = 0; d < 3; ++d)
      if (d != a && plan.fold[d] > 1) touch_v = true;
    for (int c = 0; c < plan.ranks.grid[a]; ++c) {
      auto coords = me;
      coords[a] = c;
      const Brick cells = plan.brick_cells(plan.brick_rank(coords));
      const u64 v_seg = (s.mul(count_in(cells, sp.in_shape), opt.element_bytes) + 63) / 64 * 64;
      const u64 seg = s.add(v_seg, kWindowScratchBytes);
      m.window_mapped = s.add(m.window_mapped, touch_v ? seg : kWindowScratchBytes);
      if (!touch_v && !opt.binary64_kernels) in_run = s.add(in_run, v_seg);
      if (c == me[a]) m.window_own = s.add(m.window_own, seg);
    }
  }
  return in_run;
}

// What --dry-run expects a rank to grow by beyond the counted buffers (kExpected*Bytes).
u64 expected_allowance(const Plan& plan, int rank, const MemoryModelOptions& opt) {
  if (plan.ranks.world_size == 1) return kExpectedOneRankBytes;
  if (rank >= plan.ranks.n_bricks)
    return kExpectedActuatorBytes + (opt.matrices_from_file ? kExpectedIoBytes : 0);
  const Brick cells = plan.brick_cells(rank);
  const u64 brick =
      std::max(count_in(cells, plan.in_shape), count_in(cells, plan.out_shape)) * opt.element_bytes;
  const u64 line = std::min(kExpectedLineBytes, kExpectedLineBaseBytes + brick);
  u64 b = rank == 0 && opt.hdf5_open_on_rank0 ? 0 : kExpectedIoBytes;
  for (int a = 0; a < 3; ++a)
    if (plan.ranks.grid[a] > 1) b += line;
  return b;
}

}  // namespace

MemoryPrediction predict_memory(const Plan& plan, int rank, const MemoryModelOptions& opt,
                                const std::string& what) {
  const Sizes s{what};
  MemoryPrediction m;
  u64 run = kMemoryModelFixedBytes;
  // Per-step counter records, reduced over ranks (engine.cpp reduce_records).
  u64 steps = 0;
  for (const StagePlan& sp : plan.stages) steps = s.add(steps, static_cast<u64>(sp.n()));
  run = s.add(run, s.mul(steps, 256));
  if (rank < plan.ranks.n_bricks) {
    const Brick cells = plan.brick_cells(rank);
    u64 elements = register_elements(plan, cells, opt.check, s);
    if (opt.initial) elements = s.add(elements, count_in(cells, plan.out_shape));
    m.registers = s.mul(elements, opt.element_bytes);
    run = s.add(run, m.registers);
    u64 scratch = 0;
    for (const StagePlan& sp : plan.stages)
      scratch = std::max(scratch, opt.reference ? reference_scratch(sp, cells, opt, s)
                                                : fused_scratch(plan, sp, rank, cells, opt, s));
    run = s.add(run, scratch);
    run = s.add(run, add_windows(plan, rank, opt, s, m));
  }
  u64 stream = 0;
  for (const StagePlan& sp : plan.stages)
    if (plan.ranks.actuator_rank[sp.axis - 1] == rank)
      stream = std::max(stream, actuator_bytes(plan, sp, opt, s));
  m.run = s.add(run, stream);
  m.expected = m.run - kMemoryModelFixedBytes + expected_allowance(plan, rank, opt);
  return m;
}

namespace {

// "key:  value kB" from /proc/meminfo, in bytes; 0 if absent.
u64 meminfo_bytes(const char* key) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  u64 v = 0;
  std::string unit;
  while (f >> k >> v) {
    std::getline(f, unit);
    if (k == std::string(key) + ":") return v * 1024;
  }
  return 0;
}

// The first number in a file ("max" or a missing file: nothing).
bool read_number(const std::string& path, u64& out) {
  std::ifstream f(path);
  return static_cast<bool>(f >> out);
}

// "key value" from a cgroup memory.stat.
u64 stat_value(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::string k;
  u64 v = 0;
  while (f >> k >> v)
    if (k == key) return v;
  return 0;
}

// Room left under the cgroup limits of this process and its ancestors (v2, then v1);
// usage excludes inactive page cache, which the kernel reclaims before it kills.
u64 cgroup_room() {
  u64 room = std::numeric_limits<u64>::max();
  std::ifstream f("/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto c1 = line.find(':'), c2 = line.find(':', c1 + 1);
    if (c1 == std::string::npos || c2 == std::string::npos) continue;
    const std::string ctrl = line.substr(c1 + 1, c2 - c1 - 1);
    std::string rel = line.substr(c2 + 1);
    const bool v2 = ctrl.empty();
    if (!v2 && (',' + ctrl + ',').find(",memory,") == std::string::npos) continue;
    const std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    for (;;) {
      const std::string dir = root + (rel == "/" ? "" : rel);
      u64 limit = 0, usage = 0;
      const bool ok = v2 ? read_number(dir + "/memory.max", limit) &&
                               read_number(dir + "/memory.current", usage)
                         : read_number(dir + "/memory.limit_in_bytes", limit) &&
                               read_number(dir + "/memory.usage_in_bytes", usage);
      if (ok) {
        const u64 cache =
            stat_value(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file");
        usage -= std::min(usage, cache);
        room = std::min(room, limit > usage ? limit - usage : 0);
      }
      if (rel.empty() || rel == "/") break;
      const auto slash = rel.rfind('/');
      rel = slash == 0 || slash == std::string::npos ? "/" : rel.substr(0, slash);
    }
  }
  return room;
}

}  // namespace

AvailableMemory available_memory() {
  if (const char* env = std::getenv("TRIADA_MEMORY_LIMIT")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (*env == '\0' || *end != '\0')
      throw config_error(std::string("TRIADA_MEMORY_LIMIT: expected a number of bytes, got '") +
                         env + "'");
    return {static_cast<u64>(v), "TRIADA_MEMORY_LIMIT"};
  }
  AvailableMemory a{meminfo_bytes("MemAvailable"), "MemAvailable"};
  const u64 room = cgroup_room();
  if (room < a.bytes) a = {room, "cgroup limit"};
  return a;
}

std::string mib(double bytes) {
  const double v = bytes / 1048576.0;
  const char* f = v >= 10 ? "%.1f" : v > 0 ? "%#.3g" : "0";
  char buf[48];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string format_bytes(double bytes) {
  return mib(bytes) + " MiB";
}
std::string format_bytes(u64 bytes) {
  return format_bytes(static_cast<double>(bytes));
}

void require_memory(u64 bytes, const std::string& what) {
  const AvailableMemory a = available_memory();
  if (bytes > a.bytes)
    throw input_error(what + ": needs " + format_bytes(bytes) + ", " + format_bytes(a.bytes) +
                      " available (" + a.source + ")");
}

}  // namespace triada
